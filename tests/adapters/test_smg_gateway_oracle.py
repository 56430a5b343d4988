"""`smg:` readings equal smg's gateway driven over HTTP with no parsebridge code in the loop.

The oracle launches its own ``python -m smg launch`` per parser configuration
and talks to it with `http.client`; the only shared piece is the scripted
worker (the engine: it answers with the transcript's token ids, all steps
queued before the request, no ticks, ``n=1``). On every bundled transcript of
every family smg names, at one token (the suite's ``token`` chunking) and
three characters per chunk, the `smg:` stream's accumulated reading (content,
reasoning, each call's name and arguments text) equals what the gateway
streamed, and the one-shot reading equals its non-streamed message; an output
with multi-byte characters is also fed as token ids one token a step (a
character's bytes split across tokens), and a transcript whose prompt opened
reasoning brings that prompt (``<think>``) to both. So the
tick that attributes deltas to feeds changes nothing the gateway says. At one
token per chunk, what `OutputProcessor` with the same `smg:` spec(s) streams
(its chat-completion chunks, assembled as a client does) equals it too.

With a real vocabulary (`_real_vocab`: Qwen's, DeepSeek's, where their PyPI
package is installed), the gateway reads that vocabulary's model folder and
the worker streams the real token ids, some of which end inside a character:
one output per vocabulary (reasoning, then content and a call) after a prompt
that opens reasoning, through one gateway with both parsers, read one-shot
(one token a step, as the `smg:` engine steps it) and streamed at one and
three tokens a step, by `smg:` with the same folder (its `tokenizer` option)
and by the plain gateway.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import partial_json_parser
import pytest
from _real_vocab import OUTPUTS, VOCABULARIES, real_folder, split_characters
from _real_vocab import steps as real_steps

from _building import build_or_skip
from parsebridge import OutputProcessor, get_pipeline, get_reasoning_parser, get_tool_parser
from parsebridge.adapters._served.parsers import ParserPair
from parsebridge.adapters.registry import get_backend
from parsebridge.conformance.chunking import parse_chunking
from parsebridge.conformance.runner import target_for
from parsebridge.conformance.transcripts import bundled_transcripts
from parsebridge.lifecycle import free_port
from parsebridge.lifecycle.launchers import WATCH
from parsebridge.protocol.errors import ParserUnsupportedError

pytestmark = [pytest.mark.framework, pytest.mark.timeout(900)]

if not get_backend("smg").is_available():
    pytest.skip(f"smg is not installed: {get_backend('smg').unavailable_reason()}", allow_module_level=True)

from parsebridge.adapters.smg import _gateway  # noqa: E402  (after the skip)

PLACEHOLDER = [
    {"type": "function", "function": {"name": "parsebridge_any_tool", "parameters": {"type": "object"}}}
]
CHUNKINGS = ("token", "char-3")


def _cases() -> list[Any]:
    out = []
    for t in bundled_transcripts():
        target = target_for(t, "smg")
        if target.unsupported is None:
            out.append(pytest.param(t, target, id=t.id))
    return out


class OwnGateways:
    """Gateways this test starts itself (``python -m smg launch``), one per configuration."""

    def __init__(self) -> None:
        self.rt = _gateway.runtime()  # the worker: the engine the gateway talks to
        self.procs: dict[tuple[Any, ...], tuple[subprocess.Popen[bytes], int]] = {}

    def port(self, tool: str | None, reasoning: str | None, symphony: bool, folder: Any = None) -> int:
        """The gateway of a parser configuration reading `folder` (None: the approximate vocabulary),
        whose worker serves that folder."""
        model_dir = folder.path if folder is not None else self.rt.model_dir
        key = (tool, reasoning, symphony, model_dir)
        if key in self.procs:
            return self.procs[key][1]
        port = free_port()
        # smg's own CLI, run by the backend's launcher only so that a killed test run leaves no gateway.
        watch = str(WATCH)
        args = [sys.executable, "-P", watch, sys.executable, "-m", "smg", "launch"]
        args += ["--host", "127.0.0.1", "--port", str(port)]
        args += ["--worker-urls", f"grpc://127.0.0.1:{self.rt.worker_for(folder).port}"]
        args += ["--tokenizer-path", str(model_dir), "--model-path", str(model_dir)]
        args += ["--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port(avoid=(port,)))]
        args += ["--tool-call-parser", tool] if tool else []
        args += ["--reasoning-parser", reasoning] if reasoning else []
        args += ["--parser", "symphony"] if symphony else []
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        self.procs[key] = (proc, port)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"gateway {key} exited"
            try:
                post(port, {"model": "parsebridge", "messages": [{"role": "user", "content": "ping"}]})
                return port
            except (OSError, http.client.HTTPException, AssertionError):
                time.sleep(0.05)
        raise AssertionError(f"gateway {key} did not answer")

    def close(self) -> None:
        for proc, _ in self.procs.values():
            proc.kill()
            proc.wait(10)
            if proc.stdin is not None:
                proc.stdin.close()


def post(port: int, body: dict[str, Any]) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200, resp.read()
    return resp


@pytest.fixture(scope="module")
def gateways() -> Iterator[OwnGateways]:
    own = OwnGateways()
    yield own
    own.close()


def _request(
    t: Any, steps: list[list[int]] | None, stream: bool, tool: bool, prompt: str | None, folder: Any = None
) -> tuple[Any, dict[str, Any]]:
    rt = _gateway.runtime()
    script = rt.worker_for(folder).board.open()
    for step in steps if steps is not None else [rt.folder.encode(t.output)]:
        script.put(step)
    script.end()
    text = script.key + (f"\n{prompt}" if prompt else "")
    body: dict[str, Any] = {
        "model": "parsebridge",
        "messages": [{"role": "user", "content": text}],
        "stream": stream,
    }
    if tool:
        tools = [x if "function" in x else {"type": "function", "function": x} for x in t.tools]
        body["tools"] = tools or PLACEHOLDER
    return script, body


def oracle_oneshot(
    port: int,
    t: Any,
    tool: bool,
    prompt: str | None,
    steps: list[list[int]] | None = None,
    folder: Any = None,
) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    script, body = _request(t, steps, False, tool, prompt, folder)
    msg = json.loads(post(port, body).read())["choices"][0]["message"]
    script.cancel()
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or ()]
    return msg.get("reasoning_content") or None, msg.get("content") or None, calls


def oracle_stream(
    port: int, t: Any, steps: list[list[int]], tool: bool, prompt: str | None, folder: Any = None
) -> tuple[str, str, list[tuple[str, str]]]:
    script, body = _request(t, steps, True, tool, prompt, folder)
    resp = post(port, body)
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for line in resp:
        if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
            continue
        for choice in json.loads(line[5:]).get("choices", ()):
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for c in delta.get("tool_calls") or ():
                name, args = calls.get(c["index"], ("", ""))
                fn = c.get("function") or {}
                calls[c["index"]] = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
    script.cancel()
    return "".join(reasoning), "".join(content), [calls[i] for i in sorted(calls)]


def _subject(t: Any, target: Any) -> Any:
    if target.reasoning_spec and target.tool_spec:
        return get_pipeline(target.reasoning_spec, target.tool_spec, tools=t.tools or None)
    if target.tool_spec:
        return get_tool_parser(target.tool_spec, t.tools or None)
    return get_reasoning_parser(target.reasoning_spec)


def _served(
    t: Any, target: Any, chunks: list[tuple[str, Any]], prompt: str | None
) -> tuple[str, str, list[tuple[str, str]]]:
    """What `OutputProcessor` with the target's `smg:` spec(s) streams, assembled as a client does
    (the tools the gateway request declares: the transcript's, or the placeholder)."""
    tools = [x if "function" in x else {"type": "function", "function": x} for x in t.tools] or PLACEHOLDER
    processor = OutputProcessor(target.reasoning_spec, target.tool_spec, tools=tools)
    stream = processor.stream(**({"prompt": prompt} if prompt else {}))  # the request's prompt
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for chunk in [c for step, _ in chunks for c in stream.feed(step)] + list(stream.finish()):
        for choice in chunk.get("choices", ()):
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for c in delta.get("tool_calls") or ():
                name, args = calls.get(c.get("index", 0), ("", ""))
                fn = c.get("function") or {}
                calls[c.get("index", 0)] = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
    return "".join(reasoning), "".join(content), [calls[i] for i in sorted(calls)]


def _config_of(target: Any) -> ParserPair:
    def name(spec: str | None) -> str | None:
        return spec.split(":", 1)[1] if spec else None

    return ParserPair(name(target.reasoning_spec), name(target.tool_spec))


def _norm(calls: list[tuple[str, str]], *, streamed: bool = False) -> list[tuple[str, str]]:
    """Arguments compared as JSON values where they are JSON: one-shot readings are parsed objects,
    and smg's minimax_m2 parser orders an object's keys differently from run to run. Empty
    arguments text is ``{}`` (a `ToolCall` holds arguments as an object).

    Streamed arguments that stop short of their closing brackets are compared as the value they
    open (`streamed`): smg's minimax_m2 gateway (1.9 to 1.11) leaves out the last brace when its
    random key order puts a nested object last, in its own streams as in `smg:`'s, so whether the
    brace comes depends on the run, not on the bridge."""

    def one(text: str) -> str:
        text = text or "{}"
        if _is_json(text):
            return json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True)
        if streamed and text.startswith("{"):
            try:
                value = partial_json_parser.loads(text)
            except Exception:  # not a JSON prefix: compared as text
                return text
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        return text

    return [(n, one(a)) for n, a in calls]


def _streamed(deltas: list[Any]) -> tuple[str, str, list[tuple[str, str]]]:
    """A stream's deltas assembled as a client does: arguments are the text the deltas sent, not
    the accumulator's reading of it (which would complete any JSON a stream left open, where
    `_norm` completes only an unclosed object whose prefix is valid)."""
    reasoning, content, calls = [], [], {}  # type: ignore[var-annotated]
    for delta in deltas:
        reasoning.append(delta.reasoning)
        content.append(delta.content)
        for tc in delta.tool_calls:
            name, args = calls.get(tc.index, ("", ""))
            calls[tc.index] = (name + (tc.name or ""), args + tc.arguments)
    return "".join(reasoning), "".join(content), _norm([calls[i] for i in sorted(calls)], streamed=True)


@pytest.mark.parametrize(("t", "target"), _cases())
def test_smg_readings_equal_the_gateway(gateways: OwnGateways, t: Any, target: Any) -> None:
    subject = build_or_skip(
        "smg", f"{target.tool_spec or target.reasoning_spec}", lambda: _subject(t, target)
    )
    reasoning_name, tool_name = config = _config_of(target)
    tool = tool_name is not None
    started = True if t.reasoning_started_in_prompt else None
    only_tool = tool and not reasoning_name
    try:  # the gateway starts on the first parse
        r = subject.parse(t.output) if only_tool else subject.parse(t.output, reasoning_started=started)
    except Exception as exc:  # smg refuses the pairing (e.g. a Symphony-only name with another table)
        if isinstance(exc, ParserUnsupportedError) or isinstance(exc.__cause__, ParserUnsupportedError):
            pytest.skip(f"smg refuses this configuration: {exc}")
        raise
    rt = _gateway.runtime()
    symphony = (config, rt.model_dir) in rt._symphony
    port = gateways.port(tool_name, reasoning_name, symphony)
    prompt = "<think>" if started and reasoning_name else None  # what the smg: engine's request brings
    want = oracle_oneshot(port, t, tool, prompt)
    got_calls = _norm([(c.name, c.arguments_json) for c in getattr(r, "tool_calls", [])])
    assert (getattr(r, "reasoning", None), r.content, got_calls) == (want[0], want[1], _norm(want[2]))

    feeds = {
        name: [(c.text, None) for c in parse_chunking(name).split(t.output, None, t.token_texts)]
        for name in CHUNKINGS
    }
    if any(ord(ch) > 127 for ch in t.output):  # token ids, one a step: a character's bytes split
        feeds["ids"] = [(c.text, list(c.token_ids)) for c in rt.folder.chunks(t.output)]
    for name, chunks in feeds.items():
        stream = subject.stream() if only_tool else subject.stream(reasoning_started=started)
        got = _streamed([*(stream.feed(chunk, ids) for chunk, ids in chunks), stream.flush()])
        steps = [ids if ids is not None else rt.folder.encode(chunk) for chunk, ids in chunks]
        reasoning, content, calls = oracle_stream(port, t, [s for s in steps if s], tool, prompt)
        assert got == (reasoning, content, _norm(calls, streamed=True)), name
        if name == "token":  # OutputProcessor with the smg: spec(s) streams the same
            served = _served(t, target, chunks, prompt)
            want_stream = (reasoning, content, _norm(calls, streamed=True))
            assert (served[0], served[1], _norm(served[2], streamed=True)) == want_stream, "served"


@pytest.mark.parametrize("vocab", sorted(VOCABULARIES))
def test_smg_readings_equal_the_gateway_with_a_real_vocabulary(
    gateways: OwnGateways, vocab: str, tmp_path: Any
) -> None:
    """One gateway with both parsers (`_real_vocab.OUTPUTS`) on the real vocabulary's folder."""
    folder, o = real_folder(vocab, tmp_path), OUTPUTS[vocab]
    assert split_characters(folder, o.text) >= 3, o.id  # the vocabulary cuts characters here
    pair = ParserPair(*o.names["smg"])
    subject = get_pipeline(f"smg:{pair.reasoning}", f"smg:{pair.tool}", tools=list(o.tools), tokenizer=folder)
    ids = folder.encode(o.text)
    r = subject.parse(o.text, token_ids=ids, prompt=o.prompt)
    port = gateways.port(pair.tool, pair.reasoning, (pair, folder.path) in gateways.rt._symphony, folder)
    want = oracle_oneshot(port, o, True, o.prompt, [[i] for i in ids], folder)  # one token a step
    differ = []
    got_calls = _norm([(c.name, c.arguments_json) for c in r.tool_calls])
    if (r.reasoning, r.content, got_calls) != (want[0], want[1], _norm(want[2])):
        differ.append(("oneshot", r, want))
    for per in (1, 3):
        chunks = real_steps(folder, o.text, per)
        stream = subject.stream(prompt=o.prompt)
        got = _streamed([*(stream.feed(chunk, ids) for chunk, ids in chunks), stream.flush()])
        reasoning, content, calls = oracle_stream(port, o, [s for _, s in chunks], True, o.prompt, folder)
        if got != (reasoning, content, _norm(calls, streamed=True)):
            differ.append((f"token-{per}", got, (reasoning, content, calls)))
    assert not differ, f"{len(differ)} readings differ: {differ}"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True

"""`dynamo:` readings equal Dynamo's own frontend driven over HTTP with no parsebridge code (issue 37).

`_dynamo_reference.py` runs in its own process: Dynamo, the model folder
`dynamo:` registers (files only), a plain engine that yields every step back
to back, and plain HTTP requests (``n=1``, no fences). Here the same outputs
go through `dynamo:` parsers. On every bundled transcript of every family
Dynamo names, the one-shot parse equals the non-streamed answer with the
engine stepping one token at a time, and what a `dynamo:` stream sends (its
deltas, assembled as a client does) equals what the plain stream sends, at
one token and at three characters per chunk, and, for outputs with
multi-byte characters, fed token ids one token a step (a character's bytes
split across tokens); at one token, so does what `OutputProcessor` with the
`dynamo:` spec streams. Reasoning transcripts whose prompt opened reasoning,
and a few outputs after a prompt that ends with an open, a closed or no
``<think>``, bring that prompt to both.

With a real vocabulary (`_real_vocab`: Qwen's, DeepSeek's, where their PyPI
package is installed), the frontend's model folder is that vocabulary's and
the engine steps the real token ids, some of which end inside a character:
one output per vocabulary (reasoning, then content and a call) after a prompt
that opens reasoning, through one model with both parsers, read one-shot and
streamed at one and three tokens a step, by `dynamo:` with the same folder
(its `tokenizer` option) and by the plain frontend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _real_vocab import OUTPUTS, VOCABULARIES, real_folder, split_characters, steps

import parsebridge as pb
from parsebridge.adapters import get_backend
from parsebridge.adapters._served.model_folder import model_folder
from parsebridge.adapters.dynamo._frontend import all_markers
from parsebridge.conformance.chunking import parse_chunking
from parsebridge.conformance.transcripts import bundled_transcripts
from parsebridge.protocol import ParserUnsupportedError, family_table

pytestmark = pytest.mark.framework

_reason = get_backend("dynamo").unavailable_reason()
if _reason is not None:
    pytest.skip(f"dynamo is not installed: {_reason}", allow_module_level=True)

CHUNKINGS = ("token", "char-3")
HERE = Path(__file__).parent
#: The frontend's model folder (its approximate vocabulary: one token per byte, markers whole).
FOLDER = model_folder(all_markers())
#: Outputs read after each generation prompt (None: a plain chat prompt), by Dynamo's qwen3/glm45.
PROMPTED = ("Plan é😀.</think>Checking.", "Plan.\n</think>\n\nDone ```é```.")
PROMPTS = ("<think>\n", "<think></think>", None)


def _case(t_id: str, kind: str, own: str, text: str, tools: Any, prompt: str | None) -> dict[str, Any]:
    """One reference case: the engine's steps (token ids) per reading, and what our streams are fed."""
    feeds = {c: [(ch.text, None) for ch in parse_chunking(c).split(text)] for c in CHUNKINGS}
    if any(ord(ch) > 127 for ch in text):  # a character's bytes split across tokens, one token a step
        feeds["ids"] = [(ch.text, list(ch.token_ids)) for ch in FOLDER.chunks(text)]
    streams = {
        name: [ids if ids is not None else FOLDER.encode(chunk) for chunk, ids in chunks]
        for name, chunks in feeds.items()
    }
    model = f"{kind[0]}-{own}".replace("_", "-")
    oneshot = [[i] for i in FOLDER.encode(text)]
    return {
        "id": t_id,
        "model": model,
        "tools": tools,
        "text": text,
        "oneshot": oneshot,
        "streams": streams,
    } | {
        "kind": kind,
        "own": own,
        "prompt": prompt,
        "feeds": feeds,
    }


def _cases() -> tuple[dict[str, list[str | None]], list[dict[str, Any]], dict[str, Any]]:
    """The reference job: one model per Dynamo parser, one case per transcript; and the parsers."""
    backend = get_backend("dynamo")
    registered = {
        "tool": set(backend.tool_parser_names()),
        "reasoning": set(backend.reasoning_parser_names()),
    }
    models: dict[str, list[str | None]] = {}
    cases, parsers = [], {}
    for t in bundled_transcripts():
        fam = family_table().get(t.kind, t.family or "")
        own = fam.parser_for("dynamo") if fam else None
        if own is None or own not in registered[t.kind]:
            continue
        models[f"{t.kind[0]}-{own}".replace("_", "-")] = [own, None] if t.kind == "reasoning" else [None, own]
        spec = f"dynamo:{own}"
        parsers[t.id] = (
            pb.get_reasoning_parser(spec)
            if t.kind == "reasoning"
            else pb.get_tool_parser(spec, tools=t.tools)
        )
        prompt = None
        if t.kind == "reasoning" and t.reasoning_started_in_prompt:
            prompt = parsers[t.id].markers[0] if parsers[t.id].markers else None
        cases.append(_case(t.id, t.kind, own, t.output, t.tools, prompt))
    for own in ("qwen3", "glm45"):
        for n, (text, prompt) in enumerate((x, p) for x in PROMPTED for p in PROMPTS):
            case_id = f"prompted-{own}-{n}"
            parsers[case_id] = pb.get_reasoning_parser(f"dynamo:{own}")
            cases.append(_case(case_id, "reasoning", own, text, [], prompt))
    return models, cases, parsers


def _json_args(reading: dict[str, Any]) -> dict[str, Any]:
    """Arguments compared as JSON values: Dynamo's pythonic parser writes nested objects' keys in
    a different order from run to run (measured on 1.6.1), in its own frontend as here."""
    calls = []
    for name, args in reading["calls"]:
        try:
            calls.append([name, json.loads(args)])
        except ValueError:
            calls.append([name, args])
    return {**reading, "calls": calls}


def _assembled(stream: Any, chunks: list[tuple[str, list[int] | None]]) -> dict[str, Any]:
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for delta in [*(stream.feed(c, ids) for c, ids in chunks), stream.flush()]:
        content.append(delta.content)
        reasoning.append(delta.reasoning)
        for tc in delta.tool_calls:
            call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            call["name"] += tc.name or ""
            call["arguments"] += tc.arguments
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [[c["name"], c["arguments"]] for _, c in sorted(calls.items())],
    }


def _served(case: dict[str, Any], kind: str, own: str, chunks: list[tuple[str, Any]]) -> dict[str, Any]:
    """What `OutputProcessor` with the `dynamo:` spec streams, assembled as a client does."""
    spec = f"dynamo:{own}"
    processor = (
        pb.OutputProcessor(spec, None)
        if kind == "reasoning"
        else pb.OutputProcessor(None, spec, tools=case["tools"] or None)
    )
    stream = processor.stream()
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for chunk in [c for step, _ in chunks for c in stream.feed(step)] + list(stream.finish()):
        for choice in chunk.get("choices", []):
            d = choice.get("delta") or {}
            content.append(d.get("content") or "")
            reasoning.append(d.get("reasoning_content") or "")
            for tc in d.get("tool_calls") or []:
                call = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["arguments"] += fn.get("arguments") or ""
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [[c["name"], c["arguments"]] for _, c in sorted(calls.items())],
    }


def _oneshot(parser: Any, text: str, prompt: str | None, ids: list[int] | None = None) -> dict[str, Any]:
    """Our one-shot reading, as the reference's answers are compared (with the output's token ids
    where the test has real ones)."""
    given = {"prompt": prompt} if prompt is not None else {}
    res = parser.parse(text, **given, **({"token_ids": ids} if ids is not None else {}))
    calls = [
        [c.name, c.invalid_arguments if c.invalid_arguments is not None else c.arguments]
        for c in getattr(res, "tool_calls", [])
    ]
    return {"content": res.content or "", "reasoning": getattr(res, "reasoning", None) or "", "calls": calls}


def _reference_oneshot(message: dict[str, Any]) -> dict[str, Any]:
    calls = []
    for call in message.get("tool_calls") or []:
        text = call["function"]["arguments"]
        try:
            args = json.loads(text)
        except ValueError:
            args = text
        calls.append([call["function"]["name"], args if isinstance(args, dict) else text])
    return {
        "content": message.get("content") or "",
        "reasoning": message.get("reasoning_content") or "",
        "calls": calls,
    }


def _reference(job: dict[str, Any], folder: Path, tmp_path: Path) -> dict[str, Any]:
    """What the plain frontend (`_dynamo_reference.py`, its own process) answered, per case."""
    done = subprocess.run(
        [sys.executable, str(HERE / "_dynamo_reference.py")],
        input=json.dumps({**job, "folder": str(folder)}),
        capture_output=True,
        text=True,
        env=dict(os.environ, HOME=str(tmp_path)),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_dynamo_readings_equal_the_frontend_over_http(tmp_path: Path) -> None:
    models, cases, parsers = _cases()
    assert len(models) >= 30 and len(cases) >= 300, (len(models), len(cases))
    assert sum("ids" in c["streams"] for c in cases) >= 20 and sum(bool(c["prompt"]) for c in cases) >= 8
    job = {"models": models, "cases": [{k: v for k, v in c.items() if k != "feeds"} for c in cases]}
    reference = _reference(job, FOLDER.path, tmp_path)
    differ = []
    for case in cases:
        parser, ref = parsers[case["id"]], reference[case["id"]]
        prompt = {"prompt": case["prompt"]} if case["prompt"] is not None else {}
        if _oneshot(parser, case["text"], case["prompt"]) != _reference_oneshot(ref["oneshot"]):
            differ.append((case["id"], "oneshot"))
        for chunking, chunks in case["feeds"].items():
            try:
                ours = _assembled(parser.stream(**prompt), chunks)
            except ParserUnsupportedError:
                pytest.skip("this Dynamo release cannot stream (see adapters/dynamo/_compat.py)")
            if _json_args(ours) != _json_args(ref[chunking]):
                differ.append((case["id"], chunking, ours, ref[chunking]))
            if chunking == "token" and not prompt:  # OutputProcessor with the dynamo: spec streams the same
                served = _served(case, case["kind"], case["own"], chunks)
                if _json_args(served) != _json_args(ref[chunking]):
                    differ.append((case["id"], "OutputProcessor", served, ref[chunking]))
    assert not differ, f"{len(differ)} readings differ: {differ[:5]}"


@pytest.mark.parametrize("vocab", sorted(VOCABULARIES))
def test_dynamo_readings_equal_the_frontend_with_a_real_vocabulary(vocab: str, tmp_path: Path) -> None:
    """One model with both parsers (`_real_vocab.OUTPUTS`) on the real vocabulary's folder."""
    folder, o = real_folder(vocab, tmp_path), OUTPUTS[vocab]
    assert split_characters(folder, o.text) >= 3, o.id  # the vocabulary cuts characters here
    reasoning, tool = o.names["dynamo"]
    parser = pb.get_pipeline(f"dynamo:{reasoning}", f"dynamo:{tool}", tools=list(o.tools), tokenizer=folder)
    ids = folder.encode(o.text)
    feeds = {f"token-{per}": steps(folder, o.text, per) for per in (1, 3)}
    case = {"id": o.id, "model": o.id, "tools": list(o.tools), "text": o.text, "prompt": o.prompt}
    case |= {"oneshot": [[i] for i in ids], "streams": {n: [s for _, s in c] for n, c in feeds.items()}}
    ref = _reference({"models": {o.id: [reasoning, tool]}, "cases": [case]}, folder.path, tmp_path)[o.id]
    differ = []
    ours = _oneshot(parser, o.text, o.prompt, ids)  # the engine steps one token at a time
    if ours != _reference_oneshot(ref["oneshot"]):
        differ.append(("oneshot", ours, ref["oneshot"]))
    for name, chunks in feeds.items():
        got = _assembled(parser.stream(prompt=o.prompt), chunks)
        if _json_args(got) != _json_args(ref[name]):
            differ.append((name, got, ref[name]))
    parser.close()
    assert not differ, f"{len(differ)} readings differ: {differ}"

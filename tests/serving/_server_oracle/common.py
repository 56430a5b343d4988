"""What both sides of the oracle share: the scripted engine output, and how a client reads a stream.

A `Script` is what an engine produced for one request: the chunks it sent
(text and token ids per step, in order), how it stopped, and the prompt's
token ids. The server drivers (`vllm.py`, `sglang.py`) hand it to the
framework's own streaming generator; `parsebridge_run` hands the same chunks
to parsebridge's `OutputProcessor`. Each returns a `Run`: the `delta` dicts of
choice 0 in wire order, the finish reason, and the message a client assembles.

Comparison is on three things: the assembled message, the finish reason, and
the order of deltas. `events` turns a delta list into a sequence of
(kind, index, text) events; `merged` joins neighbouring events of the same
kind (and call index), which is "the same order up to grouping": SGLang
sends reasoning, content and each call item as separate chunks where
parsebridge may put them in one delta, and a client cannot tell the two apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

Chunk = tuple[str, list[int]]

#: Delta keys that carry reasoning text, per framework release and parsebridge's `reasoning_key`.
REASONING_KEYS = ("reasoning_content", "reasoning")


@dataclass
class Script:
    """One request's engine output: chunks in order, then a finish.

    `eos_ids`: the generation stopped on an end-of-sequence token, which the
    engine reports as a last step with no text and that token's id (empty
    when the tokenizer has no EOS token; SGLang's text is then unchanged);
    None: the stop came with the last text chunk (a stop string, or
    `finish_reason="length"`).
    """

    chunks: list[Chunk]
    finish_reason: str = "stop"
    prompt_token_ids: list[int] = field(default_factory=list)
    eos_ids: list[int] | None = None

    def engine_steps(self) -> list[tuple[str, list[int], str | None]]:
        """(text, ids, finish reason or None) per engine step, the last one finishing."""
        steps: list[tuple[str, list[int], str | None]] = [(t, list(ids), None) for t, ids in self.chunks]
        if self.eos_ids is not None:
            steps.append(("", list(self.eos_ids), self.finish_reason))
        elif steps:
            text, ids, _ = steps[-1]
            steps[-1] = (text, ids, self.finish_reason)
        else:
            steps.append(("", [], self.finish_reason))
        return steps

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.chunks)


@dataclass
class Run:
    """What a client saw from one streamed request (choice 0)."""

    deltas: list[dict[str, Any]]
    finish_reason: str | None
    message: dict[str, Any]

    def merged(self) -> list[tuple[str, int, str]]:
        return merged(events(self.deltas))


def run_from_chunks(chunks: Iterable[dict[str, Any]]) -> Run:
    """A `Run` from `chat.completion.chunk` dicts (usage/other choices ignored)."""
    deltas: list[dict[str, Any]] = []
    finish: str | None = None
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = {k: v for k, v in (choice.get("delta") or {}).items() if v is not None}
            deltas.append(delta)
            if choice.get("finish_reason") is not None:
                finish = choice["finish_reason"]
    return Run(deltas, finish, assemble(deltas))


def run_from_sse(lines: Iterable[str]) -> Run:
    """A `Run` from a server's SSE text (`data: {...}` events; `[DONE]` and errors checked)."""
    chunks = []
    done = False
    for block in lines:
        for line in block.splitlines():
            if not line.startswith("data: "):
                continue
            data = line[len("data: ") :]
            if data == "[DONE]":
                done = True
                continue
            obj = json.loads(data)
            if "error" in obj or obj.get("object") == "error":
                raise ServerError(obj)
            chunks.append(obj)
    if not done:
        raise ServerError({"error": "the stream did not end with data: [DONE]"})
    return run_from_chunks(chunks)


class ServerError(RuntimeError):
    """The framework's server sent an error event instead of a stream."""


def _reasoning(delta: dict[str, Any]) -> str | None:
    for key in REASONING_KEYS:
        if delta.get(key):
            return str(delta[key])
    return None


def events(deltas: Sequence[dict[str, Any]]) -> list[tuple[str, int, str]]:
    """Deltas → ("reasoning"|"content", -1, text), ("call", i, "name"), ("args", i, fragment) events.

    Inside one delta the order is reasoning, content, calls (a client sees one
    delta at once). Empty texts are no event; a call's id is checked for
    presence in `assemble`, not here (ids are random). Call indices are
    numbered in order of first appearance: SGLang's server sends a parser's
    own `tool_index` (the tool's position in the request, or -1), where
    `OutputProcessor` numbers calls densely from 0 as OpenAI clients expect —
    the same calls in the same order.
    """
    out: list[tuple[str, int, str]] = []
    order: dict[int, int] = {}
    for delta in deltas:
        r = _reasoning(delta)
        if r:
            out.append(("reasoning", -1, r))
        if delta.get("content"):
            out.append(("content", -1, delta["content"]))
        for tc in delta.get("tool_calls") or []:
            fn = tc.get("function") or {}
            index = order.setdefault(int(tc.get("index") or 0), len(order))
            if fn.get("name"):
                out.append(("call", index, fn["name"]))
            if fn.get("arguments"):
                out.append(("args", index, fn["arguments"]))
    return out


def merged(evts: Sequence[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """Neighbouring events of one kind (and call index) joined: order up to grouping."""
    out: list[tuple[str, int, str]] = []
    for kind, index, text in evts:
        if out and kind != "call" and out[-1][0] == kind and out[-1][1] == index:
            out[-1] = (kind, index, out[-1][2] + text)
        else:
            out.append((kind, index, text))
    return out


def assemble(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The message a client accumulates: reasoning, content, calls by index (arguments joined)."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    order: dict[int, int] = {}
    for delta in deltas:
        r = _reasoning(delta)
        if r:
            reasoning.append(r)
        if delta.get("content"):
            content.append(delta["content"])
        for tc in delta.get("tool_calls") or []:
            index = order.setdefault(int(tc.get("index") or 0), len(order))  # as in `events`
            call = calls.setdefault(index, {"ids": 0, "name": "", "arguments": ""})
            if tc.get("id"):
                call["ids"] += 1
            fn = tc.get("function") or {}
            call["name"] += fn.get("name") or ""
            call["arguments"] += fn.get("arguments") or ""
    return {
        "reasoning": "".join(reasoning) or None,
        "content": "".join(content) or None,
        "tool_calls": [calls[i] for i in sorted(calls)],
    }


def without_unnamed_calls(run: Run) -> Run:
    """`run` as `OutputProcessor`'s convention reads it: argument fragments of a call that never
    got a name (a server streaming a malformed call) dropped, and with no named call left, a
    ``tool_calls`` finish is ``stop``; a call id repeated on later fragments (vLLM 0.11) sent
    once. docs/serving.md documents this normalisation."""
    named: set[int] = set()
    for delta in run.deltas:
        for tc in delta.get("tool_calls") or []:
            if (tc.get("function") or {}).get("name"):
                named.add(int(tc.get("index") or 0))
    deltas = []
    changed = False
    seen_ids: set[int] = set()
    for delta in run.deltas:
        calls = delta.get("tool_calls")
        if calls:
            kept = [dict(tc) for tc in calls if int(tc.get("index") or 0) in named]
            if len(kept) != len(calls):
                changed = True
                delta = {**delta, "tool_calls": kept}
        deltas.append(delta)
    for delta in deltas:  # an id sent with every fragment: the convention sends it once
        for tc in delta.get("tool_calls") or []:
            if tc.get("id"):
                index = int(tc.get("index") or 0)
                if index in seen_ids:
                    tc.pop("id")
                    changed = True
                seen_ids.add(index)
    if not changed:
        return run
    finish = run.finish_reason
    if not named and finish == "tool_calls":
        finish = "stop"
    return Run(deltas, finish, assemble(deltas))


def describe(a: Run, b: Run) -> str:
    """A short account of where two runs differ (for assertion messages)."""
    parts = []
    if a.finish_reason != b.finish_reason:
        parts.append(f"finish_reason {a.finish_reason!r} != {b.finish_reason!r}")
    if a.message != b.message:
        parts.append(f"message\n  {a.message}\n  {b.message}")
    ma, mb = a.merged(), b.merged()
    if ma != mb:
        for i, (x, y) in enumerate(zip(ma, mb, strict=False)):
            if x != y:
                parts.append(f"event {i}: {x!r} != {y!r}")
                break
        else:
            parts.append(f"event counts {len(ma)} != {len(mb)}")
    return "; ".join(parts) or "equal"


# ---------------------------------------------------------------------- the parsebridge side


def tokenizer_of(processor: Any, tools: Sequence[dict[str, Any]] | None = None) -> Any:
    """The tokenizer parsebridge's framework parsers use (the one its `engine_chunks` tokenise with).

    The server must be given the same one, so that token ids mean the same on both sides.
    """
    sources = [
        processor._native_pipeline_for(list(tools or processor.tools)),
        processor._tool_parser_for(list(tools or processor.tools)),
        processor.reasoning_parser,
    ]
    for source in sources:
        if source is None:
            continue
        for obj in (source, getattr(source, "inner", None)):
            tok = getattr(obj, "tokenizer", None) if obj is not None else None
            if tok is not None:
                return tok
    raise LookupError("no tokenizer among the processor's parsers")


def chunked(processor: Any, text: str, chunking: str, tools: Sequence[dict[str, Any]] | None) -> list[Chunk]:
    """`text` as engine chunks: ``tokN`` (N tokens a step) or ``charN`` (N characters a step).

    Character chunks carry the ids of their own text (what parsebridge computes
    when a caller gives none), so both sides get the same ids.
    """
    kind, per = chunking.rstrip("0123456789"), int(chunking.lstrip("abcdefghijklmnopqrstuvwxyz"))
    if kind == "tok":
        return [(t, list(ids or [])) for t, ids in processor.engine_chunks(text, per, list(tools or []))]
    if kind != "char":
        raise ValueError(f"unknown chunking {chunking!r}")
    out: list[Chunk] = []
    for i in range(0, len(text), per):
        piece = text[i : i + per]
        ids = processor.engine_chunks(piece, 1 << 30, list(tools or []))
        out.append((piece, [i for _, chunk_ids in ids for i in (chunk_ids or [])]))
    return out


def parsebridge_run(
    processor: Any,
    script: Script,
    *,
    tools: list[dict[str, Any]] | None,
    tool_choice: Any,
    reasoning_started: bool | None = None,
    **request: Any,
) -> Run:
    """The same engine steps through `OutputProcessor` chunk streams (each step fed, then `finish`)."""
    req = processor.request(
        tools=list(tools or []), tool_choice=tool_choice, reasoning_started=reasoning_started, **request
    )
    stream = req.stream()
    chunks: list[dict[str, Any]] = []
    steps = script.engine_steps()
    for text, ids, _ in steps:
        chunks += stream.feed(text, ids)
    chunks += stream.finish(steps[-1][2] or "stop")
    return run_from_chunks(chunks)


#: The model name every scripted request and server uses.
MODEL = "oracle-model"


def request_body(
    tools: list[dict[str, Any]] | None,
    tool_choice: Any = None,
    chat_template_kwargs: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A streaming chat request's JSON as a client sends it: `tools`, `tool_choice` (None: not
    sent) and `chat_template_kwargs` only when given."""
    body: dict[str, Any] = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "oracle"}],
        "stream": True,
        **fields,
    }
    if tools:
        body["tools"] = tools
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if chat_template_kwargs is not None:
        body["chat_template_kwargs"] = chat_template_kwargs
    return body

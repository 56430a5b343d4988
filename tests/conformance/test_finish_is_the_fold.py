"""A stream's `finish()` is what a client assembles from the stream's own deltas, on every backend.

The fold here is written independently of `DeltaAccumulator`: content and
reasoning fragments concatenated; per call index, the first id and the first
name sent, and the argument fragments concatenated (parsed as JSON when they
are a JSON object, else kept as text, as `ToolCall.invalid_arguments` keeps
them). A call the stream never gave an id has the id ``""`` in `finish()`:
nothing is made up. A stream the framework raises in (or refuses, as smg
refuses some pairings at the first parse) has no result and is left to
conformance, which reports it. Every bundled transcript, streamed at every default
chunking (and as one chunk), through builtin under both conventions and a
``python:`` parser; through each framework (one chunking per transcript, in
turn, so that every transcript and every chunking is run).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters import get_backend
from parsebridge.conformance.chunking import DEFAULT_CHUNKINGS, Chunking, parse_chunkings
from parsebridge.conformance.observe import open_stream
from parsebridge.conformance.runner import Runner
from parsebridge.conformance.subject import Subject, target_for
from parsebridge.conformance.transcripts import Transcript, bundled_transcripts

# `char` first, as when it was a default (on request in conformance now): the hardest test of the fold.
CHUNKINGS: list[Chunking] = [c for c in parse_chunkings(["char", *DEFAULT_CHUNKINGS, "whole"]) if c.streamed]
Reading = tuple[str | None, str | None, list[tuple[str | None, str, Any]]]


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return ("text", text)
    return value if isinstance(value, dict) else ("text", text)


def fold(deltas: Iterable[Any]) -> Reading:
    """What an OpenAI client assembles from `deltas` (see module doc)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for d in deltas:
        content.append(d.content or "")
        reasoning.append(d.reasoning or "")
        for c in d.tool_calls or ():
            call = calls.setdefault(c.index, {"id": None, "name": None, "arguments": []})
            call["id"] = call["id"] if call["id"] is not None else c.id
            call["name"] = call["name"] if call["name"] is not None else c.name
            call["arguments"].append(c.arguments or "")
    return (
        "".join(content) or None,
        "".join(reasoning) or None,
        [
            (c["id"] or "", c["name"] or "", _arguments("".join(c["arguments"])))
            for _, c in sorted(calls.items())
        ],
    )


def reading_of(final: Any) -> Reading:
    calls = []
    for c in getattr(final, "tool_calls", None) or ():
        arguments = ("text", c.invalid_arguments) if c.invalid_arguments is not None else c.arguments
        calls.append((c.id, c.name, arguments))
    return getattr(final, "content", None) or None, getattr(final, "reasoning", None) or None, calls


def _started(t: Transcript) -> bool | None:
    return True if t.reasoning_started_in_prompt else None


def streamed(subject: Subject, t: Transcript, chunking: Chunking) -> tuple[Reading, Reading]:
    """(the fold of the deltas, `finish()`'s reading) for one transcript at one chunking."""
    stream = open_stream(subject, _started(t), t.id)
    chunks = chunking.split(t.output, subject.parser, t.token_texts)
    deltas = [stream.feed(c.text, c.token_ids) for c in chunks]
    deltas.append(stream.flush())
    return fold(deltas), reading_of(stream.finish())


def differences(
    backend: str, runner: Runner, pairs: Iterable[tuple[Transcript, Sequence[Chunking]]]
) -> list[str]:
    out = []
    for t, chunkings in pairs:
        target = target_for(t, backend)
        if target.unsupported:
            continue
        try:
            subject = runner.subject(target, t.tools)
        except (pb.ParserUnsupportedError, pb.UnknownParserError):
            continue
        for chunking in chunkings:
            try:
                folded, final = streamed(subject, t, chunking)
            except (pb.BackendError, pb.ParserUnsupportedError):  # raised (conformance reports it)
                continue
            if folded != final:
                out.append(f"{t.id} at {chunking.name}: deltas {folded} / finish() {final}")
    return out


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_builtin_finish_is_the_fold_of_its_deltas(conventions: str) -> None:
    pairs = [(t, CHUNKINGS) for t in bundled_transcripts()]
    assert differences("builtin", Runner(conventions=conventions), pairs) == []


def test_a_python_parser_finish_is_the_fold_of_its_deltas() -> None:
    text = 'Sure.\nCALL get_weather {"city": "Paris"}\nCALL get_time {"tz": "UTC"}\nDone, é😀.'
    for spec in ("python:_userparsers:CallLine", "python:_userparsers:SeedToolParser"):
        parser = pb.get_tool_parser(spec)
        for chunking in CHUNKINGS:
            stream = parser.stream()
            deltas = [stream.feed(c.text) for c in chunking.split(text)]
            deltas.append(stream.flush())
            assert fold(deltas) == reading_of(stream.finish()), (spec, chunking.name)
    colon = pb.get_reasoning_parser("python:_userparsers:Colon")
    for chunking in CHUNKINGS:
        stream = colon.stream()
        deltas = [stream.feed(c.text) for c in chunking.split("plan::answer é")]
        deltas.append(stream.flush())
        assert fold(deltas) == reading_of(stream.finish()), chunking.name


@pytest.mark.framework
@pytest.mark.parametrize("backend", ["vllm", "sglang", "dynamo", "smg"])
def test_a_framework_finish_is_the_fold_of_its_deltas(backend: str) -> None:
    reason = get_backend(backend).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend} is not installed: {reason}")
    pairs = [(t, [CHUNKINGS[i % len(CHUNKINGS)]]) for i, t in enumerate(bundled_transcripts())]
    assert differences(backend, Runner(), pairs) == []


def test_a_call_never_given_an_id_finishes_without_one() -> None:
    """The fold's side of "never invent": the accumulator keeps the id a stream did not send empty."""
    from parsebridge.protocol import DeltaAccumulator
    from parsebridge.protocol.models import make_call_delta, make_delta

    acc = DeltaAccumulator()
    acc.add(make_delta("", "", [make_call_delta(0, None, None, '{"a": 1}')]))
    acc.add(make_delta("", "", [make_call_delta(1, "call_x", "f", "{}")]))
    assert [(c.id, c.name) for c in acc.tool_calls()] == [("", ""), ("call_x", "f")]

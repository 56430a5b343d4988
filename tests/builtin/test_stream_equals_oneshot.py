"""A builtin tool stream finishes with its one-shot reading, field for field: content, `dropped`,
and each call's name, arguments, `invalid_arguments` and `raw_text` (issue 39).

Over the bundled fixtures, the consensus corpus and the adversarial corpus (small sizes), for
every builtin tool parser a transcript's family has, under both conventions. The ``dev`` profile
reads every fifth transcript at two chunkings; ``thorough`` reads them all at six.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters.builtin import TOOL_PARSERS
from parsebridge.conformance.adversarial import adversarial_transcripts
from parsebridge.conformance.consensus import consensus_corpus
from parsebridge.conformance.transcripts import Transcript, bundled_transcripts

# The profile tests/conftest.py loads (importing conftest by name picks whichever conftest comes first).
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "dev") == "thorough"
SIZES = (1, 2, 3, 5, 7, 16) if THOROUGH else (1, 7)
EVERY = 1 if THOROUGH else 5


@cache
def _corpus() -> dict[str, list[Transcript]]:
    by_parser: dict[str, list[Transcript]] = {}
    texts = [
        *bundled_transcripts(kinds=["tool"]),
        *(t for t in consensus_corpus() if t.kind == "tool"),
        *adversarial_transcripts(scale=0.001, kinds=("tool",)),
    ]
    for t in texts[::EVERY]:
        fam = t.resolve_family()
        name = fam.parser_for("builtin") if fam else None
        if name in TOOL_PARSERS:
            by_parser.setdefault(name, []).append(t)
    return by_parser


def _fields(result: Any) -> tuple[Any, ...]:
    calls = [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in result.tool_calls]
    return result.content, calls, result.dropped


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_every_stream_finishes_with_its_one_shot_reading(conventions: str) -> None:
    corpus = _corpus()
    assert len(corpus) > 20  # (every builtin tool family with a fixture or a grammar)
    for name, transcripts in corpus.items():
        for t in transcripts:
            parser = pb.get_tool_parser(f"builtin:{name}", tools=t.tools or None, conventions=conventions)
            text = t.output
            want = _fields(parser.parse(text))
            for size in SIZES:
                stream = parser.stream()
                for i in range(0, len(text), size):
                    stream.feed(text[i : i + size])
                got = _fields(stream.finish())
                assert got == want, (name, t.id, size)


def test_a_streamed_call_carries_its_raw_text() -> None:
    text = 'Hi <tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
    parser = pb.get_tool_parser("builtin:hermes")
    stream = parser.stream()
    for i in range(0, len(text), 4):
        stream.feed(text[i : i + 4])
    (call,) = stream.finish().tool_calls
    assert call.raw_text == text[3:] == parser.parse(text).tool_calls[0].raw_text

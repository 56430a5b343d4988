"""A builtin stream's `pending_size()` is the length of its `pending_text()`, after every chunk.

The guard's `max_held` check asks for the held size after every chunk; builtin's call
streams count it instead of joining a held call's text (which grows with each chunk, so
joining it was quadratic on one long call). Counting must give the same number, so the
limit trips where it did: checked on every builtin tool parser, on its family's fixtures
and marker soups (`_golden.cases`: the golden test's inputs, its ``dev`` sample under every
profile: the equality needs no more), both conventions, two chunkings each.
"""

from __future__ import annotations

from typing import Any

import _golden
import pytest

import parsebridge as pb

TOOL_PARSERS = [name for kind, name in _golden.parsers() if kind == "tool"]


def _sizes_agree(stream: Any, where: str) -> None:
    inner = _golden._inner(stream)
    if not hasattr(inner, "pending_size"):
        return
    assert inner.pending_size() == len(inner.pending_text()), where


@pytest.mark.parametrize("name", TOOL_PARSERS)
@pytest.mark.parametrize("conventions", ["lossless", "servers"])
def test_pending_size_is_the_pending_texts_length(name: str, conventions: str) -> None:
    counted = 0
    for label, tools, chunkings in _golden.cases("tool", name):
        if not _golden.in_dev_sample(label):  # (every fixture, and the golden test's dev sample of soups)
            continue
        parser = pb.get_tool_parser(f"builtin:{name}", tools=tools or None, conventions=conventions)
        for chunks in chunkings:
            stream = parser.stream()
            for i, chunk in enumerate(chunks):
                stream.feed(chunk)
                _sizes_agree(stream, f"{label}, after chunk {i}")
                counted += hasattr(_golden._inner(stream), "pending_size")
            stream.finish()
    if name != "sarashina":  # (its stream is its own, with no call held by `WholeCalls`)
        assert counted, f"builtin:{name}'s stream does not count its held text"


def test_the_guard_trips_max_held_on_the_counted_size() -> None:
    """A held call longer than `max_held` breaks the stream (fallback: its text is content), as before;
    the same call within the limit is a call."""
    for max_held, calls in ((50, 0), (500, 1)):
        parser = pb.get_tool_parser("builtin:hermes", on_error="fallback", max_held=max_held)
        stream = parser.stream()
        stream.feed("Hi <tool_call>")
        stream.feed('{"name": "f", "arguments": {"q": "')
        for _ in range(10):
            stream.feed("xxxxxxxx")
        stream.feed('"}}</tool_call>')
        result = stream.finish()
        assert len(result.tool_calls) == calls, max_held
        if not calls:  # (tripped: the held text, marker included, is content)
            assert result.content is not None and "<tool_call>" in result.content
            assert result.content.count("x") == 80

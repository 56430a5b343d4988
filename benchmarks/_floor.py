"""A parser that parses nothing: the per-chunk floor of parsebridge's stream protocol.

Loaded as ``python:benchmarks._floor:PassThroughToolParser`` through the
public API, so a stream of it pays exactly what every parsebridge stream
pays besides parsing: the failure guard, the stream life cycle, one
`StreamDelta` per chunk (built the way builtin streams build theirs,
without validation) and the accumulator. The throughput section reports
its chunks/s beside builtin's, so "how fast can builtin be" has a number.
"""

from __future__ import annotations

from collections.abc import Sequence

from parsebridge.protocol import StreamDelta, ToolParserBase, ToolParseResult, ToolStreamBase
from parsebridge.protocol.calls import new_call_id
from parsebridge.protocol.models import delta_of, make_call_delta, make_delta


class _PassThroughStream(ToolStreamBase):
    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        return make_delta(text)  # the cheapest delta parsebridge's own streams build


class PassThroughToolParser(ToolParserBase):
    """Everything is content; no scanning at all."""

    name = "passthrough"

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text or None)

    def stream(self) -> _PassThroughStream:  # type: ignore[override]
        return _PassThroughStream()


class _CallFragmentStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._named = False

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if self._named:
            return delta_of("", "", [make_call_delta(0, None, None, text)])  # one argument fragment
        self._named = True
        return delta_of("", "", [make_call_delta(0, new_call_id(), "f", text)])


class PassThroughCallParser(ToolParserBase):
    """Every chunk is one argument fragment of one call; no scanning at all: the floor of a
    chunk inside a call's arguments (`benchmarks.floor_ratio --call-floor`)."""

    name = "passthrough_call"

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text or None)

    def stream(self) -> _CallFragmentStream:  # type: ignore[override]
        return _CallFragmentStream()

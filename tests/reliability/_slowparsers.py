"""Parsers that misbehave on purpose: slow on some input, or holding everything back."""

from __future__ import annotations

import time
from collections.abc import Sequence

from parsebridge import (
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolParserBase,
    ToolParseResult,
    ToolStreamBase,
)


class Slow(ToolParserBase):
    """Takes 30 s on any text containing SLOW (a stand-in for a backtracking regex)."""

    name = "slow"

    def parse(self, text: str) -> ToolParseResult:
        if "SLOW" in text:
            time.sleep(30)
        return ToolParseResult(content=text.upper() or None)

    def stream(self) -> _SlowStream:
        return _SlowStream()

    def format_tool_result(self, tool_call_id: str, result: object) -> str:
        return f"<result id={tool_call_id}>{result}</result>"


class _SlowStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._held = ""

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if "SLOW" in text:
            time.sleep(30)
        out, self._held = self._held + text[:-1], text[-1:]
        return StreamDelta(content=out.upper())

    def _flush(self) -> StreamDelta:
        return StreamDelta(content=self._held.upper())

    def pending_text(self) -> str:
        return self._held


class SlowReasoning(ReasoningParserBase):
    name = "slow_reasoning"

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if "SLOW" in text:
            time.sleep(30)
        head, _, tail = text.partition("|")
        return ReasoningParseResult(reasoning=head or None, content=tail or None)


class Hoarder(ToolParserBase):
    """Holds back everything until the end (a stream that never decides)."""

    name = "hoarder"

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text or None)

    def stream(self) -> _HoardStream:
        return _HoardStream()


class _HoardStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._held = ""

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._held += text
        return StreamDelta()

    def _flush(self) -> StreamDelta:
        return StreamDelta(content=self._held)

    def pending_text(self) -> str:
        return self._held


class LineHolder(ToolParserBase):
    """Holds each line until its newline, and counts how often it is asked what it holds."""

    name = "line-holder"
    asked = 0

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text or None)

    def stream(self) -> _LineStream:
        return _LineStream()


class _LineStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._held = ""

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._held += text
        done, newline, rest = self._held.rpartition("\n")
        if not newline:
            return StreamDelta()
        self._held = rest
        return StreamDelta(content=done + newline)

    def _flush(self) -> StreamDelta:
        return StreamDelta(content=self._held)

    def pending_text(self) -> str:
        LineHolder.asked += 1
        return self._held

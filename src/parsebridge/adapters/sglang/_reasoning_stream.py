"""The stream of a request with only a reasoning parser: one SGLang `ReasoningParser`, one object.

Every other request shape goes through `_Stepper` and `Session` (which serve
any pair of parsers). This one is the most common reasoning shape and the
cheapest per chunk (SGLang's think-tag detectors take about 5 µs a chunk), so
what the bridge adds shows most here: its stream is the parser, the
accumulator and the fed text in one object, fed by a closure, and ended in
one method. It behaves as the `_Stepper` path did (same deltas, errors,
end-of-stream conventions and `pending_text`), which the adapter tests
check against SGLang called directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    ReasoningParseResult,
    ReasoningStreamBase,
    StreamDelta,
)
from ...protocol.errors import call_typed, refused_chunk
from ...protocol.models import blank_delta, make_delta, make_reasoning_result
from .._common import locate_reasoning


def _finishing_chunk(parser: Any, chunk: str, stream_end: bool, label: str) -> tuple[str, str]:
    """The finishing chunk's (reasoning, content): `chunk` (the held one, or "") through the
    parser, then, with `stream_end`, the parser's end of stream; a raise arrives typed.

    The server always handles a finishing step, also for an empty generation (its one step
    has no text): the detector's end of stream runs on it (append-think sends "<think>"), as
    `parse` does on empty text."""
    try:
        reasoning, content = parser.parse_stream_chunk(chunk)
        if stream_end:
            end_reasoning, end_content = parser.parse_stream_end()
            reasoning = (reasoning or "") + (end_reasoning or "")
            content = (content or "") + (end_content or "")
    except Exception as exc:
        raise BackendError.wrapping("sglang", label, "parse_stream_chunk", exc) from exc
    return reasoning or "", content or ""


class SglangReasoningStream(ReasoningStreamBase):
    """SGLang's server feeding one `ReasoningParser` (`parse_stream_chunk` per engine chunk, and
    `parse_stream_end()` with the last one on releases that have it).

    ``hold``: the "last_chunk" end-of-stream convention (each chunk waits for the next `feed`
    to show it was not the last); otherwise every chunk goes through at once and the stream
    ends with an empty finishing chunk.
    """

    #: Handed out without the guard under on_error="raise" (see `_stepped.SteppedToolStream`):
    #: it records itself, refuses feed after flush and a chunk that is not text, and raises only
    #: parsebridge errors.
    guard_complete = True
    broken = False

    def __init__(
        self,
        parser: Any,
        hold: bool,
        stream_end: bool,
        label: str,
        markers: tuple[str | None, str | None],
    ) -> None:
        # `_StreamBase.__init__` is not called: its two fields are set here.
        self._acc = acc = DeltaAccumulator()
        self._flushed = False
        self._parser = parser
        self._hold = hold
        self._stream_end = stream_end
        self._label = label
        self._markers = markers
        self.text_seen: list[str] = []
        self.feed, self._final_chunk, self._held = self._closures(acc)  # type: ignore[method-assign]

    def _closures(
        self, acc: DeltaAccumulator
    ) -> tuple[Callable[..., StreamDelta], Callable[[], tuple[str, str]], Callable[[], str | None]]:
        """(`feed`, the finishing chunk, the held chunk), sharing the stream's per-chunk state.

        `feed` has every name it needs bound once: per chunk one framework call, its text
        appended to the accumulator, one delta (`blank_delta`, filled here). The state (the chunk
        held back, closed) lives in the closures' cells, not on the stream, so no closure
        refers to the stream: a finished stream, and the SGLang parser it holds, are freed
        when the caller drops them rather than at the next garbage collection.
        """
        lane, hold, label = self._parser.parse_stream_chunk, self._hold, self._label
        parser, stream_end, seen = self._parser, self._stream_end, self.text_seen
        see, r_append, c_append = seen.append, acc.reasoning_parts.append, acc.content_parts.append
        pending: str | None = None
        closed = False

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            nonlocal pending
            if closed or not isinstance(text, str):
                raise refused_chunk(text)
            see(text)
            chunk = pending if hold else text
            if chunk is None and hold:  # the first chunk held: it waits for the next
                pending = text
                return make_delta()
            try:
                reasoning, content = lane(chunk)
            except Exception as exc:
                raise BackendError.wrapping("sglang", label, "parse_stream_chunk", exc) from exc
            if hold:
                # `pending` moves on only once the held chunk went through (see `pending_text`).
                pending = text
            delta = blank_delta()
            if reasoning:
                r_append(reasoning)
                delta.reasoning = reasoning
            else:
                delta.reasoning = ""
            if content:
                c_append(content)
                delta.content = content
            else:
                delta.content = ""
            delta.tool_calls = []
            return delta

        def final_chunk() -> tuple[str, str]:
            """Close; the finishing chunk's (reasoning, content)."""
            nonlocal pending, closed
            closed = True
            finishing = _finishing_chunk(parser, (pending or "") if hold else "", stream_end, label)
            pending = None
            return finishing

        def held() -> str | None:
            return pending

        return feed, final_chunk, held

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """`token_ids` are ignored: SGLang's parsers take text only."""
        return self.feed(text, token_ids)  # shadowed per instance by `_closures` (see __init__)

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        return self.feed(text, token_ids)  # never called: `feed` replaces the base's feed-and-record

    def flush(self) -> StreamDelta:
        """The finishing chunk (the held one, or an empty one), then the block located in the fed text."""
        if self._flushed:
            return make_delta()
        self._flushed = True
        # Our own end-of-stream code: typed as the guard would type it.
        return call_typed("sglang", self._label, "stream.flush", self._final_delta)

    def _final_delta(self) -> StreamDelta:
        reasoning, content = self._final_chunk()
        acc = self._acc
        if reasoning:
            acc.reasoning_parts.append(reasoning)
        if content:
            acc.content_parts.append(content)
        start, end = self._markers
        self.block = locate_reasoning("".join(self.text_seen), acc.reasoning, start, end)
        return make_delta(content, reasoning)

    def finish(self) -> ReasoningParseResult:
        """Flush, then the result a client assembled (the block located in what was fed)."""
        self.flush()
        block = self.block
        if block is None:  # no reasoning, or a flush that failed: the base's rule
            return super().finish()
        # The located block's content is the joined reasoning: not joined again.
        return make_reasoning_result(block.content, self._acc.content, block)

    def pending_text(self) -> str:
        """Text fed but not shown: what SGLang's detector buffers, then the chunk held back."""
        buffer = getattr(getattr(self._parser, "detector", None), "_buffer", None)
        return (buffer if isinstance(buffer, str) else "") + (self._held() or "")

"""The guarded streams: a parser's stream under the failure policy (`guard`).

A stream wrapped here records what it hands out, measures what the parser holds back against
`max_held`, and when the parser raises, falls back per its guard: the held text and everything
fed from then on become content. The guard (`guard._Guard`) decides raise or fallback and logs;
this module only asks it (`StreamGuard`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from ..protocol import (
    BufferLimitError,
    ParseResult,
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolParseResult,
)
from ..protocol.errors import InvalidInputError, StreamStateError, UnsupportedOptionError
from ..protocol.models import make_delta, make_reasoning_result, make_tool_result
from ..protocol.streams import DeltaAccumulator, _StreamBase

#: `_finished_by_inner`: the inner stream did not finish this one (broken, or not recording itself).
NOT_FINISHED: Any = object()
#: What a parser's call may raise that the failure policy handles: its exceptions, and `sys.exit`
#: (a `SystemExit` from a parser of your own, or a framework's, would end the whole server, not
#: one request). Ctrl-C (`KeyboardInterrupt`) is no parser's failure and goes through.
PARSER_FAILURES = (Exception, SystemExit)
R = TypeVar("R")


class StreamGuard(Protocol):
    """What a guarded stream asks of its parser's guard (`guard._Guard`)."""

    backend: str
    name: str
    max_held: int | None

    def _handle(self, exc: BaseException, call: str, transcript: str | None) -> None: ...


#: What a guarded stream passes through from the stream it wraps: the calls' spans in the fed
#: text, how far back a later call may start (the CLI's `parse --stream` cuts raw text with them)
#: and the means to forget the spans once cut (`release_calls`).
_PASSED_THROUGH = frozenset({"call_spans", "open_from", "release_calls"})


class _GuardedStream(Generic[R]):
    def __getattr__(self, item: str) -> Any:
        if item in _PASSED_THROUGH:
            return getattr(self._inner, item)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {item!r}")

    def __init__(self, guard: StreamGuard, inner: Any, transcript: str | None) -> None:
        self._guard = guard
        self._inner = inner
        self._transcript = transcript
        self._broken = False
        self._done = False
        inner_acc = getattr(inner, "accumulator", None)
        self._own = not isinstance(inner_acc, DeltaAccumulator)
        self._acc: DeltaAccumulator = (
            inner_acc if isinstance(inner_acc, DeltaAccumulator) else DeltaAccumulator()
        )
        #: What was passed through as content after the parser broke (made when it breaks).
        self._tail: DeltaAccumulator | None = None
        self._limit = guard.max_held
        # While the stream is healthy and open, an instance attribute shadows the `feed` method
        # with the per-chunk path built here (`_healthy_feed`, `max_held` measured or not);
        # flushing or breaking the stream removes it (`_slow_path`), and `feed` takes the rest.
        stock = type(inner).feed is _StreamBase.feed
        #: Who records a fed delta: our accumulator (own), the guard on behalf of a stock
        #: protocol stream, or nobody (a stream whose own `feed` records).
        self._add: Any = self._acc.add if (self._own or stock) else None
        # A stock protocol stream's `feed` is `_feed` + record: call `_feed` and record here
        # (one frame less per chunk); this guard refuses feed after flush itself.
        self._inner_feed = inner._feed if stock else inner.feed
        self.feed = self._healthy_feed()  # type: ignore[method-assign]

    def _healthy_feed(self) -> Any:
        """The per-chunk path of an open, unbroken stream, without or with `max_held`."""
        return self._fast_feed() if self._limit is None else self._limited_feed()

    def _fast_feed(self) -> Any:
        """The per-chunk path: one type check, one call into the parser; what it raises goes to `_failed`."""
        inner_feed, add = self._inner_feed, self._add
        failed = self._failed
        if add is None:

            def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
                if not isinstance(text, str):
                    raise InvalidInputError("stream.feed", text)
                try:
                    return inner_feed(text, token_ids)  # type: ignore[no-any-return]
                except PARSER_FAILURES as exc:
                    return failed(exc, text)

            return feed

        def feed_and_record(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            if not isinstance(text, str):
                raise InvalidInputError("stream.feed", text)
            try:
                delta: StreamDelta = inner_feed(text, token_ids)
                add(delta)  # (in the try: a stream of your own that returns no delta fails typed)
            except PARSER_FAILURES as exc:
                return failed(exc, text)
            return delta

        return feed_and_record

    def _limited_feed(self) -> Any:
        """The per-chunk path under `max_held`: `_fast_feed`'s, then what the parser holds measured
        (its counter found once, not per chunk) and, past the limit, `_over_limit`.

        What a parser holds is text it was fed, so it grows by at most each chunk's length: the
        counter is asked only once the text fed since it was last asked could have taken the held
        text past the limit (`room`), not after every chunk."""
        inner_feed, add, failed = self._inner_feed, self._add, self._failed
        held_size, limit = self._held_counter(), self._limit
        assert limit is not None
        room = limit  # characters that can still be fed before the held text could pass the limit

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            nonlocal room
            if not isinstance(text, str):
                raise InvalidInputError("stream.feed", text)
            try:
                delta: StreamDelta = inner_feed(text, token_ids)
                if add is not None:
                    add(delta)
            except PARSER_FAILURES as exc:
                return failed(exc, text)
            room -= len(text)
            if room >= 0:
                return delta
            held = held_size()
            if held > limit:
                return self._over_limit(delta, held)
            room = limit - held
            return delta

        return feed

    def _over_limit(self, delta: StreamDelta, held: int) -> StreamDelta:
        """Past `max_held`: the parser's own part (recorded) and, under "fallback", what it held
        released as content; under "raise", `BufferLimitError`."""
        err = BufferLimitError(
            self._guard.backend, self._guard.name, "stream.feed", f"holds back {held} > {self._limit} chars"
        )
        delta = delta.merged(self._record(self._break(err, "stream.feed", "")))
        self._slow_path()
        return delta

    def _slow_path(self) -> None:
        """From now on every call takes the `feed` method (flushed, or fallen back to content)."""
        self.__dict__.pop("feed", None)

    def _failed(self, exc: BaseException, text: str) -> StreamDelta:
        if isinstance(exc, (StreamStateError, UnsupportedOptionError)):
            raise exc
        delta = self._break(exc, "stream.feed", text)  # raises under "raise"
        self._slow_path()
        return self._record(delta)

    @property
    def broken(self) -> bool:
        """True once the parser raised and the stream fell back to plain content."""
        return self._broken

    @property
    def accumulator(self) -> DeltaAccumulator:
        return self._acc

    def _record(self, delta: StreamDelta) -> StreamDelta:
        if self._broken:
            if self._tail is None:
                self._tail = DeltaAccumulator()
            self._tail.add(delta)
        elif self._own:
            self._acc.add(delta)
        return delta

    def _break(self, exc: BaseException, call: str, text: str) -> StreamDelta:
        self._guard._handle(exc, call, self._transcript)
        self._broken = True
        pending = ""
        getter = getattr(self._inner, "pending_text", None)
        if callable(getter):
            try:
                pending = getter() or ""
            except Exception:  # the parser is already broken; recover what we can
                pending = ""
        return make_delta(pending + text)

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """A chunk after the stream left its per-chunk path (`_healthy_feed`, which takes every chunk
        while it is open and unbroken; `_slow_path`): flushed, it is refused; fallen back, it is
        content. A chunk that is not a `str` is refused (`InvalidInputError`) before the parser or
        the policy sees it, and the stream stays as it was."""
        if not isinstance(text, str):
            raise InvalidInputError("stream.feed", text)
        if self._done:
            raise StreamStateError.fed_after_flush()
        if self._broken:
            return self._record(make_delta(text))
        return self._healthy_feed()(text, token_ids)  # (not reached: a healthy stream keeps its path)

    def _held_counter(self) -> Callable[[], int]:
        """How to measure what the parser holds back: its `pending_size()` where it counts without
        building the text (builtin's call streams), else the length of its `pending_text()`; 0
        where it says neither, or raises."""
        inner = self._inner
        counted = getattr(inner, "pending_size", None)
        getter = getattr(inner, "pending_text", None)
        if callable(counted):

            def held() -> int:
                try:
                    return int(counted())
                except Exception:
                    return 0

        elif callable(getter):

            def held() -> int:
                try:
                    return len(getter() or "")
                except Exception:
                    return 0

        else:
            return lambda: 0
        return held

    def flush(self) -> StreamDelta:
        if self._done:
            return make_delta()
        self._done = True
        self._slow_path()
        if self._broken:
            return make_delta()
        try:
            delta = self._inner.flush()
        except PARSER_FAILURES as exc:
            delta = self._break(exc, "stream.flush", "")
        return self._record(delta)

    def _finished_by_inner(self) -> Any:
        """The inner stream's own `finish()` when the stream is healthy and records itself,
        else `NOT_FINISHED` (the caller then flushes and assembles the result itself).

        Its flush and result in one call (the common end of a stream; after an earlier
        `flush()` its flush is a no-op); a failure in it is handled as a failing flush.
        """
        if self._broken or self._own:
            return NOT_FINISHED
        if not self._done:
            self._done = True
            self._slow_path()
        try:
            return self._inner.finish()
        except PARSER_FAILURES as exc:
            self._record(self._break(exc, "stream.flush", ""))  # raises under "raise"
            return NOT_FINISHED

    def _merged_content(self, content: str | None) -> str | None:
        tail = self._tail.content if self._tail is not None else None
        if tail is None:
            return content
        return (content or "") + tail

    def finish(self) -> R:
        """The inner stream's own result where it can give it, else flushed here and assembled
        from what was recorded (`_assembled`: each kind of stream its own result)."""
        result = self._finished_by_inner()
        if result is not NOT_FINISHED:
            return result  # type: ignore[no-any-return]
        self.flush()
        return self._assembled()

    def _assembled(self) -> R:
        raise NotImplementedError


class GuardedToolStream(_GuardedStream[ToolParseResult]):
    def _assembled(self) -> ToolParseResult:
        acc = self._acc
        return make_tool_result(
            self._merged_content(acc.content), acc.tool_calls(), acc.dropped, acc.reasoning
        )


class GuardedReasoningStream(_GuardedStream[ReasoningParseResult]):
    def _assembled(self) -> ReasoningParseResult:
        reasoning = self._acc.reasoning
        block = getattr(self._inner, "block", None)
        if block is None and reasoning is not None:
            block = ReasoningBlock(content=reasoning, located=False)
        return make_reasoning_result(reasoning, self._merged_content(self._acc.content), block)


class GuardedPipelineStream(_GuardedStream[ParseResult]):
    def _assembled(self) -> ParseResult:
        return ParseResult(
            reasoning=self._acc.reasoning,
            content=self._merged_content(self._acc.content),
            tool_calls=self._acc.tool_calls(),
            block=getattr(self._inner, "block", None),
            dropped=self._acc.dropped,
        )

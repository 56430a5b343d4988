"""The failure policy: what happens when a parser raises.

Every parser the registry hands out is wrapped here, so that no framework
exception escapes untranslated. Per parser, `on_error` chooses:

* ``"raise"`` (default) — a `BackendError` naming backend, parser and the
  failing call, with the original exception as ``__cause__``;
* ``"fallback"`` — the error is logged (logger ``parsebridge``, with backend,
  parser and request/transcript id) and the unparsed text becomes content.
  One-shot: the whole output is content. Streaming: the stream stays usable;
  from the failing chunk on, everything fed is passed through as content,
  preceded by whatever the parser reports it was holding back
  (``pending_text()``, which builtin streams implement).

Runaway protection goes through the same policy: a stream that holds back
more than `max_held` characters fails with `BufferLimitError` (its held text
is released as content under "fallback"), and a parser under a time budget
(`timeout=`, see `budget`) fails with `ParseTimeoutError`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from ..protocol import (
    BackendError,
    BufferLimitError,
    ParsebridgeError,
    ParseResult,
    ReasoningBlock,
    ReasoningParser,
    ReasoningParseResult,
    ReasoningStream,
    StreamDelta,
    ToolCall,
    ToolParser,
    ToolParseResult,
    ToolStream,
)
from ..protocol.errors import StreamStateError, UnsupportedOptionError
from ..protocol.models import make_delta, make_reasoning_result, make_tool_result
from ..protocol.parsers import Closable
from ..protocol.prompt_rule import check_prompt_options
from ..protocol.streams import DeltaAccumulator, _StreamBase
from .call_options import check_call_options

OnError = Literal["raise", "fallback"]
#: `_finished_by_inner`: the inner stream did not finish this one (broken, or not recording itself).
NOT_FINISHED: Any = object()
ON_ERROR_CHOICES: tuple[str, ...] = ("raise", "fallback")
log = logging.getLogger("parsebridge")


def _check_policy(on_error: str) -> OnError:
    if on_error not in ON_ERROR_CHOICES:
        raise ValueError(f"on_error must be one of {ON_ERROR_CHOICES}, not {on_error!r}")
    return on_error  # type: ignore[return-value]


class _Guard(Closable):
    backend: str
    name: str

    def __init__(self, inner: Any, on_error: str, *, max_held: int | None = None) -> None:
        self.inner = inner
        self.backend = getattr(inner, "backend", "python")
        self.name = getattr(inner, "name", type(inner).__name__)
        self.on_error: OnError = _check_policy(on_error)
        if max_held is not None and max_held < 1:
            raise ValueError("max_held must be a positive number of characters")
        self.max_held = max_held

    @property
    def spec(self) -> str:
        return f"{self.backend}:{self.name}"

    def _error(self, exc: BaseException, call: str, transcript: str | None) -> ParsebridgeError:
        if isinstance(exc, (BackendError, UnsupportedOptionError)):
            return exc  # a usage error stays one: never the framework's failure
        err = BackendError(self.backend, self.name, call, f"{type(exc).__name__}: {exc}", transcript)
        err.__cause__ = exc
        return err

    def _handle(self, exc: BaseException, call: str, transcript: str | None) -> None:
        """Raise per policy, or log and return so the caller falls back."""
        if isinstance(exc, (StreamStateError, UnsupportedOptionError)):
            raise exc
        err = self._error(exc, call, transcript)
        if self.on_error == "raise":
            raise err from (exc if err is not exc else exc.__cause__)
        # One line: the error names backend, parser, call and cause; the traceback is for debugging.
        log.warning("parser error, falling back to plain content: %s", err)
        log.debug("traceback of the parser error above", exc_info=exc)

    def _as_is(self, stream: Any) -> bool:
        """Whether a stream is handed out without a guard around it.

        Under "raise" with no `max_held` to measure, a stream that says it is
        `guard_complete` (it records itself, refuses feed after flush, and raises
        nothing but parsebridge errors, framework errors typed) would get nothing
        from the guard but two more objects and a layer at its end.
        """
        return self.on_error == "raise" and self.max_held is None and getattr(stream, "guard_complete", False)

    def __getattr__(self, item: str) -> Any:
        # Anything beyond the protocol (tools, markers, tokenizer…) comes from the parser.
        return getattr(self.inner, item)

    def close(self) -> None:
        """Close the parser (a user's class without `close` owns nothing to give back)."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"<{self.spec} on_error={self.on_error}>"


#: What a guarded stream passes through from the stream it wraps: the calls' spans in the fed
#: text, how far back a later call may start (the CLI's `parse --stream` cuts raw text with them)
#: and the means to forget the spans once cut (`release_calls`).
_PASSED_THROUGH = frozenset({"call_spans", "open_from", "release_calls"})


class _GuardedStream:
    def __getattr__(self, item: str) -> Any:
        if item in _PASSED_THROUGH:
            return getattr(self._inner, item)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {item!r}")

    def __init__(self, guard: _Guard, inner: Any, transcript: str | None) -> None:
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
        # The general path is the `feed` method. While the stream is healthy, open and has no
        # `max_held` to measure, an instance attribute shadows it with the fast path built
        # here; flushing or breaking the stream removes it (`_slow_path`).
        stock = type(inner).feed is _StreamBase.feed
        #: Who records a fed delta: our accumulator (own), the guard on behalf of a stock
        #: protocol stream, or nobody (a stream whose own `feed` records).
        self._add: Any = self._acc.add if (self._own or stock) else None
        # A stock protocol stream's `feed` is `_feed` + record: call `_feed` and record here
        # (one frame less per chunk); this guard refuses feed after flush itself.
        self._inner_feed = inner._feed if stock else inner.feed
        if self._limit is None:
            self.feed = self._fast_feed()  # type: ignore[method-assign]

    def _fast_feed(self) -> Any:
        """The per-chunk path: one call into the parser; what it raises goes to `_failed`."""
        inner_feed, add = self._inner_feed, self._add
        failed = self._failed
        if add is None:

            def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
                try:
                    return inner_feed(text, token_ids)  # type: ignore[no-any-return]
                except Exception as exc:
                    return failed(exc, text)

            return feed

        def feed_and_record(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            try:
                delta: StreamDelta = inner_feed(text, token_ids)
            except Exception as exc:
                return failed(exc, text)
            add(delta)
            return delta

        return feed_and_record

    def _slow_path(self) -> None:
        """From now on every call takes the `feed` method (flushed, or fallen back to content)."""
        self.__dict__.pop("feed", None)

    def _failed(self, exc: Exception, text: str) -> StreamDelta:
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
        """The general path (see `_fast_feed` for the one most chunks take)."""
        if self._done:
            raise StreamStateError.fed_after_flush()
        if self._broken:
            return self._record(make_delta(text))
        try:
            delta: StreamDelta = self._inner_feed(text, token_ids)
        except Exception as exc:
            if isinstance(exc, StreamStateError):
                raise
            return self._record(self._break(exc, "stream.feed", text))
        if self._add is not None:
            self._add(delta)
        limit = self._limit
        if limit is not None:
            held = self._held_size()
            if held > limit:
                err = BufferLimitError(
                    self._guard.backend, self._guard.name, "stream.feed", f"holds back {held} > {limit} chars"
                )
                # The parser's own part is recorded above; what it held is released as content.
                return delta.merged(self._record(self._break(err, "stream.feed", "")))
        return delta

    def _held_size(self) -> int:
        """How much the parser holds back: its `pending_size()` where it counts without building the
        text (builtin's call streams), else the length of its `pending_text()`."""
        inner = self._inner
        counted = getattr(inner, "pending_size", None)
        getter = getattr(inner, "pending_text", None)
        try:
            if callable(counted):
                return int(counted())
            return len(getter() or "") if callable(getter) else 0
        except Exception:
            return 0

    def flush(self) -> StreamDelta:
        if self._done:
            return make_delta()
        self._done = True
        self._slow_path()
        if self._broken:
            return make_delta()
        try:
            delta = self._inner.flush()
        except Exception as exc:
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
        except Exception as exc:
            self._record(self._break(exc, "stream.flush", ""))  # raises under "raise"
            return NOT_FINISHED

    def _merged_content(self, content: str | None) -> str | None:
        tail = self._tail.content if self._tail is not None else None
        if tail is None:
            return content
        return (content or "") + tail


class GuardedToolStream(_GuardedStream):
    def finish(self) -> ToolParseResult:
        result = self._finished_by_inner()
        if result is not NOT_FINISHED:
            return result  # type: ignore[no-any-return]
        self.flush()
        acc = self._acc
        return make_tool_result(
            self._merged_content(acc.content), acc.tool_calls(), acc.dropped, acc.reasoning
        )


class GuardedReasoningStream(_GuardedStream):
    def finish(self) -> ReasoningParseResult:
        result = self._finished_by_inner()
        if result is not NOT_FINISHED:
            return result  # type: ignore[no-any-return]
        self.flush()
        reasoning = self._acc.reasoning
        block = getattr(self._inner, "block", None)
        if block is None and reasoning is not None:
            block = ReasoningBlock(content=reasoning, located=False)
        return make_reasoning_result(reasoning, self._merged_content(self._acc.content), block)


class GuardedToolParser(_Guard):
    """A tool parser under the failure policy (what `get_tool_parser` returns)."""

    inner: ToolParser

    def parse(self, text: str, *, transcript: str | None = None, **kwargs: Any) -> ToolParseResult:
        if kwargs:  # a misspelt keyword is a usage error, before (and whatever) the policy
            check_call_options(f"{self.backend}:{self.name}", "tool", "parse", self.inner.parse, kwargs)
        try:
            return self.inner.parse(text, **kwargs) if kwargs else self.inner.parse(text)
        except Exception as exc:
            self._handle(exc, "parse", transcript)
            return ToolParseResult(content=text or None)

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        return self.parse(text).tool_calls

    def has_tool_calls(self, text: str) -> bool:
        try:
            return bool(self.inner.has_tool_calls(text))
        except Exception as exc:
            self._handle(exc, "has_tool_calls", None)
            return False

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        try:
            return self.inner.format_tool_result(tool_call_id, result)
        except ParsebridgeError:
            raise
        except Exception as exc:
            raise self._error(exc, "format_tool_result", None) from exc

    def stream(self, *, transcript: str | None = None, **kwargs: Any) -> ToolStream:
        if kwargs:
            check_call_options(f"{self.backend}:{self.name}", "tool", "stream", self.inner.stream, kwargs)
        try:
            inner: ToolStream = self.inner.stream(**kwargs)
        except Exception as exc:
            raise self._error(exc, "stream", transcript) from exc
        if self._as_is(inner):
            return inner
        return GuardedToolStream(self, inner, transcript)


class GuardedReasoningParser(_Guard):
    """A reasoning parser under the failure policy (what `get_reasoning_parser` returns)."""

    inner: ReasoningParser

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        transcript: str | None = None,
        **kwargs: Any,
    ) -> ReasoningParseResult:
        """`kwargs` go to the backend (e.g. ``prompt=`` / ``prompt_token_ids=`` for the start state:
        refused, typed, when its parse takes none; `parsebridge.protocol.prompt_rule`); a keyword
        it does not take at all is `UnknownOptionError` (`call_options`), whatever `on_error`."""
        if kwargs:
            check_call_options(f"{self.backend}:{self.name}", "reasoning", "parse", self.inner.parse, kwargs)
            check_prompt_options(f"{self.backend}:{self.name}", self.inner.parse, kwargs)
        try:
            if kwargs:
                return self.inner.parse(text, reasoning_started=reasoning_started, **kwargs)
            return self.inner.parse(text, reasoning_started=reasoning_started)
        except Exception as exc:
            self._handle(exc, "parse", transcript)
            return ReasoningParseResult(content=text or None)

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        return self.parse(text).block

    def has_reasoning(self, text: str) -> bool:
        try:
            return bool(self.inner.has_reasoning(text))
        except Exception as exc:
            self._handle(exc, "has_reasoning", None)
            return False

    def stream(
        self, *, reasoning_started: bool | None = None, transcript: str | None = None, **kwargs: Any
    ) -> ReasoningStream:
        if kwargs:
            check_call_options(
                f"{self.backend}:{self.name}", "reasoning", "stream", self.inner.stream, kwargs
            )
            check_prompt_options(f"{self.backend}:{self.name}", self.inner.stream, kwargs)
        try:
            inner: ReasoningStream = self.inner.stream(reasoning_started=reasoning_started, **kwargs)
        except Exception as exc:
            raise self._error(exc, "stream", transcript) from exc
        if self._as_is(inner):
            return inner
        return GuardedReasoningStream(self, inner, transcript)


class GuardedPipelineStream(_GuardedStream):
    def finish(self) -> ParseResult:
        result = self._finished_by_inner()
        if result is not NOT_FINISHED:
            return result  # type: ignore[no-any-return]
        self.flush()
        return ParseResult(
            reasoning=self._acc.reasoning,
            content=self._merged_content(self._acc.content),
            tool_calls=self._acc.tool_calls(),
            block=getattr(self._inner, "block", None),
            dropped=self._acc.dropped,
        )


class GuardedPipeline(_Guard):
    """A framework's native reasoning→tool chain under the failure policy.

    Generic pipelines are made of guarded parsers already; a native chain
    (vLLM's `vllm.parser`, SGLang's per-chunk chain) is one object, so the
    policy wraps it whole: same errors, same fallback, same `max_held`.
    """

    def __init__(self, inner: Any, on_error: str, *, max_held: int | None = None) -> None:
        super().__init__(inner, on_error, max_held=max_held)
        reasoning_spec, tool_spec = getattr(inner, "specs", (None, None))
        self.backend = (tool_spec or reasoning_spec or "native:pipeline").partition(":")[0]
        self.name = " + ".join(s.partition(":")[2] for s in (reasoning_spec, tool_spec) if s)

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        transcript: str | None = None,
        **kwargs: Any,
    ) -> ParseResult:
        if kwargs:
            check_call_options(f"{self.backend}:{self.name}", "pipeline", "parse", self.inner.parse, kwargs)
            check_prompt_options(f"{self.backend}:{self.name}", self.inner.parse, kwargs)
        try:
            return self.inner.parse(text, reasoning_started=reasoning_started, **kwargs)  # type: ignore[no-any-return]
        except Exception as exc:
            self._handle(exc, "parse", transcript)
            return ParseResult(content=text or None)

    def stream(self, *, transcript: str | None = None, **kwargs: Any) -> Any:
        """The native chain's stream (`feed`/`flush`/`finish` → `ParseResult`), guarded unless `_as_is`."""
        if kwargs:
            check_call_options(f"{self.backend}:{self.name}", "pipeline", "stream", self.inner.stream, kwargs)
        check_prompt_options(f"{self.backend}:{self.name}", self.inner.stream, kwargs)
        try:
            inner = self.inner.stream(**kwargs)
        except Exception as exc:
            raise self._error(exc, "stream", transcript) from exc
        if self._as_is(inner):
            return inner
        return GuardedPipelineStream(self, inner, transcript)

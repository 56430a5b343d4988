"""Stream state shared by every backend: accumulation and the feed/flush/finish life cycle.

A stream turns chunks of model output into `StreamDelta`s. What a client
assembles from those deltas is the stream's result; `DeltaAccumulator` does
that assembly once, the same way for every backend, so that "what was
streamed" is defined in one place and can be compared with the one-shot
parse.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, TypeVar

from .errors import StreamStateError
from .models import (
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParseResult,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
    set_call_id,
)

_Result = TypeVar("_Result", ToolParseResult, ReasoningParseResult)


class _CallState:
    """One call as assembled so far (a plain slotted class: one is made per call per request,
    and a dataclass's `default_factory` doubles its cost)."""

    __slots__ = ("arguments", "id", "ids_seen", "index", "name", "names_seen")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []
        self.ids_seen = 0
        self.names_seen = 0


#: `_assemble`'s state before the first delta: never read, never changed.
_NO_CALL = _CallState(-1)

#: Whether accumulators made now keep what they are given (see `without_history`).
_KEEP_HISTORY: ContextVar[bool] = ContextVar("parsebridge_keep_history", default=True)


@contextmanager
def without_history() -> Iterator[None]:
    """Streams made inside this block keep no history: for a consumer that uses each delta as it
    comes and never calls `finish()` for the text (the CLI's `parse --stream`, whose memory must
    not grow with the output). Their accumulators record nothing, so `finish()` returns no
    content, reasoning or calls; `feed` and `flush` deltas are unchanged."""
    token = _KEEP_HISTORY.set(False)
    try:
        yield
    finally:
        _KEEP_HISTORY.reset(token)


class Discarded(list[str]):
    """A parts list that keeps nothing but whether something was added (truthy from then on):
    what a stream without history records into. `"".join` of it is ""."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        super().__init__()
        self._seen = False

    def append(self, item: str) -> None:
        self._seen = True

    def extend(self, items: Iterable[str]) -> None:
        self._seen = True

    def __bool__(self) -> bool:
        return self._seen


class _Nowhere(list[str]):
    """A parts list that keeps nothing, at the cost of a builtin call: an accumulator's, made
    without history (streams append to it on every chunk)."""

    __slots__ = ()
    # `id` takes one argument, has no effect, and binds to no instance: a no-op in C.
    append = extend = id  # type: ignore[assignment]


def _drop_calls(calls: Iterable[ToolCallDelta]) -> None:
    return None


class DeltaAccumulator:
    """Assembles deltas the way an OpenAI client does, noting protocol breaches.

    `anomalies` records what a client would find wrong in the stream (a call
    announced twice, a fragment for a call never announced, a call with no
    name); conformance turns these into divergence classes.

    Tool-call deltas are kept as the stream returned them and read at the end,
    so a delta is the stream's record: change a copy (`model_copy()`), not a
    delta a stream handed out.
    """

    __slots__ = (
        "_anomalies",
        "_calls",
        "_unread",
        "add_calls",
        "content_parts",
        "dropped_parts",
        "keeps_history",
        "reasoning_parts",
    )

    def __init__(self) -> None:
        #: False when made inside `without_history()`: nothing given is kept.
        self.keeps_history = _KEEP_HISTORY.get()
        #: Text fragments in arrival order. A stream's fused per-chunk path appends its
        #: text here directly (one list append instead of `add`); call deltas go through `add`.
        self.content_parts: list[str] = [] if self.keeps_history else _Nowhere()
        self.reasoning_parts: list[str] = [] if self.keeps_history else _Nowhere()
        #: Text a convention left out of the content (never in a delta: see `ToolParseResult.dropped`).
        #: Made without history, only whether there was any (`parse --stream` says so).
        self.dropped_parts: list[str] = [] if self.keeps_history else Discarded()
        self._calls: dict[int, _CallState] = {}
        self._anomalies: list[str] = []
        #: Call deltas recorded but not yet assembled into `_calls` (see `add_calls`).
        self._unread: list[ToolCallDelta] = []
        #: Record tool-call fragments (the part of `add` that is not text). Per chunk this is
        #: one list `extend`; they are assembled when something reads them (`tool_calls()`,
        #: `arguments_text()`, `anomalies`), in one pass at the end instead of one per chunk.
        self.add_calls: Callable[[Iterable[ToolCallDelta]], None] = (
            self._unread.extend if self.keeps_history else _drop_calls
        )

    def add(self, delta: StreamDelta) -> None:
        if delta.content:
            self.content_parts.append(delta.content)
        if delta.reasoning:
            self.reasoning_parts.append(delta.reasoning)
        if delta.tool_calls:
            self.add_calls(delta.tool_calls)

    def _assemble(self) -> None:
        """Fold the recorded call deltas into per-call state, in arrival order."""
        unread = self._unread
        if not unread:
            return
        calls, anomalies = self._calls, self._anomalies
        # Fragments of one call arrive in runs: its state is looked up once per run.
        last: int | None = None
        state = _NO_CALL  # replaced at the first delta (its index is never None)
        for d in unread:
            index = d.index
            if index != last:
                last = index
                got = calls.get(index)
                if got is None:
                    got = calls[index] = _CallState(index)
                    if d.id is None and d.name is None:
                        anomalies.append(f"call {index}: first delta carries neither id nor name")
                state = got
            # The first id and name a call was sent stay its own, as for a client that keys a call
            # by its index and fills each field once: a later, different one is an anomaly, and
            # `finish()` stays the fold of the deltas (SGLang 0.4.10's qwen3_coder streams every
            # call at index -1, each with its own id and name).
            call_id, name, arguments = d.id, d.name, d.arguments
            if call_id is not None:
                state.ids_seen += 1
                if state.id is None:
                    state.id = call_id
                elif state.id != call_id:
                    anomalies.append(f"call {index}: id changed from {state.id!r} to {call_id!r}")
            if name is not None:
                state.names_seen += 1
                if state.name is None:
                    state.name = name
                elif state.name != name:
                    anomalies.append(f"call {index}: name changed from {state.name!r} to {name!r}")
            if arguments:
                state.arguments.append(arguments)
        unread.clear()  # in place: `add_calls` is bound to this list

    @property
    def anomalies(self) -> list[str]:
        """What a client would find wrong in the stream so far."""
        self._assemble()
        return self._anomalies

    @property
    def content(self) -> str | None:
        return "".join(self.content_parts) or None

    @property
    def reasoning(self) -> str | None:
        return "".join(self.reasoning_parts) or None

    @property
    def dropped(self) -> str | None:
        return "".join(self.dropped_parts) or None

    def tool_calls(self) -> list[ToolCall]:
        self._assemble()
        calls: list[ToolCall] = []
        for index, state in sorted(self._calls.items()):
            if state.name is None:
                self._anomalies.append(f"call {index}: never named")
            if state.ids_seen > 1:
                self._anomalies.append(f"call {index}: id sent {state.ids_seen} times")
            if state.names_seen > 1:
                self._anomalies.append(f"call {index}: name sent {state.names_seen} times")
            call = make_tool_call(state.name or "", "".join(state.arguments), state.id)
            if state.id is None:  # the stream never sent one: say so (""), never make one up
                set_call_id(call, "")
            calls.append(call)
        return calls

    def arguments_text(self, index: int) -> str:
        """The joined argument fragments of call `index` (as streamed)."""
        self._assemble()
        state = self._calls.get(index)
        return "".join(state.arguments) if state else ""


class _StreamBase(abc.ABC):
    """Life cycle shared by tool and reasoning streams.

    Subclasses implement `_feed` and `_flush`; this class records every delta
    so that `finish()` returns exactly what a client assembled.
    """

    def __init__(self) -> None:
        self._acc = DeltaAccumulator()
        self._flushed = False

    @abc.abstractmethod
    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta: ...

    def _flush(self) -> StreamDelta:
        return make_delta()

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """Feed the next chunk; return what may be shown now."""
        if self._flushed:
            raise StreamStateError.fed_after_flush()
        delta = self._feed(text, token_ids)
        self._acc.add(delta)
        return delta

    def flush(self) -> StreamDelta:
        """End of output: return whatever was held back. Later calls return an empty delta."""
        if self._flushed:
            return make_delta()
        self._flushed = True
        delta = self._flush()
        self._acc.add(delta)
        return delta

    @property
    def accumulator(self) -> DeltaAccumulator:
        return self._acc

    @property
    def finished(self) -> bool:
        return self._flushed


class ToolStreamBase(_StreamBase):
    """Base of per-request tool-call streams."""

    def finish(self) -> ToolParseResult:
        """Flush, then return everything streamed assembled into one result."""
        self.flush()
        acc = self._acc
        return make_tool_result(acc.content, acc.tool_calls(), acc.dropped, acc.reasoning)


class ReasoningStreamBase(_StreamBase):
    """Base of per-request reasoning streams; `block` is set by subclasses that know it."""

    block: ReasoningBlock | None = None

    def finish(self) -> ReasoningParseResult:
        self.flush()
        reasoning = self._acc.reasoning
        block = self.block
        if block is None and reasoning is not None:
            block = ReasoningBlock(content=reasoning, located=False)
        return make_reasoning_result(reasoning, self._acc.content, block)


class _Buffering(_StreamBase):
    """Keeps every chunk and shows nothing until the end, where `_flush` parses `_text()` at once."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks: list[str] = []
        self._size = 0

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._chunks.append(text)
        self._size += len(text)
        return make_delta()

    def _text(self) -> str:
        return "".join(self._chunks)

    def pending_text(self) -> str:
        """Everything fed: nothing is shown before the flush parses it. A guard releases this as
        content when that parse fails under ``on_error="fallback"`` (without it, the whole output
        was lost) and measures it against `max_held`."""
        return self._text()

    def pending_size(self) -> int:
        """The length of `pending_text`, counted as chunks come (what `max_held` measures, without joining)."""
        return self._size


class BufferedToolStream(_Buffering, ToolStreamBase):
    """Holds everything until the end, then emits the one-shot parse as deltas.

    The default for parsers that only implement `parse`: streaming is then
    trivially equal to one-shot, at the cost of showing nothing early.
    """

    def __init__(self, parser: _OneShotTool) -> None:
        super().__init__()
        self._parser = parser

    def _flush(self) -> StreamDelta:
        result = checked_result(self._parser.parse(self._text()), ToolParseResult, self._parser)
        return result_as_delta(result)


class BufferedReasoningStream(_Buffering, ReasoningStreamBase):
    """Reasoning counterpart of `BufferedToolStream`."""

    def __init__(self, parser: _OneShotReasoning, reasoning_started: bool | None) -> None:
        super().__init__()
        self._parser = parser
        self._started = reasoning_started

    def _flush(self) -> StreamDelta:
        result = self._parser.parse(self._text(), reasoning_started=self._started)
        result = checked_result(result, ReasoningParseResult, self._parser)
        self.block = result.block
        return StreamDelta(content=result.content or "", reasoning=result.reasoning or "")


def checked_result(result: object, kind: type[_Result], parser: object) -> _Result:
    """`result` when it is a `kind`; else a `TypeError` naming what `parser.parse` returned (a
    user's parser may return anything: said here, not as an attribute missing further on)."""
    if isinstance(result, kind):
        return result
    got = "None" if result is None else type(result).__name__
    article = "" if result is None else "an " if got[0].lower() in "aeiou" else "a "
    raise TypeError(f"{type(parser).__name__}.parse returned {article}{got}, not a {kind.__name__}")


def result_as_delta(result: ToolParseResult, first_index: int = 0) -> StreamDelta:
    """A whole tool result as one delta (each call: one delta with id, name and all arguments)."""
    return StreamDelta(
        content=result.content or "",
        tool_calls=[
            ToolCallDelta(index=first_index + i, id=c.id, name=c.name, arguments=c.arguments_json)
            for i, c in enumerate(result.tool_calls)
        ],
    )


class _OneShotTool(Protocol):
    def parse(self, text: str) -> ToolParseResult: ...


class _OneShotReasoning(Protocol):
    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult: ...

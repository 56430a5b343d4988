"""Streams around a framework "stepper", shared by the vLLM and SGLang adapters.

Both adapters feed one framework session chunk by chunk through a stepper
that holds a chunk back until it knows whether it was the last (the
servers parse the final chunk with a "finished" flag). The streams around
it — a tool stream, a reasoning stream that locates its block at the end,
and a native pipeline stream — are the same for both frameworks, so they
live here once, with the native pipeline all four framework adapters share
(`FrameworkPipeline`). Nothing here imports a framework.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from ..protocol import (
    BackendError,
    DeltaAccumulator,
    ParseResult,
    Pipeline,
    ReasoningStreamBase,
    StreamDelta,
    ToolParseResult,
    ToolSpec,
    ToolStreamBase,
)
from ..protocol.errors import InvalidInputError, StreamStateError, call_typed
from ..protocol.models import make_delta
from ._common import locate_reasoning

T = TypeVar("T")
#: When a stream's last chunk is parsed as the server's final one: held back until the
#: next feed shows it was the last ("last_chunk"), or an empty final chunk ("empty_chunk").
EndOfStream = Literal["last_chunk", "empty_chunk"]
END_OF_STREAM_CHOICES: tuple[str, ...] = ("last_chunk", "empty_chunk")
Markers = Callable[[], tuple[str | None, str | None]]


def check_end_of_stream(value: str) -> EndOfStream:
    """`value` when it names an end-of-stream mode; else a ValueError naming the choices."""
    if value not in END_OF_STREAM_CHOICES:
        raise ValueError(f"end_of_stream must be one of {END_OF_STREAM_CHOICES}, not {value!r}")
    return value  # type: ignore[return-value]


def call_framework(backend: str, spec_name: str, call: str, fn: Callable[[], T]) -> T:
    """Run a framework call; anything it raises becomes a `BackendError` with the original as cause."""
    try:
        return fn()
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError.wrapping(backend, spec_name, call, exc) from exc


class Stepper(Protocol):
    """One framework session stepped chunk by chunk (`vllm._stream.VllmStepper`, `sglang._stepper._Stepper`).

    The per-chunk path is the `feed` that `attach` returns, with nothing around
    it: it records every delta it returns in the stream's accumulator, refuses
    chunks after `flush` (`StreamStateError`), and raises only parsebridge
    errors (what the framework raises arrives as `BackendError`). `flush`
    returns the last delta for the stream to record.

    Only the stream holds that `feed`: a stepper that kept a closure over
    itself would be a reference cycle, which keeps every finished stream and
    the framework parser in it alive until the next garbage collection.
    """

    text_seen: list[str]
    #: (backend, parser label) for errors raised at the end of the stream.
    spec: tuple[str, str]

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]: ...
    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta: ...
    def flush(self) -> StreamDelta: ...
    def pending_text(self) -> str: ...


closed_error = StreamStateError.fed_after_flush


def record_into(acc: DeltaAccumulator) -> Callable[[str, str, list[Any] | None], None]:
    """`acc.add` for a delta given as parts, with the common text-only case as one or two appends."""
    content_append, reasoning_append, add_calls = (
        acc.content_parts.append,
        acc.reasoning_parts.append,
        acc.add_calls,
    )

    def record(content: str, reasoning: str, calls: list[Any] | None) -> None:
        if content:
            content_append(content)
        if reasoning:
            reasoning_append(reasoning)
        if calls:
            add_calls(calls)

    return record


class HoldingStepper:
    """What the vLLM and SGLang steppers share (`Stepper`): the end-of-stream convention (`end`:
    each chunk held back until the next `feed` shows it was not the last, or every chunk parsed at
    once and an empty final chunk), the text fed, and `attach`."""

    def __init__(self, end_of_stream: str) -> None:
        self.end: EndOfStream = check_end_of_stream(end_of_stream)
        self._hold = self.end == "last_chunk"
        self.text_seen: list[str] = []
        self.closed = False

    def _own_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta] | None:
        """A per-chunk `feed` of the stepper's own, recording into `acc`; None: `feed` serves."""
        return None

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        raise NotImplementedError

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """Record into `acc`; the stream's per-chunk `feed` (`_own_feed`, else `feed`). Not kept
        here: see `Stepper`."""
        own = self._own_feed(acc)
        if own is not None:
            return own
        self._record = record_into(acc)
        return self.feed


def finish_typed(stepper: Stepper, finish: Callable[[], T]) -> T:
    """`finish` with anything but a parsebridge error raised as `BackendError` (call "stream.flush"),
    as the guard would raise it."""
    backend, label = stepper.spec
    return call_typed(backend, label, "stream.flush", finish)


class _StepperFed:
    """What the three streams around a stepper share: the stepper's `feed` is the stream's own
    (`_attach`), and the text it holds back is the stream's."""

    #: Under on_error="raise" the guard hands such a stream out as is: it records itself,
    #: refuses feed after flush and a chunk that is not text (each stepper's `feed` checks),
    #: and raises nothing but parsebridge errors (see `Stepper`).
    guard_complete = True
    broken = False
    _stepper: Stepper

    def _attach(self, stepper: Stepper, acc: DeltaAccumulator) -> None:
        self._stepper = stepper
        self.feed = stepper.attach(acc)  # type: ignore[method-assign]  # the per-chunk path: no frame here

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        return self.feed(text, token_ids)  # the instance's `feed` (see `_attach`)

    _feed = feed  # never called: `feed` above replaces a protocol stream's feed-and-record

    def pending_text(self) -> str:
        return self._stepper.pending_text()


class SteppedToolStream(_StepperFed, ToolStreamBase):
    """A tool-call stream: every chunk through the stepper (whose `feed` is this stream's)."""

    def __init__(self, stepper: Stepper) -> None:
        super().__init__()
        self._attach(stepper, self._acc)

    def _flush(self) -> StreamDelta:
        return self._stepper.flush()

    def finish(self) -> ToolParseResult:
        return finish_typed(self._stepper, super().finish)


class SteppedReasoningStream(_StepperFed, ReasoningStreamBase):
    """A reasoning stream; at the end the block is located in the text that was fed."""

    def __init__(self, stepper: Stepper, markers: Markers) -> None:
        super().__init__()
        self._markers = markers
        self._attach(stepper, self._acc)

    def _flush(self) -> StreamDelta:
        return finish_typed(self._stepper, self._flush_and_locate)

    def _flush_and_locate(self) -> StreamDelta:
        delta = self._stepper.flush()
        reasoning = (self._acc.reasoning or "") + delta.reasoning
        start, end = self._markers()
        self.block = locate_reasoning("".join(self._stepper.text_seen), reasoning or None, start, end)
        return delta


class SteppedPipelineStream(_StepperFed):
    """Reasoning and tools through one framework session, as one server request."""

    def __init__(self, stepper: Stepper, markers: Markers) -> None:
        self._markers = markers
        self._acc = DeltaAccumulator()
        self._done = False
        self._attach(stepper, self._acc)

    @property
    def accumulator(self) -> DeltaAccumulator:
        return self._acc

    def flush(self) -> StreamDelta:
        if self._done:
            return make_delta()
        self._done = True
        delta = self._stepper.flush()
        self._acc.add(delta)
        return delta

    def finish(self) -> ParseResult:
        return finish_typed(self._stepper, self._finish)

    def _finish(self) -> ParseResult:
        self.flush()
        start, end = self._markers()
        reasoning = self._acc.reasoning
        return ParseResult(
            reasoning=reasoning,
            content=self._acc.content,
            tool_calls=self._acc.tool_calls(),
            block=locate_reasoning("".join(self._stepper.text_seen), reasoning, start, end),
        )


class FrameworkPipeline(Pipeline):
    """A framework's own reasoning→tool chain: one session runs both of its parsers (not two chained).

    The vLLM, SGLang, Dynamo and smg pipelines have this shape; each names its backend and
    opens its session in `_open`.
    """

    backend: ClassVar[str]

    def __init__(
        self,
        reasoning: str,
        tool: str,
        *,
        tools: Sequence[ToolSpec] | None = None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> None:
        super().__init__(None, None, reasoning_started=reasoning_started)
        self.reasoning_name, self.tool_name = reasoning, tool
        self._open(tools, options)

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        """Start the framework's session for this pipeline's parsers."""
        raise NotImplementedError

    @property
    def specs(self) -> tuple[str | None, str | None]:
        return f"{self.backend}:{self.reasoning_name}", f"{self.backend}:{self.tool_name}"

    def _started(self, reasoning_started: bool | None) -> bool | None:
        """Whether reasoning has started: the call's say, else the pipeline's."""
        return self.reasoning_started if reasoning_started is None else reasoning_started

    def has_tool_calls(self, text: str) -> bool:
        """Whether the framework's chain reads a tool call in `text` (it has no separate tool
        parser to ask for a marker, so it parses: a call's start alone may not count)."""
        if not isinstance(text, str):
            raise InvalidInputError("has_tool_calls", text)
        return bool(self.parse(text).tool_calls)

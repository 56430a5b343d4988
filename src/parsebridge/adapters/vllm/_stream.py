"""`VllmStepper`: one vLLM session fed chunk by chunk, the per-chunk path of every vLLM stream.

End of stream: vLLM's server parses its last chunk with the "finished"
flag, so with ``end_of_stream="last_chunk"`` each chunk is held back until
the next `feed` (or `flush`) shows whether it was the last; with
``"empty_chunk"`` every chunk is parsed at once and `flush` parses an empty
finished chunk.

Two per-chunk paths, chosen once per stream by `VllmStepper.attach`:

* 0.33+: `native_feed`, a closure that steps vLLM's `ChatStreamProcessor`
  (what its chat server calls) and reads the `DeltaMessage` in the same
  frame, every name bound once per stream.
* older releases: `VllmStepper.feed`, one `ServingLoopSession.step` (the
  re-stated serving loop) translated by `_translate.call_deltas`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ...protocol import BackendError, DeltaAccumulator, StreamDelta, ToolCallDelta
from ...protocol.errors import refused_chunk, token_id_list
from ...protocol.models import call_delta_of, delta_of, empty_delta, make_delta
from .._stepped import EndOfStream, HoldingStepper
from ._driver import NativeSession
from ._translate import call_deltas

if TYPE_CHECKING:
    from ._compat import VllmApi


class StepperEngine(Protocol):
    """What a stepper needs of `_engine.VllmEngine` (named structurally: the engine builds steppers
    itself, to probe a start state, so importing it here would close an import circle)."""

    label: str
    end_of_stream: EndOfStream
    api: VllmApi

    def _new_session(self, prompt_ids: list[int]) -> Any: ...

    def encode(self, text: str) -> list[int]: ...

    def id_limit(self) -> int | None: ...


#: A chunk held back until the next `feed` shows whether it was the last: (text, token ids).
HeldChunk = tuple[str, list[int]]
#: One engine chunk, translated: (content, reasoning, call deltas or None).
ChunkParts = tuple[str, str, list[ToolCallDelta] | None]


class VllmStepper(HoldingStepper):
    """One vLLM session fed chunk by chunk, with the chosen end-of-stream convention.

    On 0.33+ a chunk is one `ChatStreamProcessor.step` (the processor is built
    with the stream), its `DeltaMessage` read field by field (`native_feed`);
    older releases step the re-stated serving loop (`ServingLoopSession.step`).
    """

    def __init__(
        self, engine: StepperEngine, prompt_ids: list[int], end_of_stream: EndOfStream | None
    ) -> None:
        super().__init__(end_of_stream or engine.end_of_stream)
        self.engine = engine
        # `engine.session` and the processor without their `_wrap` closures: a stream's set-up is
        # paid per request.
        try:
            session = self.session = engine._new_session(prompt_ids)
            native = isinstance(session, NativeSession)
            processor = session.processor if native else None
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("vllm", engine.label, "construct", exc) from exc
        self.call = "parse_delta" if native else "extract_*_streaming"
        self._step = session.step
        self._native: Any = None
        if native:
            self._processor = processor
            self._native = processor.step
            self._prompt_ids = session.prompt_token_ids
        self._reasoning_field = engine.api.delta_reasoning_field
        self.pending: HeldChunk | None = None

    def _own_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta] | None:
        """On 0.33+ the closure built here (`native_feed`)."""
        return native_feed(self, acc) if self._native is not None else None

    # ------------------------------------------------------------------ older releases

    def _run(self, text: str, ids: list[int], finished: bool) -> ChunkParts:
        """One engine chunk through the serving loop."""
        # `call_framework` inlined: no closure per chunk.
        try:
            delta = self._step(text, ids, finished)
        except BackendError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        if delta is None:
            return "", "", None
        tool_calls = delta.tool_calls
        return (
            delta.content or "",
            getattr(delta, self._reasoning_field) or "",
            call_deltas(tool_calls) if tool_calls else None,
        )

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if self.closed or not isinstance(text, str):
            raise refused_chunk(text)
        ids = self.token_ids(text, token_ids)
        self.text_seen.append(text)
        if not self._hold:
            parts = self._run(text, ids, False)
        else:
            held, self.pending = self.pending, (text, ids)
            if held is None:
                return make_delta()
            try:
                parts = self._run(held[0], held[1], False)
            except BaseException:
                self.pending = held  # the failing chunk stays pending (see `native_feed`)
                raise
        self._record(*parts)
        return make_delta(*parts)

    # ------------------------------------------------------------------ both paths

    def token_ids(self, text: str, token_ids: Sequence[int] | None) -> list[int]:
        """The chunk's ids: the caller's, or `text` encoded. Ids that are not a sequence of ints
        are the caller's mistake: `InvalidInputError`, before the stream changes."""
        if token_ids is not None:
            return token_id_list(token_ids, vocab_size=self.engine.id_limit())
        try:
            return self.engine.encode(text)
        except BackendError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    @property
    def spec(self) -> tuple[str, str]:
        return "vllm", self.engine.label

    def _error(self, exc: Exception) -> BackendError:
        return BackendError.wrapping("vllm", self.engine.label, self.call, exc)

    def flush(self) -> StreamDelta:
        """The final chunk (recorded by the stream, not here)."""
        self.closed = True
        if not self._hold:
            return make_delta(*self._run("", [], True)) if self.text_seen else make_delta()
        if self.pending is None:
            return make_delta()  # nothing was generated: the server sends an empty final chunk
        text, ids = self.pending
        self.pending = None
        return make_delta(*self._run(text, ids, True))

    def pending_text(self) -> str:
        return self.pending[0] if self.pending else ""


# ====================================================================== 0.33+


# `native_feed`'s closure reads the `DeltaMessage` in the same frame: its text goes straight
# into the accumulator's parts and the delta is built by `delta_of` (`record_into` and a reader
# without their frames). Fast path: a delta with one call of vLLM's own classes (every argument
# fragment is one) has its fields read as attributes, without `call_deltas`' probing, and is
# built with its call delta by `call_delta_of`.
#
# When a chunk is held back, the step parses the chunk held last time. If that step fails, the
# held chunk stays pending: under the fallback policy the guard shows `pending_text()` + the
# caller's text, so the failing chunk must still be pending.


def native_feed(stepper: VllmStepper, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
    """`feed` on 0.33+: one `ChatStreamProcessor.step` per chunk, its `DeltaMessage` read into a
    `StreamDelta` recorded in `acc`, in one frame with every name bound once here (see above)."""
    step, processor, prompt_ids = stepper._native, stepper._processor, stepper._prompt_ids
    hold = stepper._hold
    seen, ids_of, reasoning_field = stepper.text_seen.append, stepper.token_ids, stepper._reasoning_field
    content_append, reasoning_append = acc.content_parts.append, acc.reasoning_parts.append
    add_calls, api, limit = acc.add_calls, stepper.engine.api, stepper.engine.id_limit()
    tool_cls, fn_cls = api.DeltaToolCall, api.DeltaFunctionCall  # vLLM's own delta classes

    def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if stepper.closed or not isinstance(text, str):
            raise refused_chunk(text)
        ids = token_id_list(token_ids, vocab_size=limit) if token_ids is not None else ids_of(text, None)
        seen(text)
        if hold:  # hold this chunk, parse the one held last time
            held = stepper.pending
            stepper.pending = (text, ids)
            if held is None:
                return empty_delta()
            text, ids = held
        if not (text or ids or processor.num_output_tokens):
            return empty_delta()  # the empty chunk before any token, which the server skips
        try:
            delta = step(text, ids, None, prompt_ids).delta
        except BaseException as exc:
            if hold:
                stepper.pending = held
            if isinstance(exc, Exception):
                raise stepper._error(exc) from exc
            raise
        if delta is None:
            return empty_delta()
        content = delta.content or ""
        if content:
            content_append(content)
        reasoning = getattr(delta, reasoning_field) or ""
        if reasoning:
            reasoning_append(reasoning)
        tool_calls = delta.tool_calls
        if not tool_calls:
            return delta_of(content, reasoning, [])
        tc = tool_calls[0]
        if len(tool_calls) == 1 and type(tc) is tool_cls and type(fn := tc.function) is fn_cls:
            args = a if isinstance(a := fn.arguments, str) else ""
            out = call_delta_of(content, reasoning, tc.index or 0, tc.id or None, fn.name or None, args)
            add_calls(out.tool_calls)
            return out
        calls = call_deltas(tool_calls)
        add_calls(calls)
        return delta_of(content, reasoning, calls)

    return feed

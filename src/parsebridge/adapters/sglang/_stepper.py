"""`_Stepper`: one SGLang session fed chunk by chunk, as SGLang's server steps it.

End of stream: SGLang's server handles the *last* engine chunk together with
the finish reason (that is when `parse_stream_end()` and the flush of
unstreamed arguments happen, in the same step). parsebridge's `feed` cannot
know which chunk is the last, so by default a stream holds each chunk back
until the next `feed` (or `flush`) shows whether it was the last
(``end_of_stream="last_chunk"``: one chunk of latency, faithful to a stream
that ends on a stop string or max_tokens). ``end_of_stream="empty_chunk"``
parses every chunk at once and ends with an empty finishing chunk, as when
generation stops on an EOS token whose text is empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    StreamDelta,
    ToolCallDelta,
)
from ...protocol.errors import refused_chunk
from ...protocol.models import (
    blank_delta,
    call_delta_of,
    delta_of,
    make_call_delta,
    make_delta,
)
from .._stepped import (
    EndOfStream,
    HoldingStepper,
)
from ._engine import SglangEngine


class _Stepper(HoldingStepper):
    """One SGLang session fed chunk by chunk, with the chosen end-of-stream convention.

    A non-final chunk of a request with only a tool parser is one framework
    call: `feed` makes it itself (`_tool_feed`); the final chunk, and requests
    with both parsers, take `Session.step_parts`. (A request with only a
    reasoning parser has its own stream, `SglangReasoningStream`.)
    """

    def __init__(
        self, engine: SglangEngine, reasoning_started: bool | None, end_of_stream: EndOfStream | None
    ) -> None:
        super().__init__(end_of_stream or engine.end_of_stream)
        self.engine = engine
        try:
            self.session = engine.session(reasoning_started)
            self._tool_lane = self.session.tool_lane()
        except Exception as exc:
            raise BackendError.wrapping("sglang", engine.label, "construct", exc) from exc
        self._step = self.session.step_parts
        self.pending: str | None = None

    def _own_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta] | None:
        """Its own closure for a request with only a tool parser (`_tool_feed`)."""
        return self._tool_feed(acc) if self._tool_lane is not None else None

    def _tool_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """`feed` for a request with only a tool parser: every name it needs bound once here.

        Per chunk: one framework call, its text and call deltas recorded in the accumulator,
        one delta. A chunk without calls (the most common: SGLang's detectors buffer a call's
        text) fills a `blank_delta` here, without `delta_of`'s frame; one argument fragment, the
        most common call chunk, is `call_delta_of`.
        """
        stepper, lane, hold = self, self._tool_lane, self._hold
        assert lane is not None
        c_append, add_calls = acc.content_parts.append, acc.add_calls
        call_deltas = self._call_deltas
        # (`text_seen` is not kept: only a stream with a reasoning parser reads it, to locate the
        # block, and such a request has no tool lane.)

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            if stepper.closed or not isinstance(text, str):
                raise refused_chunk(text)
            if hold:
                chunk = stepper.pending
                stepper.pending = text
                if chunk is None:
                    return make_delta()
            else:
                chunk = text
            try:
                content, items = lane(chunk)
                content = content or ""
                if not items:
                    out = None
                elif len(items) == 1 and not (item := items[0]).name:  # an argument fragment
                    out = call_delta_of(content, "", item.tool_index, None, None, item.parameters or "")
                else:
                    out = delta_of(content, "", call_deltas(items))
            except Exception as exc:
                if hold:
                    stepper.pending = chunk  # the failing chunk stays pending (the guard shows it)
                raise stepper._error(exc) from exc
            if content:
                c_append(content)
            if out is None:
                delta = blank_delta()
                delta.content, delta.reasoning, delta.tool_calls = content, "", []
                return delta
            add_calls(out.tool_calls)
            return out

        return feed

    def _run(self, text: str, finished: bool) -> tuple[str, str, list[ToolCallDelta] | None]:
        """One engine chunk through the session: (content, reasoning, call deltas or None)."""
        # Non-final chunks of a single-parser request never come here (see `attach`).
        try:
            reasoning, content, raw_calls = self._step(text, finished)
        except BackendError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        calls = (
            [make_call_delta(c.index, c.id, c.name, c.arguments) for c in raw_calls] if raw_calls else None
        )
        return content, reasoning, calls

    def _call_deltas(self, items: list[Any]) -> list[ToolCallDelta]:
        """The server's tool-call deltas for one chunk's items (an item with a name opens a call)."""
        api, tool_name = self.session.api, self.engine.tool_name
        out = []
        for item in items:
            if item.name:
                out.append(
                    make_call_delta(
                        item.tool_index,
                        api.call_id(tool_name, item.name, item.tool_index),
                        item.name,
                        item.parameters or "",
                    )
                )
            else:
                out.append(make_call_delta(item.tool_index, None, None, item.parameters or ""))
        return out

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """`token_ids` are ignored: SGLang's parsers take text only."""
        if self.closed or not isinstance(text, str):
            raise refused_chunk(text)
        self.text_seen.append(text)
        hold = self._hold
        if hold:
            chunk = self.pending
            if chunk is None:
                self.pending = text
                return make_delta()
        else:
            chunk = text
        # `pending` moves on only once the held chunk went through, so that a
        # failure reports it (see `pending_text`) and the guard adds `text`.
        content, reasoning, calls = self._run(chunk, False)
        if hold:
            self.pending = text
        self._record(content, reasoning, calls)
        return make_delta(content, reasoning, calls)

    @property
    def spec(self) -> tuple[str, str]:
        return "sglang", self.engine.label

    def _error(self, exc: Exception) -> BackendError:
        return BackendError.wrapping("sglang", self.engine.label, "parse_stream_chunk", exc)

    def flush(self) -> StreamDelta:
        """The final chunk (recorded by the stream, not here)."""
        self.closed = True
        if not self._hold:
            return make_delta(*self._run("", True))
        # An empty generation still has the server's finishing step (no text): run it, as `parse`
        # runs the parsers on empty text.
        delta = make_delta(*self._run(self.pending or "", True))
        self.pending = None
        return delta

    def pending_text(self) -> str:
        """Text fed but not shown: what SGLang's detectors buffer, then the chunk held back."""
        return self.session.held_text() + (self.pending or "")


# ====================================================================== tool calls

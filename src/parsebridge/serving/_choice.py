"""Per-choice streaming state: reasoning, then the tool stage, normalised to the OpenAI convention.

A `ChoiceStream` is what one choice of one request needs. It chains a
reasoning stream and a content stage (a tool-call stream, a forced-call
stage, or plain pass-through), applies the processor's failure policy around
them, and rewrites whatever the backend emitted into the delta convention
clients rely on: per call one first delta carrying a dense `index`, an `id`
and the `name`, then argument-only fragments. Backends differ in how closely
they keep that convention (a repeated id, a fragment before the name, a
call index that starts at 3); the server must not pass those differences on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..protocol import (
    BackendError,
    ParseResult,
    StreamDelta,
    ToolCallDelta,
    new_call_id,
)
from ..protocol.errors import InvalidInputError, StreamStateError, token_id_list
from ..protocol.models import make_call_delta, make_delta
from ..protocol.streams import DeltaAccumulator

log = logging.getLogger("parsebridge")

OnError = Literal["raise", "fallback"]


def _is_incomplete(char: str) -> bool:
    """Whether a last character may be half of one still to come: U+FFFD (a detokenizer's stand-in
    for a partial UTF-8 sequence) or a high surrogate without its low half."""
    return char == "\ufffd" or "\ud800" <= char <= "\udbff"


class Stage(Protocol):
    """Anything fed text that returns deltas: a parser stream or a forced-call stage."""

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta: ...
    def flush(self) -> StreamDelta: ...


@dataclass
class _Call:
    index: int
    id: str
    name: str


@dataclass
class _Orphan:
    id: str | None = None
    arguments: list[str] = field(default_factory=list)


class _TextStage:
    """Adapts a stage whose `feed` takes text only (the forced-call stages)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        return self.inner.feed(text)  # type: ignore[no-any-return]

    def flush(self) -> StreamDelta:
        return self.inner.flush()  # type: ignore[no-any-return]


def _spec_of(obj: Any) -> tuple[str, str]:
    backend = getattr(obj, "backend", None) or "parsebridge"
    name = getattr(obj, "name", None) or type(obj).__name__
    return str(backend), str(name)


def as_backend_error(exc: BaseException, owner: Any, call: str, request_id: str | None) -> BackendError:
    """`exc` as a `BackendError` naming backend, parser, call and request (kept if already one)."""
    if isinstance(exc, BackendError):
        if request_id and exc.transcript is None:
            exc.transcript = request_id
        return exc
    backend, name = _spec_of(owner)
    err = BackendError(backend, name, call, f"{type(exc).__name__}: {exc}", request_id)
    err.__cause__ = exc
    return err


class ChoiceStream:
    """One choice's streaming state; `feed` and `flush` return normalised `StreamDelta`s.

    Build it through `RequestProcessor.choice_stream()` (or let `ChunkStream`
    do it). `result()` is what a client assembled from everything emitted;
    `finish_reason()` maps the engine's reason to the OpenAI one.
    """

    def __init__(
        self,
        *,
        reasoning: Stage | None,
        stage: Stage | None,
        pipeline: Stage | None = None,
        mode: str = "auto",
        on_error: OnError = "raise",
        request_id: str | None = None,
        cumulative: bool = False,
        named_finish_reason: str = "tool_calls",
        owners: tuple[Any, Any] = (None, None),
        drop_calls: bool = False,
        max_calls: int | None = None,
    ) -> None:
        self._reasoning = reasoning
        self._stage = stage
        self._pipeline = pipeline
        self.mode = mode
        self.on_error: OnError = on_error
        self.request_id = request_id
        self.cumulative = cumulative
        self.named_finish_reason = named_finish_reason
        self._owners = owners
        #: The server runs the tool parser but sends no calls (vLLM with tool_choice "none").
        self.drop_calls = drop_calls
        #: At most this many calls are sent (``parallel_tool_calls=False``: 1); the parser's indices
        #: of the calls past it, whose later fragments are dropped too (None: no limit).
        self.max_calls = max_calls
        self._beyond: set[int] = set()
        self._acc = DeltaAccumulator()
        self._calls: dict[int, _Call] = {}
        self._orphans: dict[int, _Orphan] = {}
        self._broken = False
        self._flushed = False
        #: Cumulative mode: the engine's text passed on so far, the tail held back from it (a
        #: trailing U+FFFD), and how many of its token ids were passed on.
        self._seen_text = ""
        self._held = ""
        self._seen_id_count = 0
        self.error: BackendError | None = None

    # ----------------------------------------------------------------- policy
    @property
    def broken(self) -> bool:
        """True once a parser failed and the rest of the output became plain content.

        Covers both layers of the fallback: this stream's own, and the guard
        around each parser (which falls back inside the parser's stream).
        """
        stages = (self._reasoning, self._stage, self._pipeline)
        return self._broken or any(bool(getattr(s, "broken", False)) for s in stages if s is not None)

    def _fail(self, exc: BaseException, owner: Any, call: str, text: str, stage: Any) -> StreamDelta:
        if isinstance(exc, StreamStateError):
            raise exc
        err = as_backend_error(exc, owner, call, self.request_id)
        self.error = err
        if self.on_error == "raise":
            raise err
        log.warning(
            "parser error in request %s, the rest of the output is plain content: %s",
            self.request_id,
            err,
        )
        log.debug("traceback of the parser error above", exc_info=exc)
        self._broken = True
        pending = ""
        getter = getattr(stage, "pending_text", None)
        if callable(getter):
            try:
                pending = getter() or ""
            except Exception:  # already broken; recover what we can
                pending = ""
        return make_delta(pending + text)

    def _run(
        self, fn: Callable[[], StreamDelta], owner: Any, call: str, text: str, stage: Any
    ) -> StreamDelta:
        try:
            return fn()
        except Exception as exc:
            return self._fail(exc, owner, call, text, stage)

    # ----------------------------------------------------------------- chain
    def _through_stage(self, delta: StreamDelta, token_ids: Sequence[int] | None) -> StreamDelta:
        # An engine chunk with ids but no text (an end-of-sequence token) reaches the tool stage too,
        # as it reaches a server's tool parser: some parsers settle their calls on it.
        if self._stage is None or self._broken or not (delta.content or (token_ids and not delta.reasoning)):
            return delta
        stage = self._stage
        content = delta.content
        try:
            out = stage.feed(content, token_ids)
        except Exception as exc:
            out = self._fail(exc, self._owners[1], "stream.feed", content, stage)
        # A tool parser may report reasoning of its own (vLLM's cohere and inkling parsers do).
        reasoning = delta.reasoning + out.reasoning if out.reasoning else delta.reasoning
        return make_delta(out.content, reasoning, out.tool_calls)

    def _chain(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        # Failures are caught inline (no closure per chunk: this runs per token).
        if self._broken:
            return make_delta(text)
        if self._pipeline is not None:
            pipe = self._pipeline
            try:
                return pipe.feed(text, token_ids)
            except Exception as exc:
                return self._fail(exc, self._owners[1], "stream.feed", text, pipe)
        if self._reasoning is not None:
            rs = self._reasoning
            try:
                r = rs.feed(text, token_ids)
            except Exception as exc:
                r = self._fail(exc, self._owners[0], "stream.feed", text, rs)
            # Token ids belong to the whole chunk: pass them on only when it went through untouched.
            ids = token_ids if (not r.reasoning and r.content == text) else None
            return self._through_stage(r, ids)
        return self._through_stage(make_delta(text), token_ids)

    def _delta_of(self, text: str, token_ids: Sequence[int] | None) -> tuple[str, Sequence[int] | None]:
        """Cumulative engines send everything so far: keep only what is new.

        A trailing U+FFFD (or lone high surrogate) is held back until the text goes on past it or
        the output ends: a detokenizer shows half a multi-byte character so and replaces it once
        the rest arrives ("ab\ufffd" then "abé"), and sent text cannot be taken back. The token
        ids go on at once (as vLLM's server hands a parser the ids of a step whose text it holds).
        """
        end = len(text)
        while end and _is_incomplete(text[end - 1]):
            end -= 1
        seen = self._seen_text
        new = text[len(seen) : end] if text.startswith(seen) else self._revised(text, end)
        self._seen_text = text[:end]
        self._held = text[end:]
        ids: Sequence[int] | None = None
        if token_ids is not None:
            ids = token_ids[self._seen_id_count :]
            self._seen_id_count = len(token_ids)
        return new, ids

    def _revised(self, text: str, end: int) -> str:
        """`text` takes back part of what was already passed on: `StreamStateError` under
        on_error="raise"; under "fallback" a warning, and the text from where the two differ goes
        on (the client's text is the engine's, with what it took back left in place)."""
        seen = self._seen_text
        common = 0
        for a, b in zip(text, seen, strict=False):
            if a != b:
                break
            common += 1
        message = (
            f"request {self.request_id}: the cumulative text took back {len(seen) - common} character(s) "
            f"already sent, at offset {common} ({seen[common : common + 40]!r} became "
            f"{text[common : common + 40]!r}); sent text cannot be unsent"
        )
        if self.on_error == "raise":
            raise StreamStateError(message + " (on_error='fallback' keeps it and goes on)")
        log.warning("%s; kept it, and went on from offset %d", message, common)
        return text[common:end]

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """The next engine chunk (a delta, or everything so far with `cumulative`)."""
        if self._flushed or type(text) is not str:  # one test on the per-token path for both
            if not isinstance(text, str):  # not text: the server's mistake, never a parser's
                raise InvalidInputError("stream.feed", text)
            if self._flushed:
                raise StreamStateError("feed() after flush(): one ChoiceStream per choice per request")
        if token_ids is not None:  # ids that are no ids: the server's mistake too, refused before any stage
            token_ids = token_id_list(token_ids)
        if self.cumulative:
            text, token_ids = self._delta_of(text, token_ids)
        if not text and not token_ids:
            return make_delta()
        return self._emit(self._chain(text, token_ids))

    def flush(self) -> StreamDelta:
        """End of output: whatever the parsers held back. Later calls return an empty delta."""
        if self._flushed:
            return StreamDelta()
        self._flushed = True
        # A cumulative engine's held tail (a trailing U+FFFD) is final now: it goes first.
        held, self._held = self._held, ""
        tail = self._chain(held, None) if held else None
        out = StreamDelta()
        if not self._broken:
            if self._pipeline is not None:
                pipe = self._pipeline
                out = self._run(pipe.flush, self._owners[1], "stream.flush", "", pipe)
            else:
                if self._reasoning is not None:
                    rs = self._reasoning
                    out = self._through_stage(
                        self._run(rs.flush, self._owners[0], "stream.flush", "", rs), None
                    )
                if self._stage is not None and not self._broken:
                    stage = self._stage
                    out = out.merged(self._run(stage.flush, self._owners[1], "stream.flush", "", stage))
        out = self._emit(out if tail is None else tail.merged(out))
        for index, orphan in self._orphans.items():
            log.warning(
                "request %s: the parser streamed arguments for call %d but never named it; dropped %r",
                self.request_id,
                index,
                "".join(orphan.arguments)[:200],
            )
        self._orphans.clear()
        return out

    # ----------------------------------------------------------------- normalising
    def _emit(self, delta: StreamDelta) -> StreamDelta:
        if not delta.tool_calls or self.drop_calls:  # most chunks: text only, nothing to renumber
            out = make_delta(delta.content, delta.reasoning)
            self._acc.add(out)
            return out
        calls: list[ToolCallDelta] = []
        for d in delta.tool_calls:
            state = self._calls.get(d.index)
            if state is None:
                if d.index in self._beyond:
                    continue
                orphan = self._orphans.get(d.index)
                if d.name is None:
                    orphan = orphan or self._orphans.setdefault(d.index, _Orphan())
                    orphan.id = orphan.id or d.id
                    if d.arguments:
                        orphan.arguments.append(d.arguments)
                    continue
                if self.max_calls is not None and len(self._calls) >= self.max_calls:
                    self._beyond.add(d.index)  # a call the request did not allow: not sent
                    self._orphans.pop(d.index, None)
                    continue
                held = "".join(orphan.arguments) if orphan else ""
                call_id = d.id or (orphan.id if orphan else None) or new_call_id()
                self._orphans.pop(d.index, None)
                state = self._calls[d.index] = _Call(len(self._calls), call_id, d.name)
                calls.append(make_call_delta(state.index, state.id, state.name, held + d.arguments))
                continue
            if d.name is not None and d.name != state.name:
                log.debug(
                    "request %s: call %d renamed %r → %r; kept the first",
                    self.request_id,
                    state.index,
                    state.name,
                    d.name,
                )
            if d.arguments:
                if calls and calls[-1].index == state.index:
                    calls[-1].arguments += d.arguments  # our own fresh delta
                else:
                    calls.append(make_call_delta(state.index, None, None, d.arguments))
        out = make_delta(delta.content, delta.reasoning, calls)
        self._acc.add(out)
        return out

    # ----------------------------------------------------------------- results
    @property
    def tools_called(self) -> bool:
        return bool(self._calls)

    def finish_reason(self, engine_reason: str | None = None) -> str:
        """`tool_calls` when calls were made and the engine stopped normally; else the engine's reason."""
        reason = engine_reason or "stop"
        if self._calls and reason == "stop":
            return self.named_finish_reason if self.mode == "named" else "tool_calls"
        return reason

    def result(self) -> ParseResult:
        """Everything emitted so far, assembled as a client does."""
        return ParseResult(
            reasoning=self._acc.reasoning, content=self._acc.content, tool_calls=self._acc.tool_calls()
        )

    @property
    def accumulator(self) -> DeltaAccumulator:
        return self._acc

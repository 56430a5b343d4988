"""parsebridge parser objects backed by SGLang's FunctionCallParser and ReasoningParser.

A parser object holds configuration only (names, tools, request options);
every `parse` and every `stream()` gets a fresh SGLang session, because
SGLang's detectors keep per-request state on themselves.

End of stream: SGLang's server handles the *last* engine chunk together with
the finish reason (that is when `parse_stream_end()` and the flush of
unstreamed arguments happen, in the same step). parsebridge's `feed` cannot
know which chunk is the last, so by default a stream holds each chunk back
until the next `feed` (or `flush`) shows whether it was the last
(``end_of_stream="last_chunk"``: one chunk of latency, faithful to a stream
that ends on a stop string or max_tokens). ``end_of_stream="empty_chunk"``
parses every chunk at once and ends with an empty finishing chunk, as when
generation stops on an EOS token whose text is empty.

Reasoning started in the prompt: SGLang's server passes ``force_reasoning``
when the chat template opened reasoning in the prompt or the request asks
for thinking. Here ``reasoning_started=True``/``False`` is that flag; with
None, the request options (`chat_template_kwargs`, `reasoning_effort`, or
their absence) decide the way the release's server reads them (restated in
`_compat`): on 0.5.23 a request without them gets the detector's
`reasoning_default` (qwen3: reasoning first, as the server does). Releases
before 0.5.1 take no such flag at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    ParseResult,
    Pipeline,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.models import (
    delta_of,
    make_call_delta,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)
from ...protocol.prompt_rule import PROBE_TEXT, honoured, refuse_started
from .. import _tokenizers
from .._common import locate_reasoning, reasoning_markers
from .._stepped import (
    EndOfStream,
    SteppedPipelineStream,
    SteppedToolStream,
    call_framework,
    check_end_of_stream,
    closed_error,
    record_into,
)
from ._compat import SglangApi, get_api
from ._driver import RequestShape, Session
from ._forced import is_forced
from ._reasoning_stream import SglangReasoningStream

TOOL_CHOICES: tuple[str, ...] = ("auto", "none")
T = TypeVar("T")


def _wrap(spec_name: str, call: str, fn: Callable[[], T]) -> T:
    """Run an SGLang call; anything it raises becomes a `BackendError` with the original as cause."""
    return call_framework("sglang", spec_name, call, fn)


class SglangEngine:
    """Everything needed to open SGLang sessions for one (reasoning, tool) parser pair."""

    def __init__(
        self,
        tool_name: str | None,
        reasoning_name: str | None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tokenizer: Any = None,
        tool_choice: Any = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        reasoning_effort: str | None = None,
        request_fields: dict[str, Any] | None = None,
        stream_reasoning: bool = True,
        end_of_stream: EndOfStream = "last_chunk",
    ) -> None:
        check_end_of_stream(end_of_stream)
        self.api: SglangApi = get_api()
        if tool_choice not in TOOL_CHOICES and not (is_forced(tool_choice) and self.api.forced_choices):
            raise ValueError(
                f"tool_choice must be one of {TOOL_CHOICES}, or 'required'/a named function on SGLang "
                f"releases whose server parses those through the tool parser (0.5.23), not {tool_choice!r}"
            )
        self.tool_name = tool_name
        self.reasoning_name = reasoning_name
        self.label = "+".join(n for n in (reasoning_name, tool_name) if n)
        self.tool_choice = tool_choice
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.reasoning_effort = reasoning_effort
        self.stream_reasoning = stream_reasoning
        self.end_of_stream: EndOfStream = end_of_stream
        self.tools = _wrap(self.label, "Tool", lambda: self.api.make_tools(tools))
        fields = dict(request_fields or {})
        if reasoning_effort is not None:
            fields.setdefault("reasoning_effort", reasoning_effort)
        # Only releases whose parsers read the request (0.5.9+: `request=`, 0.5.21+: `tool_choice=`) get one.
        needs_request = "request" in self.api.rp_accepts or "tool_choice" in self.api.fc_accepts
        self.request = (
            _wrap(
                self.label,
                "ChatCompletionRequest",
                lambda: self.api.make_request(self.tools, tool_choice, self.chat_template_kwargs, fields),
            )
            if needs_request
            else None
        )
        self._user_tokenizer = tokenizer
        self._tokenizer: Any = None
        self._markers: tuple[str | None, str | None] | None = None
        self._lock = threading.Lock()
        self._shapes: dict[bool | None, RequestShape] = {}
        self._honours: dict[bool, bool] = {}
        # Construct once now: a parser that cannot be built fails at creation, typed.
        _wrap(self.label, "construct", lambda: self.session(None).construct())

    # ------------------------------------------------------------------ tokenizer

    @property
    def tokenizer(self) -> Any:
        """The tokenizer passed to SGLang where it takes one, and used for `chunks()`.

        The user's, or one whose vocabulary holds every SGLang marker atomically
        (a real Qwen/DeepSeek vocabulary for those families when installed).
        """
        with self._lock:
            if self._tokenizer is None:
                if self._user_tokenizer is not None:
                    self._tokenizer = _tokenizers.load_tokenizer(self._user_tokenizer)
                else:
                    family = _tokenizers.family_of(self.tool_name or self.reasoning_name or "")
                    self._tokenizer = _tokenizers.build_tokenizer(self.api.marker_strings(), family)
            return self._tokenizer

    def _sglang_tokenizer(self) -> Any:
        # Only releases whose parsers take a tokenizer get one (building it costs a second).
        if "tokenizer" in self.api.fc_accepts or "tokenizer" in self.api.rp_accepts:
            return self.tokenizer
        return None

    def chunks(self, text: str, per: int = 1) -> list[_tokenizers.TokenChunk]:
        """`text` as an engine would stream it with this tokenizer, `per` tokens a chunk."""
        return _tokenizers.token_chunks(self.tokenizer, text, per)

    # ------------------------------------------------------------------ sessions

    def force_reasoning(self, reasoning_started: bool | None) -> bool | None:
        """The `force_reasoning` flag SGLang's server would pass for this prompt and request.

        The server forces reasoning when the chat template opened it in the
        prompt or the request asks for thinking. `reasoning_started` is the
        prompt half (True/False decide); with None, the release's request half
        decides as the server does — also for a request without
        `chat_template_kwargs`: SGLang 0.5.23 then falls back to the
        detector's `reasoning_default` (qwen3: "enable_thinking", so
        reasoning is on unless the request turns it off).
        """
        if self.reasoning_name is None:
            return None
        if reasoning_started is not None:
            self.check_started(reasoning_started)
            return reasoning_started
        return self.api.request_forces_reasoning(
            self.reasoning_name, self.chat_template_kwargs, self.reasoning_effort, self._sglang_tokenizer()
        )

    def check_started(self, value: bool) -> None:
        """Refuse a `force_reasoning` value SGLang's detector does not honour (probed once, typed)."""
        if self.reasoning_name is None:
            return
        if value:
            return  # True stands for the template's start; the server's reading stands (prompt_rule)
        ok = self._honours.get(value)
        if ok is None:
            ok = self._honours[value] = self._probe_started(value)
        if not ok:
            raise refuse_started(f"sglang:{self.label}", value, "SGLang")

    def _probe_started(self, value: bool) -> bool:
        """Whether ``force_reasoning=value`` gives the reading asked for on `PROBE_TEXT`."""
        shape = RequestShape(
            tool_name=None,
            reasoning_name=self.reasoning_name,
            tools=[],
            tool_choice="auto",
            request=self.request,
            force_reasoning=value,
            stream_reasoning=True,
            tokenizer=self._sglang_tokenizer(),
        )
        session = Session(self.api, shape)
        reasoning, content = session.reasoning_parser(stream=False).parse_non_stream(PROBE_TEXT)
        streaming = session.reasoning_parser(stream=True)
        r1, c1 = streaming.parse_stream_chunk(PROBE_TEXT)
        return honoured(value, reasoning, content) and honoured(value, r1, c1)

    def session(self, reasoning_started: bool | None) -> Session:
        """A fresh per-request session; its request shape is worked out once per start state."""
        shape = self._shapes.get(reasoning_started)
        if shape is None:
            shape = self._shapes[reasoning_started] = self._shape(reasoning_started)
        return Session(self.api, shape)

    def parser_factory(self, reasoning_started: bool | None, kind: str, stream: bool) -> Callable[[], Any]:
        """The request shape's "reasoning" or "tools" parser constructor (`Session.parser_factory`),
        read from the shape's cache without making a session once it is there."""
        shape = self._shapes.get(reasoning_started)
        factory = shape.factories.get((kind, stream)) if shape is not None else None
        if factory is None:
            factory = self.session(reasoning_started).parser_factory(kind, stream)
        return factory

    def _shape(self, reasoning_started: bool | None) -> RequestShape:
        return RequestShape(
            tool_name=self.tool_name,
            reasoning_name=self.reasoning_name,
            tools=self.tools,
            tool_choice=self.tool_choice,
            request=self.request,
            force_reasoning=self.force_reasoning(reasoning_started),
            stream_reasoning=self.stream_reasoning,
            tokenizer=self._sglang_tokenizer(),
        )

    def markers(self) -> tuple[str | None, str | None]:
        if self._markers is None:
            if self.reasoning_name is None:
                self._markers = (None, None)
            else:
                try:
                    parser = self.session(None).reasoning_parser(stream=False)
                    self._markers = reasoning_markers(parser.detector)
                except Exception:
                    self._markers = (None, None)
        return self._markers

    def oneshot(
        self, text: str, reasoning_started: bool | None, call: str
    ) -> tuple[str | None, str | None, list[ToolCall]]:
        # `_wrap` inlined (no closure): a one-shot parse is what a server pays per request.
        try:
            return self.session(reasoning_started).oneshot(text)
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("sglang", self.label, call, exc) from exc


class _Stepper:
    """One SGLang session fed chunk by chunk, with the chosen end-of-stream convention.

    A non-final chunk of a request with only a tool parser is one framework
    call: `feed` makes it itself (`_tool_feed`); the final chunk, and requests
    with both parsers, take `Session.step_parts`. (A request with only a
    reasoning parser has its own stream, `SglangReasoningStream`.)
    """

    def __init__(
        self, engine: SglangEngine, reasoning_started: bool | None, end_of_stream: EndOfStream | None
    ) -> None:
        self.engine = engine
        self.end: EndOfStream = check_end_of_stream(end_of_stream or engine.end_of_stream)
        try:
            self.session = engine.session(reasoning_started)
            self._tool_lane = self.session.tool_lane()
        except Exception as exc:
            raise BackendError.wrapping("sglang", engine.label, "construct", exc) from exc
        self._step = self.session.step_parts
        self._hold = self.end == "last_chunk"
        self.pending: str | None = None
        self.text_seen: list[str] = []
        self.closed = False

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """Record into `acc`; the stream's per-chunk `feed` (its own closure for a request with
        only a tool parser). Not kept here: see `_stepped.Stepper`."""
        if self._tool_lane is not None:
            return self._tool_feed(acc)
        self._record = record_into(acc)
        return self.feed

    def _tool_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """`feed` for a request with only a tool parser: every name it needs bound once here.

        Per chunk: one framework call, its text and call deltas recorded in the accumulator,
        one delta (`make_delta` inlined).
        """
        stepper, lane, hold = self, self._tool_lane, self._hold
        assert lane is not None
        seen, c_append, add_calls = self.text_seen.append, acc.content_parts.append, acc.add_calls
        call_deltas = self._call_deltas

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            if stepper.closed:
                raise closed_error()
            seen(text)
            if hold:
                chunk = stepper.pending
                if chunk is None:
                    stepper.pending = text
                    return make_delta()
            else:
                chunk = text
            try:
                content, items = lane(chunk)
                calls = call_deltas(items) if items else None
            except Exception as exc:
                raise stepper._error(exc) from exc
            if hold:
                stepper.pending = text
            if content:
                c_append(content)
            else:
                content = ""
            if calls:
                add_calls(calls)
            else:
                calls = []
            return delta_of(content, "", calls)

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
        if self.closed:
            raise closed_error()
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


class SglangToolParser(ToolParserBase):
    """`sglang:NAME` tool-call parser: SGLang's FunctionCallParser, driven as SGLang's server drives it.

    Options: `tool_choice` (``"auto"`` default, ``"none"``; ``"required"`` or a named function
    on 0.5.23, parsed as its server does: `_forced`), `tokenizer`
    (object or path; used for `chunks()` and passed to SGLang where a release
    takes one), `chat_template_kwargs`, `request_fields`, `end_of_stream`.
    """

    backend = "sglang"

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        self.engine = engine = SglangEngine(name, None, tools=self.tools, **options)
        #: The one-shot `FunctionCallParser` constructor when the server runs the tool parser for
        #: this request shape (tools declared, tool_choice not "none"…), else None: the text
        #: stays content. Worked out once here, so `parse` needs no per-request session.
        session = engine.session(None)
        self._oneshot_make = session.parser_factory("tools", False) if session.tool_active else None

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def parse(self, text: str) -> ToolParseResult:
        # A request with only a tool parser, as `Session.oneshot` runs it, without the session.
        make = self._oneshot_make
        if make is None:
            return make_tool_result(text or None, [])
        try:
            parser = make()
            if not parser.has_tool_call(text):
                return make_tool_result(text or None, [])
            text, items = parser.parse_non_stream(text)
            call_id, name = self.engine.api.call_id, self.name
            calls = [
                make_tool_call(
                    item.name or "", item.parameters or "", call_id(name, item.name, item.tool_index)
                )
                for item in items
            ]
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("sglang", self.engine.label, "parse_non_stream", exc) from exc
        return make_tool_result(text or None, calls)

    def has_tool_calls(self, text: str) -> bool:
        """SGLang's own `has_tool_call` (a marker test: true on a partial call too)."""
        engine = self.engine

        def check() -> bool:
            session = engine.session(None)
            if not session.tool_active:
                return False
            return bool(session.tool_parser(stream=False).has_tool_call(text))

        return _wrap(engine.label, "has_tool_call", check)

    def stream(self, *, end_of_stream: EndOfStream | None = None, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(_Stepper(self.engine, None, end_of_stream))

    def chunks(self, text: str, per: int = 1) -> list[_tokenizers.TokenChunk]:
        return self.engine.chunks(text, per)


# ====================================================================== reasoning


class SglangReasoningParser(ReasoningParserBase):
    """`sglang:NAME` reasoning parser: SGLang's ReasoningParser, driven as SGLang's server drives it.

    Options as for `SglangToolParser` (no tools), plus `stream_reasoning`
    (default True, the request default) and `reasoning_effort`.
    """

    backend = "sglang"

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.engine = SglangEngine(None, name, **options)
        start, end = self._marker_pair = self.engine.markers()
        self.markers = tuple(m for m in (start, end) if m)  # type: ignore[misc]
        #: `ReasoningParser` constructors by `reasoning_started`, one-shot and streaming, read with
        #: one dict lookup per request (the engine works each out once; this skips its shape lookups).
        self._makers: dict[bool, dict[bool | None, Callable[[], Any]]] = {False: {}, True: {}}

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def _maker(self, reasoning_started: bool | None, stream: bool) -> Callable[[], Any]:
        makers = self._makers[stream]
        make = makers.get(reasoning_started)
        if make is None:
            make = makers[reasoning_started] = self.engine.parser_factory(
                reasoning_started, "reasoning", stream
            )
        return make

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> ReasoningParseResult:
        """`prompt`/`prompt_token_ids` are accepted and change nothing: SGLang's server never reads
        the prompt (`adapters.prompt_rule`)."""
        # A request with only a reasoning parser is one `parse_non_stream` on a fresh parser
        # (what `Session.oneshot` does for it, without its raw result).
        if reasoning_started is not None:
            self.engine.check_started(reasoning_started)  # typed refusal, before any text is read
        try:
            make = self._makers[False].get(reasoning_started) or self._maker(reasoning_started, False)
            reasoning, content = make().parse_non_stream(text)
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("sglang", self.engine.label, "parse_non_stream", exc) from exc
        if not reasoning:
            return make_reasoning_result(None, content or None, None)
        start, end = self._marker_pair
        return make_reasoning_result(
            reasoning, content or None, locate_reasoning(text, reasoning, start, end)
        )

    def stream(
        self,
        *,
        reasoning_started: bool | None = None,
        end_of_stream: EndOfStream | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
        **_: Any,
    ) -> SglangReasoningStream:
        engine = self.engine
        if reasoning_started is not None:
            engine.check_started(reasoning_started)
        end = check_end_of_stream(end_of_stream or engine.end_of_stream)
        try:
            parser = self._maker(reasoning_started, True)()
        except Exception as exc:
            raise BackendError.wrapping("sglang", engine.label, "construct", exc) from exc
        return SglangReasoningStream(
            parser, end == "last_chunk", engine.api.has_stream_end, engine.label, self._marker_pair
        )

    def chunks(self, text: str, per: int = 1) -> list[_tokenizers.TokenChunk]:
        return self.engine.chunks(text, per)


# ====================================================================== native pipeline


class SglangPipeline(Pipeline):
    """SGLang's own reasoning→tool chain for one request shape (one session, not two parsers).

    The chain differs from the generic `Pipeline` where the server's does: the
    reasoning parser is told whether a tool parser consumes its output
    (`tool_call_parser_active`, 0.5.18+), and the end-of-stream flushes run in
    the server's order.
    """

    def __init__(
        self,
        reasoning: str,
        tool: str,
        *,
        tools: Sequence[ToolSpec] | None = None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> None:
        self.engine = SglangEngine(tool, reasoning, tools=tools, **options)
        super().__init__(None, None, reasoning_started=reasoning_started)
        self.reasoning_name, self.tool_name = reasoning, tool

    @property
    def specs(self) -> tuple[str | None, str | None]:
        return f"sglang:{self.reasoning_name}", f"sglang:{self.tool_name}"

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def _started(self, reasoning_started: bool | None) -> bool | None:
        return self.reasoning_started if reasoning_started is None else reasoning_started

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> ParseResult:
        """The prompt is accepted and changes nothing, as for `SglangReasoningParser.parse`."""
        started = self._started(reasoning_started)
        if started is not None:
            self.engine.check_started(started)
        reasoning, content, calls = self.engine.oneshot(text, started, "parse_non_stream")
        start, end = self.engine.markers()
        return ParseResult(
            reasoning=reasoning,
            content=content,
            tool_calls=calls,
            block=locate_reasoning(text, reasoning, start, end),
        )

    def stream(  # type: ignore[override]
        self, *, reasoning_started: bool | None = None, end_of_stream: EndOfStream | None = None, **_: Any
    ) -> SteppedPipelineStream:
        """Also takes `prompt`/`prompt_token_ids` (in ``**_``), which change nothing."""
        started = self._started(reasoning_started)
        if started is not None:
            self.engine.check_started(started)
        stepper = _Stepper(self.engine, started, end_of_stream)
        return SteppedPipelineStream(stepper, self.engine.markers)

    def chunks(self, text: str, per: int = 1) -> list[_tokenizers.TokenChunk]:
        return self.engine.chunks(text, per)

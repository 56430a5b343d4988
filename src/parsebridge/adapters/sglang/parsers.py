"""parsebridge parser objects backed by SGLang's FunctionCallParser and ReasoningParser.

A parser object holds configuration only (names, tools, request options) in
an `SglangEngine` (`_engine`: sessions, start state); every `parse` and every
`stream()` gets a fresh SGLang session, because SGLang's detectors keep
per-request state on themselves. Streams step it chunk by chunk (`_stepper`:
the end-of-stream conventions); a request with only a reasoning parser has
its own stream (`_reasoning_stream`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import (
    BackendError,
    ParseResult,
    ReasoningParserBase,
    ReasoningParseResult,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.models import (
    make_reasoning_result,
    make_tool_result,
)
from .._common import locate_reasoning
from .._stepped import (
    EndOfStream,
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedToolStream,
    check_end_of_stream,
)
from .._token_chunks import EngineTokens
from ._compat import calls_of
from ._engine import SglangEngine, _wrap
from ._reasoning_stream import SglangReasoningStream
from ._stepper import _Stepper


class SglangToolParser(EngineTokens, ToolParserBase):
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
        #: The form of the ids its server gives calls (`calls_of`), worked out once here too.
        self._call_id_form = engine.api.id_form(name)

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
            calls = calls_of(items, self._call_id_form)
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


# ====================================================================== reasoning


class SglangReasoningParser(EngineTokens, ReasoningParserBase):
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
        # The engine's own convention was checked when it was made: only a stream's own is checked here.
        end = check_end_of_stream(end_of_stream) if end_of_stream else engine.end_of_stream
        try:
            parser = self._maker(reasoning_started, True)()
        except Exception as exc:
            raise BackendError.wrapping("sglang", engine.label, "construct", exc) from exc
        return SglangReasoningStream(
            parser, end == "last_chunk", engine.api.has_stream_end, engine.label, self._marker_pair
        )


# ====================================================================== native pipeline


class SglangPipeline(EngineTokens, FrameworkPipeline):
    """SGLang's own reasoning→tool chain for one request shape (one session, not two parsers).

    The chain differs from the generic `Pipeline` where the server's does: the
    reasoning parser is told whether a tool parser consumes its output
    (`tool_call_parser_active`, 0.5.18+), and the end-of-stream flushes run in
    the server's order.
    """

    backend = "sglang"

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self.engine = SglangEngine(self.tool_name, self.reasoning_name, tools=tools, **options)

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

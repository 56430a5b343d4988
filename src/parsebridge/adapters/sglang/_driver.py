"""One chat request through SGLang's parsers, the way SGLang's chat server drives them.

Restated from the installed release's ``sglang/srt/entrypoints/openai/serving_chat.py``
(not copied; measured on 0.4.10.post2, 0.5.1.post3, 0.5.10.post1, 0.5.23):

* **One-shot.** Reasoning first: a fresh ``ReasoningParser(name,
  stream_reasoning=False, force_reasoning=…, request=…, tokenizer=…,
  tool_call_parser_active=…)`` (keywords as the release takes them) and
  ``parse_non_stream(text) → (reasoning, normal)``. Then, when tool parsing is
  active for the request (tools declared and ``tool_choice != "none"``; 0.5.23:
  with no tools, iff the detector parses without tools), a fresh
  ``FunctionCallParser(tools, name, …)``: if ``has_tool_call(text)``, then
  ``parse_non_stream(text) → (normal, [ToolCallItem])``, else the text stays
  content (``tool_choice="required"``/named: see `_forced`). Each call gets an id (``call_`` + 24 hex; ``functions.NAME:I`` for
  kimi_k2 from 0.5.1). Empty content is reported as no content.
* **Streaming.** One reasoning parser (``stream_reasoning=True``) and one
  function-call parser per request, created on the first chunk. Per engine
  chunk: the reasoning parser's ``parse_stream_chunk(delta)`` (plus
  ``parse_stream_end()`` on the finishing chunk, 0.5.23) gives reasoning to
  send and the normal text, which goes to the tool parser's
  ``parse_stream_chunk`` (plus ``parse_stream_end()`` on the finishing chunk,
  0.5.23); its normal text is sent as content and each call item as a tool-call
  delta: an item with a name opens a call (index = the item's ``tool_index``,
  a fresh id, the name, the item's parameters), an item without a name
  carries argument text. On the finishing chunk the server compares what it
  streamed of the last call's arguments with the detector's record of them
  and sends the rest.

The session returns raw tuples (one-shot calls as parsebridge `ToolCall`s already);
`parsers` turns the rest into parsebridge models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...protocol import ToolCall
from ._compat import SglangApi
from ._forced import forced_factory, is_forced


@dataclass
class RawCallDelta:
    """One tool-call fragment as the server streams it."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass
class RequestShape:
    """What one request looks like to the server's parsing code."""

    tool_name: str | None
    reasoning_name: str | None
    tools: list[Any]
    tool_choice: Any
    request: Any
    force_reasoning: bool | None
    stream_reasoning: bool
    tokenizer: Any
    #: Whether the server runs the tool parser for this shape (worked out once, by the first session).
    tool_active: bool | None = None
    #: Parser constructors with this shape's keywords bound, by (kind, stream): worked out once
    #: (which keywords the release takes), so each request only calls one.
    factories: dict[tuple[str, bool], Callable[[], Any]] = field(default_factory=dict)


class Session:
    """Per-request parser state; one per `parse` call or per stream."""

    def __init__(self, api: SglangApi, shape: RequestShape) -> None:
        self.api = api
        self.shape = shape
        active = shape.tool_active
        if active is None:
            active = shape.tool_active = api.tool_parsing_active(
                shape.tool_name, shape.tools, shape.tool_choice
            )
        self.tool_active = active
        self._reasoning: Any = None
        self._tools: Any = None
        self._answer_started = False
        self._template = False

    # ------------------------------------------------------------------ construction

    def reasoning_parser(self, *, stream: bool) -> Any:
        return self.parser_factory("reasoning", stream)()

    def tool_parser(self, *, stream: bool) -> Any:
        return self.parser_factory("tools", stream)()

    def parser_factory(self, kind: str, stream: bool) -> Callable[[], Any]:
        """The constructor of this shape's "reasoning" or "tools" parser, worked out once per shape."""
        factory = self.shape.factories.get((kind, stream))
        if factory is None:
            build = self._reasoning_factory if kind == "reasoning" else self._tool_factory
            factory = self.shape.factories[kind, stream] = build(stream)
        return factory

    def _reasoning_factory(self, stream: bool) -> Callable[[], Any]:
        s = self.shape
        assert s.reasoning_name is not None
        return self.api.reasoning_parser_factory(
            s.reasoning_name,
            stream_reasoning=s.stream_reasoning if stream else False,
            force_reasoning=s.force_reasoning,
            request=s.request,
            tokenizer=s.tokenizer,
            tool_call_parser_active=self.tool_active,
        )

    def _tool_factory(self, stream: bool) -> Callable[[], Any]:
        s = self.shape
        assert s.tool_name is not None
        if s.tools and is_forced(s.tool_choice):
            # Required/named: the server's probe takes the request's tool_choice, streamed or not.
            choice = getattr(s.request, "tool_choice", None) or s.tool_choice
            native = self.api.function_call_parser_factory(
                s.tools, s.tool_name, tokenizer=s.tokenizer, tool_choice=choice
            )
            return forced_factory(self.api, native, s.tools)
        # One-shot passes the request's tool_choice where the release takes it (with no tools the
        # request's default, "none"); streaming does not.
        choice = None
        if not stream:
            choice = s.tool_choice if s.tools else getattr(s.request, "tool_choice", None)
        return self.api.function_call_parser_factory(
            s.tools, s.tool_name, tokenizer=s.tokenizer, tool_choice=choice
        )

    def construct(self) -> None:
        """Build the parsers once, so a parser that cannot be built fails at creation."""
        if self.shape.reasoning_name:
            self.reasoning_parser(stream=False)
        if self.shape.tool_name:
            self.tool_parser(stream=False)

    @staticmethod
    def _answer_started_in(parser: Any) -> bool:
        """0.5.23 response-template detectors: after the answer opened, no text is a call."""
        detector = getattr(parser, "detector", None)
        return type(detector).__name__ == "ResponseTemplateReasoningDetector" and bool(
            getattr(detector, "answer_started", False)
        )

    # ------------------------------------------------------------------ one-shot

    def oneshot(self, text: str) -> tuple[str | None, str | None, list[ToolCall]]:
        """(reasoning, content, calls) as the server's message has them ("" reads as None).

        Calls come out as parsebridge `ToolCall`s directly (arguments parsed, invalid
        text kept verbatim): one object per call, nothing in between.
        """
        s = self.shape
        reasoning: str | None = None
        answer_started = False
        if s.reasoning_name:
            parser = self.reasoning_parser(stream=False)
            reasoning, text = parser.parse_non_stream(text)
            answer_started = self._answer_started_in(parser)
            text = text or ""
        calls: list[ToolCall] = []
        if s.tool_name and self.tool_active and not answer_started:
            parser = self.tool_parser(stream=False)
            if parser.has_tool_call(text):
                text, items = parser.parse_non_stream(text)
                calls = self.api.tool_calls(s.tool_name, items)
        return reasoning or None, text or None, calls

    # ------------------------------------------------------------------ streaming

    def held_text(self) -> str:
        """Text SGLang's detectors hold in their buffers (tool parser's first: it is older text)."""
        held = ""
        for parser in (self._tools, self._reasoning):
            buffer = getattr(getattr(parser, "detector", None), "_buffer", None)
            if isinstance(buffer, str):
                held += buffer
        return held

    def _stream_reasoning_parser(self) -> Any:
        if self._reasoning is None:
            self._reasoning = self.reasoning_parser(stream=True)
            detector = getattr(self._reasoning, "detector", None)
            self._template = type(detector).__name__ == "ResponseTemplateReasoningDetector"
        return self._reasoning

    def tool_lane(self) -> Any:
        """The tool parser's `parse_stream_chunk` when a non-final chunk is that one call and
        nothing else (a request with only an active tool parser), else None.

        The parser is the session's own (built now rather than on the first chunk), so
        `step_parts` on the final chunk continues it. (A request with only a reasoning
        parser has its own stream: `_reasoning_stream`.)
        """
        s = self.shape
        if s.tool_name and not s.reasoning_name and self.tool_active:
            if self._tools is None:
                self._tools = self.tool_parser(stream=True)
            return self._tools.parse_stream_chunk
        return None

    def step_parts(self, delta: str, finished: bool) -> tuple[str, str, list[RawCallDelta]]:
        """One engine chunk (`finished`: the last one, carrying the finish reason) as (reasoning, content, call fragments)."""
        s = self.shape
        reasoning = ""
        calls: list[RawCallDelta] = []
        if s.reasoning_name:
            if self._reasoning is None:
                self._stream_reasoning_parser()
            r_text, normal = self._reasoning.parse_stream_chunk(delta)
            if finished and self.api.has_stream_end:
                end_r, end_n = self._reasoning.parse_stream_end()
                r_text = (r_text or "") + (end_r or "")
                normal = (normal or "") + (end_n or "")
            reasoning = r_text or ""
            delta = normal or ""
            if self._template:  # checked per chunk only for the detectors that have the state
                self._answer_started = self._answer_started_in(self._reasoning)
        if s.tool_name and self.tool_active and not self._answer_started:
            if self._tools is None:
                self._tools = self.tool_parser(stream=True)
            normal, items = self._tools.parse_stream_chunk(delta)
            if finished and self.api.has_stream_end:
                end_text, end_items = self._tools.parse_stream_end()
                normal = (normal or "") + (end_text or "")
                items = [*items, *end_items]
            content = normal or ""
            for item in items:
                if item.name:
                    call_id: str | None = self.api.call_id(s.tool_name, item.name, item.tool_index)
                    name: str | None = item.name
                else:
                    call_id = name = None
                calls.append(RawCallDelta(item.tool_index, call_id, name, item.parameters or ""))
            if finished:
                rest = self.api.unstreamed_arguments(self._tools)
                if rest is not None:
                    calls.append(RawCallDelta(rest[0], None, None, rest[1]))
        else:
            content = delta
        return reasoning, content, calls

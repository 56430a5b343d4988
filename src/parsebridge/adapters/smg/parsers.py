"""`smg:NAME` parser objects: smg's Rust parsers, run inside its gateway, read over HTTP.

Every parse is a chat request to the gateway started for the parser's
configuration (`_gateway`); the scripted worker answers with the text being
parsed (`_worker`), and what the gateway returns is the reading. One-shot:
the non-streamed message. Streams: each `feed` is one engine step and
returns what the gateway streamed for that step (`_client.StreamSession`);
`flush` ends the request. A tool parser's gateway runs only that tool
parser, a reasoning parser's only that reasoning parser, a pipeline's both
(smg's own chain).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...formats import think as _think
from ...protocol import (
    DeltaAccumulator,
    ParseResult,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.errors import call_typed
from ...protocol.models import (
    make_call_delta,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)
from .._common import locate_reasoning
from .._stepped import (
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
    closed_error,
    record_into,
)
from . import _client
from ._client import Config, StreamSession

#: Reasoning markers used to locate the block in the text (smg returns only strings).
THINK_MARKERS: tuple[str, str] = (_think.START, _think.END)


def _label(config: Config) -> str:
    tool, reasoning = config
    return "+".join(n for n in (reasoning, tool) if n)


def _started_check(label: str, reasoning_started: bool | None) -> None:
    """Nothing to pass on: smg's gateway takes no "reasoning opened in the prompt" flag.

    Measured on 1.13.0: neither ``chat_template_kwargs`` (``enable_thinking``,
    ``thinking``) nor a prompt ending in ``<think>`` changes how ``qwen3``
    starts; each reasoning parser starts as it is built (``deepseek_r1``,
    ``qwen3_thinking``: inside reasoning). So `reasoning_started` is accepted
    and the reading is what the gateway gives any client; conformance shows
    the difference where a transcript's prompt opened the block.
    """


def _calls(message: dict[str, Any]) -> list[ToolCall]:
    out = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        out.append(make_tool_call(fn.get("name") or "", fn.get("arguments") or "", call.get("id")))
    return out


def _call_deltas(calls: list[Any]) -> list[ToolCallDelta]:
    out = []
    for call in calls:
        fn = call.get("function") or {}
        out.append(
            make_call_delta(call.get("index", 0), call.get("id"), fn.get("name"), fn.get("arguments") or "")
        )
    return out


def _merge(deltas: list[tuple[str, str, list[Any]]]) -> StreamDelta:
    if not deltas:
        return make_delta()
    if len(deltas) == 1:
        content, reasoning, calls = deltas[0]
        return make_delta(content, reasoning, _call_deltas(calls) if calls else None)
    calls_all: list[Any] = []
    for _, _, calls in deltas:
        calls_all.extend(calls)
    return make_delta(
        "".join(d[0] for d in deltas),
        "".join(d[1] for d in deltas),
        _call_deltas(calls_all) if calls_all else None,
    )


class SmgStepper:
    """One streamed gateway request stepped per `feed` (the `_stepped.Stepper` protocol)."""

    def __init__(self, config: Config, tools: Sequence[ToolSpec] | None) -> None:
        self.spec = ("smg", _label(config))
        self.text_seen: list[str] = []
        self._session = StreamSession(config, tools)
        self._closed = False

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        self._record = record_into(acc)
        return self.feed

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if self._closed:
            raise closed_error()
        self.text_seen.append(text)
        session = self._session
        delta = _merge(call_typed("smg", self.spec[1], "stream.feed", lambda: session.step(text)))
        self._record(delta.content, delta.reasoning, delta.tool_calls)
        return delta

    def flush(self) -> StreamDelta:
        if self._closed:
            return make_delta()
        self._closed = True
        return _merge(call_typed("smg", self.spec[1], "stream.flush", self._session.end))

    def pending_text(self) -> str:
        return ""

    def __del__(self) -> None:
        if not self._closed:
            self._session.close()


class SmgToolParser(ToolParserBase):
    """`smg:NAME` tool-call parser: smg's Rust tool parser, run by its gateway for a request with tools."""

    backend = "smg"

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        self.config: Config = (name, None)
        _client.ensure(self.config)

    def parse(self, text: str) -> ToolParseResult:
        msg = call_typed("smg", self.name, "chat", lambda: _client.oneshot(self.config, text, self.tools))
        return make_tool_result(msg.get("content") or None, _calls(msg))

    def stream(self, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(SmgStepper(self.config, self.tools))


class SmgReasoningParser(ReasoningParserBase):
    """`smg:NAME` reasoning parser: smg's Rust reasoning parser, run by its gateway."""

    backend = "smg"

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.config: Config = (None, name)
        _client.ensure(self.config)
        self.markers = THINK_MARKERS  # type: ignore[misc]

    def parse(self, text: str, *, reasoning_started: bool | None = None, **_: Any) -> ReasoningParseResult:
        _started_check(self.name, reasoning_started)
        msg = call_typed("smg", self.name, "chat", lambda: _client.oneshot(self.config, text, None))
        reasoning = msg.get("reasoning_content") or None
        block = locate_reasoning(text, reasoning, *THINK_MARKERS)
        return make_reasoning_result(reasoning, msg.get("content") or None, block)

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> SteppedReasoningStream:
        _started_check(self.name, reasoning_started)
        return SteppedReasoningStream(SmgStepper(self.config, None), lambda: THINK_MARKERS)


class SmgPipeline(FrameworkPipeline):
    """smg's own reasoning→tool chain: one gateway running both parsers, one request per parse."""

    backend = "smg"

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self.config: Config = (self.tool_name, self.reasoning_name)
        _client.ensure(self.config)
        self.tools = list(tools or [])

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ParseResult:
        _started_check(_label(self.config), self._started(reasoning_started))
        msg = call_typed(
            "smg", _label(self.config), "chat", lambda: _client.oneshot(self.config, text, self.tools)
        )
        reasoning = msg.get("reasoning_content") or None
        return ParseResult(
            reasoning=reasoning,
            content=msg.get("content") or None,
            tool_calls=_calls(msg),
            block=locate_reasoning(text, reasoning, *THINK_MARKERS),
        )

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> SteppedPipelineStream:  # type: ignore[override]
        _started_check(_label(self.config), self._started(reasoning_started))
        return SteppedPipelineStream(SmgStepper(self.config, self.tools), lambda: THINK_MARKERS)

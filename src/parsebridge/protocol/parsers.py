"""The parser protocols, and base classes that make writing a parser short.

Two layers:

* `DynamoToolCallParser` / `DynamoReasoningParser` — the minimal Dynamo-style
  protocol an orchestrator calls.
* `ToolParser` / `ReasoningParser` — the richer surface every parsebridge
  parser offers (`parse`, `stream()`), a superset of the Dynamo one.

A user parser subclasses `ToolParserBase` or `ReasoningParserBase` and
implements only `parse`; streaming then works (buffered) and every Dynamo
method is derived. Override `stream()` to stream incrementally.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from .models import (
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolParseResult,
)
from .streams import BufferedReasoningStream, BufferedToolStream, checked_result

ToolSpec = dict[str, Any]
"""An OpenAI tool definition: ``{"type": "function", "function": {"name": ..., "parameters": ...}}``."""


@runtime_checkable
class DynamoToolCallParser(Protocol):
    """What an orchestrator needs from a tool-call parser."""

    def parse_tool_calls(self, text: str) -> list[ToolCall]: ...
    def has_tool_calls(self, text: str) -> bool: ...
    def format_tool_result(self, tool_call_id: str, result: Any) -> str: ...


@runtime_checkable
class DynamoReasoningParser(Protocol):
    """What an orchestrator needs from a reasoning parser."""

    def parse_reasoning(self, text: str) -> ReasoningBlock | None: ...
    def has_reasoning(self, text: str) -> bool: ...


@runtime_checkable
class ToolStream(Protocol):
    """Per-request streaming state of a tool-call parser."""

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta: ...
    def flush(self) -> StreamDelta: ...
    def finish(self) -> ToolParseResult: ...


@runtime_checkable
class ReasoningStream(Protocol):
    """Per-request streaming state of a reasoning parser."""

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta: ...
    def flush(self) -> StreamDelta: ...
    def finish(self) -> ReasoningParseResult: ...


@runtime_checkable
class ToolParser(DynamoToolCallParser, Protocol):
    """The full tool-call parser surface (the public API contract)."""

    backend: str
    name: str

    def parse(self, text: str) -> ToolParseResult: ...
    def stream(self) -> ToolStream: ...


@runtime_checkable
class ReasoningParser(DynamoReasoningParser, Protocol):
    """The full reasoning parser surface (the public API contract)."""

    backend: str
    name: str

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult: ...
    def stream(self, *, reasoning_started: bool | None = None) -> ReasoningStream: ...


def tool_names(tools: Sequence[ToolSpec] | None) -> list[str]:
    """Function names declared in OpenAI tool definitions (tolerates the flat form)."""
    names: list[str] = []
    for tool in tools or ():
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


class Closable:
    """``close()`` and ``with`` for parsers and pipelines: `close` gives back what only this object
    holds (a server it alone used) and is a no-op where it owns nothing. A server several parsers
    share stays until its last user closes (or the process ends). Leaving a ``with`` block closes."""

    def close(self) -> None:
        """Give back what only this object holds (nothing, by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _ParserBase(Closable):
    """What both parser bases do alike: keep the options, default the name to the class's, and
    show as ``backend:name``."""

    backend: str = "python"
    name: str = ""

    def __init__(self, **options: Any) -> None:
        self.options = options
        if not self.name:
            self.name = type(self).__name__

    @property
    def spec(self) -> str:
        return f"{self.backend}:{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class ToolParserBase(_ParserBase, abc.ABC):
    """Subclass and implement `parse`; everything else has a sound default.

    Instances hold configuration only (tools, options), never request state,
    so one instance can serve many concurrent requests; `stream()` returns
    the per-request state.
    """

    #: Marker strings of the format; conformance checks none leaks into content.
    markers: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        self.tools: list[ToolSpec] = list(tools or [])
        super().__init__(**options)

    @property
    def tool_names(self) -> list[str]:
        return tool_names(self.tools)

    @abc.abstractmethod
    def parse(self, text: str) -> ToolParseResult:
        """Split a complete output into content and tool calls."""

    def stream(self) -> ToolStream:
        """Per-request streaming state; the default buffers until the end."""
        return BufferedToolStream(self)

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        return self.parse(text).tool_calls

    def has_tool_calls(self, text: str) -> bool:
        """Whether the text holds (the start of) a tool call.

        With `markers` declared this is a cheap substring test, usable on a
        partial stream; otherwise it parses.
        """
        if self.markers:
            return any(m in text for m in self.markers[:1])
        return bool(checked_result(self.parse(text), ToolParseResult, self).tool_calls)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The text a tool's result is shown to the model as (plain JSON by default)."""
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


class ReasoningParserBase(_ParserBase, abc.ABC):
    """Subclass and implement `parse`; the Dynamo methods and a buffered stream are derived."""

    markers: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        """Split a complete output into reasoning and content.

        `reasoning_started` says the prompt already opened the reasoning block
        (a chat template ending in ``<think>``); None means the parser's default.
        """

    def stream(self, *, reasoning_started: bool | None = None) -> ReasoningStream:
        return BufferedReasoningStream(self, reasoning_started)

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        return self.parse(text).block

    def has_reasoning(self, text: str) -> bool:
        return self.parse(text).reasoning is not None

"""`python:package.module:Class` — a user's own parser class, checked at load time.

A class is accepted when it has `parse` (the least a parser can do); the
other protocol methods are derived when absent, exactly as
`ToolParserBase` / `ReasoningParserBase` derive them. A class that lacks
`parse` is rejected with `ParserProtocolError` naming what is missing.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence
from typing import Any

from ..protocol import (
    InvalidSpecError,
    ParserProtocolError,
    ParserSpec,
    ReasoningParser,
    ReasoningParserBase,
    ReasoningParseResult,
    ReasoningStream,
    ToolParser,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
    ToolStream,
)
from .base import Backend

_TOOL_REQUIRED = ("parse",)
_REASONING_REQUIRED = ("parse",)


def load_class(target: str) -> type:
    """Import ``module:Class`` and return the class, with errors that say what failed."""
    spec = ParserSpec.parse(f"python:{target}")
    assert spec.module and spec.class_name
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        raise InvalidSpecError(f"python:{target}: cannot import module {spec.module!r}: {exc}") from exc
    cls = getattr(module, spec.class_name, None)
    if cls is None:
        public = [n for n in dir(module) if not n.startswith("_") and inspect.isclass(getattr(module, n))]
        raise InvalidSpecError(
            f"python:{target}: module {spec.module!r} has no class {spec.class_name!r}"
            f" (classes there: {', '.join(public) or 'none'})"
        )
    if not inspect.isclass(cls):
        raise InvalidSpecError(f"python:{target}: {spec.class_name!r} is not a class")
    return cls


def _missing(cls: type, required: Sequence[str]) -> list[str]:
    return [m for m in required if not callable(getattr(cls, m, None))]


def _construct(cls: type, kwargs: dict[str, Any]) -> Any:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return cls(**kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return cls(**kwargs)
    return cls(**{k: v for k, v in kwargs.items() if k in params})


class _UserToolParser(ToolParserBase):
    """Gives a user object the full surface, deferring to what it implements."""

    backend = "python"

    def __init__(self, target: str, user: Any, tools: Sequence[ToolSpec] | None) -> None:
        super().__init__(tools)
        self.name = target
        self.user = user
        self.markers = tuple(getattr(user, "markers", ()) or ())

    def parse(self, text: str) -> ToolParseResult:
        result = self.user.parse(text)
        return result if isinstance(result, ToolParseResult) else ToolParseResult.model_validate(result)

    def stream(self) -> ToolStream:
        if callable(getattr(self.user, "stream", None)):
            return self.user.stream()  # type: ignore[no-any-return]
        return super().stream()

    def parse_tool_calls(self, text: str) -> list[Any]:
        if callable(getattr(self.user, "parse_tool_calls", None)):
            return list(self.user.parse_tool_calls(text))
        return super().parse_tool_calls(text)

    def has_tool_calls(self, text: str) -> bool:
        if callable(getattr(self.user, "has_tool_calls", None)):
            return bool(self.user.has_tool_calls(text))
        return super().has_tool_calls(text)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        if callable(getattr(self.user, "format_tool_result", None)):
            return str(self.user.format_tool_result(tool_call_id, result))
        return super().format_tool_result(tool_call_id, result)


class _UserReasoningParser(ReasoningParserBase):
    backend = "python"

    def __init__(self, target: str, user: Any) -> None:
        super().__init__()
        self.name = target
        self.user = user
        self.markers = tuple(getattr(user, "markers", ()) or ())
        self._takes_started = "reasoning_started" in _params(user.parse)

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if self._takes_started:
            result = self.user.parse(text, reasoning_started=reasoning_started)
        else:
            result = self.user.parse(text)
        if isinstance(result, ReasoningParseResult):
            return result
        return ReasoningParseResult.model_validate(result)

    def stream(self, *, reasoning_started: bool | None = None) -> ReasoningStream:
        if callable(getattr(self.user, "stream", None)):
            if "reasoning_started" in _params(self.user.stream):
                return self.user.stream(reasoning_started=reasoning_started)  # type: ignore[no-any-return]
            return self.user.stream()  # type: ignore[no-any-return]
        return super().stream(reasoning_started=reasoning_started)


def _params(fn: Any) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


class PythonBackend(Backend):
    """Loads parsers from user code; has no fixed list of names."""

    name = "python"

    def tool_parser_names(self) -> list[str]:
        return []

    def reasoning_parser_names(self) -> list[str]:
        return []

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        cls = load_class(name)
        if issubclass(cls, ToolParserBase):
            return cls(tools=tools, **options)  # type: ignore[no-any-return]
        missing = _missing(cls, _TOOL_REQUIRED)
        if missing:
            raise ParserProtocolError(f"python:{name}", "tool", missing)
        return _UserToolParser(name, _construct(cls, {"tools": tools, **options}), tools)

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        cls = load_class(name)
        if issubclass(cls, ReasoningParserBase):
            return cls(**options)  # type: ignore[no-any-return]
        missing = _missing(cls, _REASONING_REQUIRED)
        if missing:
            raise ParserProtocolError(f"python:{name}", "reasoning", missing)
        return _UserReasoningParser(name, _construct(cls, options))

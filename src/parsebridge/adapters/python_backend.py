"""`python:package.module:Class` — a user's own parser class, checked at load time.

A class is accepted when it has `parse`, or when it implements the seed
design's Dynamo protocol instead (tool: `parse_tool_calls`, with
`has_tool_calls`/`format_tool_result` optional; reasoning:
`parse_reasoning`, with `has_reasoning` optional) — the contract the project
is named after. What the class lacks is derived: from `parse` as
`ToolParserBase` / `ReasoningParserBase` do; from the Dynamo methods,
`parse` (content is the text outside the calls' `raw_text` spans, or outside
the reasoning block's indices) and a buffered `stream()`. A class with
neither is rejected with `ParserProtocolError` naming what is missing.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Collection, Sequence
from typing import Any

from ..protocol import (
    InvalidSpecError,
    ParsebridgeError,
    ParserProtocolError,
    ParserSpec,
    ReasoningBlock,
    ReasoningParser,
    ReasoningParserBase,
    ReasoningParseResult,
    ReasoningStream,
    ToolCall,
    ToolParser,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
    ToolStream,
)
from .base import Backend

#: Either method is enough; the first is preferred when both exist.
_TOOL_ENTRY = ("parse", "parse_tool_calls")
_REASONING_ENTRY = ("parse", "parse_reasoning")


def _fix(module: str, exc: ImportError) -> str:
    """How to make `module` importable, when it is the one missing (not something it imports)."""
    missing = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or not missing or not module.startswith(missing):
        return ""
    here = os.getcwd()
    searched = "the current folder and " if {"", here} & set(sys.path) else ""
    return (
        f" (looked in {searched}the Python path; run from the folder that holds "
        f"{missing.replace('.', '/')}.py, add its folder to PYTHONPATH, or pip install its package)"
    )


def _line_of(exc: BaseException, module: str) -> str:
    """`` (line N of FILE)``: where importing `module` raised — the last frame in its own file, else
    the last one (a module it imports) — or "" for a SyntaxError, whose message says where."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    if isinstance(exc, SyntaxError) or not frames:
        return ""
    own = os.path.join(*module.split("."))
    mine = [f for f in frames if f.filename.endswith((own + ".py", os.path.join(own, "__init__.py")))]
    frame = (mine or frames)[-1]
    return f" (line {frame.lineno} of {frame.filename})"


def _what_failed(exc: BaseException) -> str:
    """``raised KeyError: 'x'``, or ``called sys.exit(3)``: a user's module or constructor that
    exits would end the command (or the caller's program) with its status and no word, so its
    `SystemExit` is reported as any other failure of the user's code."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({'' if exc.code is None else repr(exc.code)})"
    return f"raised {type(exc).__name__}: {exc}"


def load_class(target: str) -> type:
    """Import ``module:Class`` and return the class, with errors that say what failed."""
    spec = ParserSpec.parse(f"python:{target}")
    assert spec.module and spec.class_name
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        raise InvalidSpecError(
            f"python:{target}: cannot import module {spec.module!r}: {exc}{_fix(spec.module, exc)}"
        ) from exc
    except (Exception, SystemExit) as exc:  # the module's own code failed (SyntaxError too): say so
        raise InvalidSpecError(
            f"python:{target}: importing module {spec.module!r} {_what_failed(exc)}{_line_of(exc, spec.module)}"
        ) from exc
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


def _check_entry(cls: type, target: str, kind: str, entry: Sequence[str]) -> None:
    """`ParserProtocolError` unless `cls` has one of the entry methods (`parse` or the Dynamo one)."""
    if any(callable(getattr(cls, m, None)) for m in entry):
        return
    err = ParserProtocolError(target, kind, [entry[0]])
    err.args = (f"{err} A class implementing the Dynamo protocol ({entry[1]}, …) is accepted too.",)
    raise err


def calls_from(items: Any) -> list[ToolCall]:
    """`parse_tool_calls` output as ToolCalls: ToolCall objects, or dicts with name and arguments."""
    out: list[ToolCall] = []
    for item in items or ():
        if isinstance(item, ToolCall):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("arguments"), str):
            raw = item.get("raw_text", "")
            call = ToolCall.from_arguments_text(str(item.get("name", "")), item["arguments"], raw_text=raw)
            out.append(call.model_copy(update={"id": item["id"]}) if item.get("id") else call)
        else:
            out.append(ToolCall.model_validate(item))
    return out


def content_outside(text: str, calls: Sequence[ToolCall]) -> str | None:
    """The text outside the calls' `raw_text` spans (searched in order).

    A call without a `raw_text` found in the text leaves no way to tell
    content from call markup; the content is then None rather than text that
    may hold the call (implement `parse` to say where content is).
    """
    if not calls:
        return text or None
    parts: list[str] = []
    pos = 0
    for call in calls:
        at = text.find(call.raw_text, pos) if call.raw_text else -1
        if at == -1:
            return None
        parts.append(text[pos:at])
        pos = at + len(call.raw_text)
    parts.append(text[pos:])
    content = "".join(parts)
    return content if content.strip() else None


def reasoning_result(text: str, block: Any) -> ReasoningParseResult:
    """`parse_reasoning` output as a full result: content is the text outside the block's indices."""
    if block is None:
        return ReasoningParseResult(content=text or None)
    if not isinstance(block, ReasoningBlock):
        block = ReasoningBlock.model_validate(block)
    start, end = block.start_index, block.end_index
    if block.located and not 0 <= start <= end <= len(text):
        # Not a place in this text: the parser's failure (raise, or fallback), not content dropped.
        raise ValueError(
            f"parse_reasoning returned a block at [{start}, {end}), outside the text's {len(text)} characters"
        )
    content = text[:start] + text[end:] if block.located else None
    return ReasoningParseResult(reasoning=block.content, content=content or None, block=block)


#: Options parsebridge's own machinery passes with a request (`OutputProcessor`): a class that does
#: not take them is built without them. Any other option must be one its constructor takes.
PASSED_THROUGH = frozenset({"tool_choice", "chat_template_kwargs"})


def _keywords(cls: type) -> set[str] | None:
    """The keyword parameters `cls(...)` takes (None: it takes any, or cannot be inspected)."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return {n for n, p in params.items() if p.kind is not inspect.Parameter.POSITIONAL_ONLY}


def _construct(target: str, cls: type, kwargs: dict[str, Any]) -> Any:
    """`cls` built with the options it takes; its constructor failing is `InvalidSpecError` naming
    the spec and the call (the user's code, not a parse: nothing to fall back to)."""
    params = _keywords(cls)
    given = kwargs if params is None else {k: v for k, v in kwargs.items() if k in params}
    try:
        return cls(**given)
    except ParsebridgeError:
        raise
    except (Exception, SystemExit) as exc:
        call = f"{cls.__name__}({', '.join(f'{k}=...' for k in given)})"
        raise InvalidSpecError(f"python:{target}: {call} {_what_failed(exc)}") from exc


def _named(target: str, parser: Any) -> Any:
    """`parser`, named by its `module:Class` target when its class names it nothing of its own: the
    base's default, the bare class name, made its spec ``python:LineParser``, which no config
    string loads (and which two classes of one name in two modules share); a `name` the class
    sets (``name = "call_line"``) is kept."""
    if parser.backend == "python" and not type(parser).name and parser.name == type(parser).__name__:
        parser.name = target
    return parser


class _UserToolParser(ToolParserBase):
    """Gives a user object the full surface, deferring to what it implements."""

    backend = "python"

    def __init__(self, target: str, user: Any, tools: Sequence[ToolSpec] | None) -> None:
        super().__init__(tools)
        self.name = target
        self.user = user
        self.markers = tuple(getattr(user, "markers", ()) or ())

    def parse(self, text: str) -> ToolParseResult:
        if not callable(getattr(self.user, "parse", None)):  # the Dynamo protocol only
            calls = calls_from(self.user.parse_tool_calls(text))
            return ToolParseResult(content=content_outside(text, calls), tool_calls=calls)
        result = self.user.parse(text)
        return result if isinstance(result, ToolParseResult) else ToolParseResult.model_validate(result)

    def stream(self) -> ToolStream:
        if callable(getattr(self.user, "stream", None)):
            return self.user.stream()  # type: ignore[no-any-return]
        return super().stream()

    def parse_tool_calls(self, text: str) -> list[Any]:
        if callable(getattr(self.user, "parse_tool_calls", None)):
            return calls_from(self.user.parse_tool_calls(text))
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
        self._has_parse = callable(getattr(user, "parse", None))
        entry = user.parse if self._has_parse else user.parse_reasoning
        self._takes_started = "reasoning_started" in _params(entry)

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if not self._has_parse:  # the Dynamo protocol only
            if self._takes_started:
                return reasoning_result(
                    text, self.user.parse_reasoning(text, reasoning_started=reasoning_started)
                )
            return reasoning_result(text, self.user.parse_reasoning(text))
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

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        if callable(getattr(self.user, "parse_reasoning", None)):
            block = self.user.parse_reasoning(text)
            return (
                block
                if block is None or isinstance(block, ReasoningBlock)
                else ReasoningBlock.model_validate(block)
            )
        return super().parse_reasoning(text)

    def has_reasoning(self, text: str) -> bool:
        if callable(getattr(self.user, "has_reasoning", None)):
            return bool(self.user.has_reasoning(text))
        return super().has_reasoning(text)


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

    def option_names(self, kind: str, name: str) -> Collection[str] | None:
        """What the class's constructor takes (None when it takes ``**kwargs``), plus `PASSED_THROUGH`."""
        params = _keywords(load_class(name))
        return None if params is None else (params - {"tools"}) | PASSED_THROUGH

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        cls = load_class(name)
        if issubclass(cls, ToolParserBase):
            return _named(name, _construct(name, cls, {"tools": tools, **options}))
        _check_entry(cls, f"python:{name}", "tool", _TOOL_ENTRY)
        return _UserToolParser(name, _construct(name, cls, {"tools": tools, **options}), tools)

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        cls = load_class(name)
        if issubclass(cls, ReasoningParserBase):
            return _named(name, _construct(name, cls, options))
        _check_entry(cls, f"python:{name}", "reasoning", _REASONING_ENTRY)
        return _UserReasoningParser(name, _construct(name, cls, options))

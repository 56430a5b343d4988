"""The bridge in the other direction: parsebridge parsers inside vLLM's and SGLang's own servers.

`parsebridge.plugins.vllm` registers parsebridge parsers into vLLM's
`ToolParserManager` / `ReasoningParserManager` (load it with
``--tool-parser-plugin parsebridge.plugins.vllm``); `parsebridge.plugins.sglang`
registers them into SGLang's `FunctionCallParser.ToolCallParserEnum` and
`ReasoningParser.DetectorMap` (SGLang runs it through its ``sglang.srt.plugins``
entry point, which parsebridge declares). Either way a server gets, under
the name ``pb:`` + a parsebridge config string:

* every builtin parser: ``pb:builtin:hermes``, ``pb:builtin:qwen3``;
* every parser of the *other* framework, when it is installed:
  ``pb:sglang:qwen25`` inside vLLM, ``pb:vllm:hermes`` inside SGLang;
* any ``python:module:Class`` parser the user registers, under a name of
  their choosing (`register` in either plugin module, or the
  ``PARSEBRIDGE_PLUGIN_PARSERS`` environment variable).

Names are lower case (SGLang looks reasoning parsers up lower-cased) and
contain only what the servers' command lines pass through unchanged.

Environment, read when a plugin module registers:

``PARSEBRIDGE_PLUGIN_BACKENDS``
    Comma-separated backends whose parsers are enumerated (default: builtin
    and the other framework). ``builtin`` alone skips importing the other
    framework at server start.
``PARSEBRIDGE_PLUGIN_PARSERS``
    Comma-separated ``NAME=SPEC`` entries registered as well, e.g.
    ``pb:mine=python:my_pkg.parsers:MyToolParser``; the kind (tool or
    reasoning) is read from the class. A bare ``SPEC`` gets the name
    ``pb:`` + spec, lower-cased.
``PARSEBRIDGE_PLUGIN_ON_ERROR``
    The failure policy of the parsers served (``fallback`` by default: a
    parser error is logged and the unparsed text becomes content, so a
    parser never fails a request; ``raise`` to let it propagate).

This module imports no framework: it holds what both plugins share (names,
the table of what to register, tools and markers in parsebridge's terms, a
small cache of parser objects).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..formats import UnknownFormatError, tool_format
from ..formats import think as _think
from ..protocol import InvalidSpecError, ParserSpec, family_table

Kind = Literal["tool", "reasoning"]

_log = logging.getLogger("parsebridge")

PREFIX = "pb:"
ENV_BACKENDS = "PARSEBRIDGE_PLUGIN_BACKENDS"
ENV_PARSERS = "PARSEBRIDGE_PLUGIN_PARSERS"
ENV_ON_ERROR = "PARSEBRIDGE_PLUGIN_ON_ERROR"

#: Which framework each plugin serves from the other one.
OTHER_FRAMEWORK = {"vllm": "sglang", "sglang": "vllm"}


class FrameworkMissingError(ImportError):
    """A plugin module was imported where its framework is not installed."""

    def __init__(self, plugin: str, framework: str, cause: BaseException | None = None) -> None:
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        super().__init__(
            f"parsebridge.plugins.{plugin} registers parsebridge parsers into {framework} and needs "
            f"{framework} installed: pip install {framework}{detail}",
            name=framework,
        )


def require_framework(plugin: str, framework: str) -> None:
    """Raise `FrameworkMissingError` unless `framework` can be imported (without importing it)."""
    import importlib.util

    if importlib.util.find_spec(framework) is None:
        raise FrameworkMissingError(plugin, framework)


def vllm_plugin_file() -> str:
    """The vLLM plugin as a file path: what ``--tool-parser-plugin`` takes on releases that load files only."""
    from pathlib import Path

    return str(Path(__file__).with_name("pb_vllm_plugin.py"))


def plugin_name(spec: str) -> str:
    """The name a server knows a parsebridge spec by: ``pb:`` + the spec, lower-cased."""
    parsed = ParserSpec.parse(spec)
    return f"{PREFIX}{parsed.backend}:{parsed.name}".lower()


@dataclass(frozen=True)
class Registration:
    """One parsebridge parser as a server sees it."""

    name: str
    kind: Kind
    spec: str


def default_backends(framework: str) -> list[str]:
    """Backends whose parsers a plugin for `framework` enumerates (see ``PARSEBRIDGE_PLUGIN_BACKENDS``)."""
    raw = os.environ.get(ENV_BACKENDS, "")
    if raw.strip():
        return [b.strip().lower() for b in raw.split(",") if b.strip()]
    return ["builtin", OTHER_FRAMEWORK[framework]]


def enumerate_registrations(framework: str, backends: Iterable[str] | None = None) -> list[Registration]:
    """Every parser of `backends` (default: `default_backends`) as a `Registration`.

    A backend that is not installed here adds nothing (the other framework is
    optional); the plugin's own framework is never enumerated into itself
    (its parsers are already there under their own names).
    """
    from ..adapters import get_backend, parser_names

    out: list[Registration] = []
    for backend in backends if backends is not None else default_backends(framework):
        if backend in (framework, "python"):
            continue
        try:
            be = get_backend(backend)
            if not be.is_available():
                continue
            found = [(kind, name) for kind in ("tool", "reasoning") for name in parser_names(be, kind)]  # type: ignore[arg-type]
        except Exception as exc:  # an optional backend that cannot list its parsers here: skip it, say why
            _log.warning(
                "parsebridge plugin for %s: %s parsers not registered (%s: %s)",
                framework,
                backend,
                type(exc).__name__,
                exc,
            )
            continue
        for kind, name in found:
            if name.startswith(PREFIX):  # a plugin loaded into that framework in this process: not its own
                continue
            spec = f"{backend}:{name}"
            out.append(Registration(plugin_name(spec), kind, spec))  # type: ignore[arg-type]
    return out


def parse_env_parsers(text: str | None = None) -> list[tuple[str | None, str]]:
    """``PARSEBRIDGE_PLUGIN_PARSERS`` as (name or None, spec) pairs."""
    raw = os.environ.get(ENV_PARSERS, "") if text is None else text
    out: list[tuple[str | None, str]] = []
    for entry in raw.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, spec = entry.partition("=")
        out.append((name.strip(), spec.strip()) if sep else (None, entry))
    return out


def kind_of(spec: str) -> Kind:
    """Whether a spec names a tool or a reasoning parser (a ``python:`` class says by its base)."""
    parsed = ParserSpec.parse(spec)
    if parsed.backend == "python":
        import importlib

        from ..protocol import ReasoningParserBase, ToolParserBase

        cls = getattr(importlib.import_module(parsed.module or ""), parsed.class_name or "")
        if isinstance(cls, type) and issubclass(cls, ReasoningParserBase):
            return "reasoning"
        if isinstance(cls, type) and issubclass(cls, ToolParserBase):
            return "tool"
        import inspect

        try:
            params = inspect.signature(cls.parse).parameters
        except (AttributeError, TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        return "reasoning" if "reasoning_started" in params else "tool"
    from ..adapters import get_backend, parser_names
    from ..protocol import normalize_name

    be = get_backend(parsed.backend)
    wanted = normalize_name(parsed.name)
    if any(normalize_name(n) == wanted for n in parser_names(be, "tool")):
        return "tool"
    if any(normalize_name(n) == wanted for n in parser_names(be, "reasoning")):
        return "reasoning"
    raise InvalidSpecError(f"{spec!r} names neither a tool nor a reasoning parser of {parsed.backend}")


def on_error_policy() -> Literal["raise", "fallback"]:
    value = os.environ.get(ENV_ON_ERROR, "fallback").strip().lower()
    if value not in ("raise", "fallback"):
        raise InvalidSpecError(f"{ENV_ON_ERROR} must be 'raise' or 'fallback', not {value!r}")
    return value  # type: ignore[return-value]


# ---------------------------------------------------------------------- what servers pass


def tool_dicts(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """A server's tool objects (pydantic models or dicts) as OpenAI tool dicts."""
    if not tools:
        return None
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, dict):
            data = tool
        elif hasattr(tool, "model_dump"):
            data = tool.model_dump(exclude_none=True)
        else:
            data = {k: v for k, v in vars(tool).items() if not k.startswith("_")}
        if "function" not in data and "name" in data:  # Responses API FunctionTool: flat
            fields = ("name", "description", "parameters", "strict")
            data = {"type": "function", "function": {k: data[k] for k in fields if k in data}}
        out.append(data)
    return out


def tool_indices(tools: Sequence[dict[str, Any]] | None) -> dict[str, int]:
    """Function name → its position in the request's tools (SGLang's one-shot `tool_index`)."""
    out: dict[str, int] = {}
    for i, tool in enumerate(tools or ()):
        fn = tool.get("function", tool)
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out.setdefault(fn["name"], i)
    return out


def tool_start_marker(parser: Any, spec: str) -> str | None:
    """The marker that opens a tool parser's calls (None when its format has none).

    A builtin parser declares its markers; a framework's parser (``sglang:qwen25``)
    declares none, and its marker is the first of the format its family writes
    (`families.toml` says which family the backend's parser reads; `formats` holds the markers).
    """
    declared = [m for m in getattr(parser, "markers", ()) or () if isinstance(m, str) and m]
    if declared:
        return declared[0]
    parsed = ParserSpec.parse(spec)
    family = family_table().for_parser("tool", parsed.backend, parsed.name or "")
    if family is None:
        return None
    try:
        markers = tool_format(family.format or family.name).markers
    except UnknownFormatError:
        return None
    return next((m for m in markers if m), None)


def reasoning_markers(parser: Any) -> tuple[str, str]:
    """The start and end marker of a reasoning parser (its first two declared markers)."""
    markers = tuple(m for m in getattr(parser, "markers", ()) if isinstance(m, str) and m)
    start = markers[0] if markers else _think.START
    end = markers[1] if len(markers) > 1 else _think.END
    return start, end


def reasoning_closed(text: str, start: str, end: str) -> bool:
    """Whether `text` ends reasoning: its last end marker comes after its last start marker."""
    closed = text.rfind(end)
    return closed != -1 and closed > text.rfind(start) if start != end else closed != -1


def reasoning_open(text: str, start: str, end: str) -> bool:
    """Whether `text` (a prompt) leaves the model inside an open reasoning block."""
    opened = text.rfind(start)
    return opened != -1 and opened > text.rfind(end)


# ---------------------------------------------------------------------- parser objects


class ParserCache:
    """Parser objects by (kind, spec, tools, tokenizer): made once, shared by requests.

    parsebridge parser objects hold no per-request state (`stream()` does), so
    requests with the same tools share one; the cache is bounded.
    """

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def get(
        self,
        kind: Kind,
        spec: str,
        tools: list[dict[str, Any]] | None = None,
        tokenizer: Any = None,
    ) -> Any:
        key = (kind, spec, json.dumps(tools, sort_keys=True, default=str) if tools else "", id(tokenizer))
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
                return got[0]
        made = _make(kind, spec, tools, tokenizer)
        with self._lock:
            # The tokenizer is kept alive with the parser, so its id is not reused while cached.
            self._items[key] = (made, tokenizer)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return made


def _make(kind: Kind, spec: str, tools: list[dict[str, Any]] | None, tokenizer: Any) -> Any:
    from ..adapters import get_reasoning_parser, get_tool_parser

    options: dict[str, Any] = {"on_error": on_error_policy()}
    # Framework backends read token ids and special tokens: give them the server's tokenizer.
    if tokenizer is not None and ParserSpec.parse(spec).backend in ("vllm", "sglang"):
        options["tokenizer"] = tokenizer
    if kind == "tool":
        return get_tool_parser(spec, tools, **options)
    return get_reasoning_parser(spec, **options)


PARSERS = ParserCache()


def registrations(
    framework: str,
    extra: Sequence[tuple[str | None, str]] = (),
    backends: Iterable[str] | None = None,
) -> list[Registration]:
    """What a plugin registers: enumerated backends, then ``PARSEBRIDGE_PLUGIN_PARSERS``, then `extra`."""
    out = enumerate_registrations(framework, backends)
    for name, spec in [*parse_env_parsers(), *extra]:
        out.append(Registration((name or plugin_name(spec)).lower(), kind_of(spec), spec))
    return out


def describe(regs: Iterable[Registration], kind: Kind) -> list[str]:
    return sorted(r.name for r in regs if r.kind == kind)


__all__ = [
    "ENV_BACKENDS",
    "ENV_ON_ERROR",
    "ENV_PARSERS",
    "PARSERS",
    "PREFIX",
    "FrameworkMissingError",
    "InvalidSpecError",
    "Registration",
    "describe",
    "kind_of",
    "plugin_name",
    "reasoning_markers",
    "registrations",
    "require_framework",
    "tool_dicts",
    "tool_start_marker",
    "vllm_plugin_file",
]

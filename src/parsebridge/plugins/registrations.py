"""What a plugin registers: a `Registration` (name, kind, spec) per parsebridge parser.

Enumerated from the backends a plugin serves (builtin, the other framework),
with the family table's names and aliases, then the ``PARSEBRIDGE_PLUGIN_PARSERS``
entries and the caller's own; `kind_of` reads whether a spec is a tool or a
reasoning parser.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..adapters import get_backend, get_reasoning_parser, get_tool_parser, parser_names, resolve
from ..adapters.python_backend import load_class
from ..protocol import (
    DEFAULT_BACKEND,
    InvalidSpecError,
    ParserProtocolError,
    ParserSpec,
    ReasoningParserBase,
    ToolParserBase,
    family_table,
    normalize_name,
)
from ..protocol.errors import UnknownBackendError, UnknownParserError, closest, did_you_mean
from .settings import (
    ENV_BACKENDS,
    ENV_PARSERS,
    PREFIX,
    Kind,
    PluginConfigError,
    _log,
    default_backends,
    on_error_policy,
    parse_env_parsers,
)


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


def enumerate_registrations(framework: str, backends: Iterable[str] | None = None) -> list[Registration]:
    """Every parser of `backends` (default: `default_backends`) as a `Registration`.

    A backend that is not installed here adds nothing (the other framework is
    optional); the plugin's own framework is never enumerated into itself
    (its parsers are already there under their own names).
    """

    out: list[Registration] = []
    for backend in backends if backends is not None else default_backends(framework):
        if backend in (framework, "python"):
            continue
        try:
            be = get_backend(backend)
        except UnknownBackendError as exc:  # a typo in the variable: say so, not fewer parsers in silence
            if backends is not None:
                raise
            raise PluginConfigError(ENV_BACKENDS, backend, str(exc)) from exc
        try:
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
        regs += alias_registrations(backend, own, {r.name for r in regs})
        out += regs + (bare_registrations(regs) if backend == DEFAULT_BACKEND else [])
    return out


def bare_registrations(regs: Iterable[Registration]) -> list[Registration]:
    """``pb:NAME`` beside each ``pb:builtin:NAME``: a bare name is builtin in a config string
    (``hermes`` is ``builtin:hermes``), so ``pb:`` + that config string is served too; without it,
    ``--tool-call-parser pb:hermes`` was the framework's bare "not found"."""
    prefix = f"{DEFAULT_BACKEND}:"
    return [Registration(PREFIX + r.spec[len(prefix) :].lower(), r.kind, r.spec[len(prefix) :]) for r in regs]


def alias_registrations(backend: str, own: Iterable[tuple[str, str]], taken: set[str]) -> list[Registration]:
    """``pb:BACKEND:ALIAS`` for each family name and alias the family table maps to one of the
    backend's parsers (`own`: (kind, name) pairs), as config strings accept them; not `taken` names."""

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


def kind_of(spec: str) -> Kind:
    """Whether a spec names a tool or a reasoning parser (a ``python:`` class says by what it has).
    The registry's own lookup (`resolve`: registered names, then the family table) decides, so a
    plugin registers a name under the kind the parser is then built as."""
    parsed = ParserSpec.parse(spec)
    if parsed.backend == "python":
        return _class_kind(spec, load_class(f"{parsed.module}:{parsed.class_name}"))
    missing: list[UnknownParserError] = []
    for kind in ("tool", "reasoning"):
        try:
            resolve(kind, parsed)  # type: ignore[arg-type]
        except UnknownParserError as exc:
            missing.append(exc)
        else:
            return kind  # type: ignore[return-value]
    known = sorted({name for exc in missing for name in exc.available})
    raise InvalidSpecError(
        f"{spec!r} names neither a tool nor a reasoning parser of {parsed.backend}."
        f"{did_you_mean(f'{parsed.backend}:{n}' for n in closest(parsed.name, known))}"
    )


def _class_kind(spec: str, cls: type) -> Kind:
    """A user class's kind: its base class, else the protocol methods it has (`python_backend`'s rule:
    `parse_tool_calls` / `parse_reasoning`, or `parse` taking `reasoning_started`)."""

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


def registrations(
    framework: str,
    extra: Sequence[tuple[str | None, str]] = (),
    backends: Iterable[str] | None = None,
) -> list[Registration]:
    """What a plugin registers: enumerated backends, then ``PARSEBRIDGE_PLUGIN_PARSERS``, then `extra`.
    ``PARSEBRIDGE_PLUGIN_ON_ERROR`` is checked here too: the parsers read it per request."""
    on_error_policy()
    out = enumerate_registrations(framework, backends)
    given: dict[tuple[str, Kind], Registration] = {}
    for name, spec in parse_env_parsers():
        reg = _env_registration(name, spec)
        first = given.setdefault((reg.name, reg.kind), reg)
        if first.spec != reg.spec:  # the later would replace the earlier in the server's table, silently
            raise PluginConfigError(
                ENV_PARSERS,
                f"{name}={spec}" if name is not None else spec,
                f"the {reg.kind} parser name {reg.name!r} is already given to {first.spec!r}",
            )
        out.append(reg)
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
        reg = Registration((name or plugin_name(spec)).lower(), kind_of(spec), spec)
        if ParserSpec.parse(spec).backend == "python":
            # Built once here as each request's parser is (no tools, no tokenizer): a constructor
            # that raises stops the start, instead of every request that names the parser.
            (get_tool_parser if reg.kind == "tool" else get_reasoning_parser)(spec).close()
        return reg
    except Exception as exc:
        raise PluginConfigError(ENV_PARSERS, entry, f"{type(exc).__name__}: {exc}") from exc


def describe(regs: Iterable[Registration], kind: Kind) -> list[str]:
    return sorted(r.name for r in regs if r.kind == kind)

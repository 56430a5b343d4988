"""From a config string to a parser object, importing only what the spec names.

Like fsspec's protocol table: a table of known backends maps a backend name
to ``"module:Class"``; the module is imported on first use. Third-party
backends join through the ``parsebridge.backends`` entry-point group.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Any

from ..policy.budget import BudgetedReasoningParser, BudgetedToolParser
from ..policy.guard import GuardedPipeline, GuardedReasoningParser, GuardedToolParser, OnError
from ..protocol import (
    BackendNotInstalledError,
    InvalidSpecError,
    ParserSpec,
    Pipeline,
    ReasoningParserConfig,
    ToolCallParserConfig,
    ToolSpec,
    UnknownBackendError,
    UnknownOptionError,
    UnknownParserError,
    family_table,
    normalize_name,
)
from ..protocol.families import Kind
from ..protocol.tools import checked_tools
from .base import Backend, BackendInfo
from .python_backend import load_class

ENTRY_POINT_GROUP = "parsebridge.backends"

KNOWN_BACKENDS: dict[str, str] = {
    "builtin": "parsebridge.adapters.builtin:BuiltinBackend",
    "python": "parsebridge.adapters.python_backend:PythonBackend",
    "vllm": "parsebridge.adapters.vllm:VllmBackend",
    "sglang": "parsebridge.adapters.sglang:SglangBackend",
    "dynamo": "parsebridge.adapters.dynamo:DynamoBackend",
    "smg": "parsebridge.adapters.smg:SmgBackend",
    "llamacpp": "parsebridge.adapters.llamacpp:LlamacppBackend",
}

_lock = threading.RLock()
_instances: dict[str, Backend] = {}
_names: dict[tuple[str, str], dict[str, str]] = {}


def backend_table() -> dict[str, str]:
    """Backend name → ``module:Class``: the known ones, then entry points."""
    table = dict(KNOWN_BACKENDS)
    try:
        import importlib.metadata  # lazy: heavy, and only needed to look plugins up

        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # broken metadata must not break the built-in backends
        eps = ()  # type: ignore[assignment]
    for ep in eps:
        table.setdefault(ep.name.lower(), ep.value)
    return table


def get_backend(name: str) -> Backend:
    """The (shared) backend instance for `name`; imports its module on first use. A `name` that is
    not a str is `InvalidSpecError` (it was a bare AttributeError from ``.lower()``); a parser spec
    given for it (``"vllm:hermes"``) is `UnknownBackendError` saying what takes a spec."""
    if not isinstance(name, str):
        raise InvalidSpecError(
            f"a backend name is a string such as 'vllm' (one of {', '.join(backend_table())}), "
            f"not {type(name).__name__}"
        )
    key = name.lower()
    with _lock:
        backend = _instances.get(key)
        if backend is not None:
            return backend
        table = backend_table()
        target = table.get(key)
        if target is None:
            error = UnknownBackendError(name, table)
            if ":" in name:  # a whole spec: its backend is the part before the colon
                error.args = (
                    f"{error} {name!r} is a parser spec: get_backend takes the part before the colon "
                    "(get_tool_parser / get_reasoning_parser take the spec)",
                )
            raise error
        module_name, _, class_name = target.partition(":")
        try:
            made: Backend = getattr(importlib.import_module(module_name), class_name)()
        except Exception as exc:
            # The backend's own module is broken or missing (not its framework:
            # backends import frameworks lazily and report that via require()).
            raise BackendNotInstalledError(
                key,
                module_name,
                f"pip install --force-reinstall {module_name.split('.')[0]}",
                f"{type(exc).__name__}: {exc}",
            ) from exc
        _instances[key] = made
        return made


def backend_names() -> list[str]:
    return list(backend_table())


def list_backends(with_parsers: bool = True) -> list[BackendInfo]:
    """What every backend offers here (or why it cannot)."""
    infos = []
    for name in backend_table():
        try:
            infos.append(get_backend(name).info(with_parsers=with_parsers))
        except Exception as exc:  # a third-party backend whose module fails to import
            infos.append(BackendInfo(name=name, available=False, reason=f"{type(exc).__name__}: {exc}"))
    return infos


def parser_names(backend: str | Backend, kind: Kind) -> list[str]:
    """A backend's registered parser names of one kind (cached; may import the framework).
    A `kind` other than "tool" or "reasoning" is `InvalidSpecError` (``"tools"`` listed the
    reasoning parsers)."""
    if kind not in ("tool", "reasoning"):
        raise InvalidSpecError(f"kind={kind!r}: expected 'tool' or 'reasoning'")
    be = get_backend(backend) if isinstance(backend, str) else backend
    return list(_name_map(be, kind).values())


def _name_map(backend: Backend, kind: Kind) -> dict[str, str]:
    key = (backend.name, kind)
    with _lock:
        cached = _names.get(key)
        if cached is None:
            backend.require()
            names = backend.tool_parser_names() if kind == "tool" else backend.reasoning_parser_names()
            cached = _names[key] = {normalize_name(n): n for n in names}
        return cached


def resolve(kind: Kind, spec: str | ParserSpec) -> tuple[Backend, str]:
    """The backend and its own registered parser name for a spec.

    Matching order: the backend's names (after normalising case and `-`/`_`),
    then the family table (family names and aliases), so ``sglang:hermes`` and
    ``vllm:qwen25`` both find the hermes-format parser of that backend.
    """
    parsed = ParserSpec.parse(spec)
    backend = get_backend(parsed.backend)
    if parsed.backend == "python" or backend.passthrough_name(parsed.name):
        return backend, parsed.name
    found = _registered_name(backend, kind, parsed.name)
    if found is not None:
        return backend, found
    names = _name_map(backend, kind)
    # Suggest only what this release can build: a family whose parser the installed
    # release does not register (vLLM 0.11 has no minimax_m2) is no answer.
    known = list(names.values()) + [
        f.name
        for f in family_table().of_kind(kind)
        if (own := f.parser_for(backend.name)) and normalize_name(own) in names
    ]
    other: Kind = "reasoning" if kind == "tool" else "tool"
    elsewhere = other if _registered_name(backend, other, parsed.name) is not None else None
    raise UnknownParserError(backend.name, kind, parsed.name, known, elsewhere)


def _registered_name(backend: Backend, kind: Kind, name: str) -> str | None:
    """The backend's own name of its `kind` parser called `name` (or its family's), else None."""
    names = _name_map(backend, kind)
    wanted = normalize_name(name)
    if wanted in names:
        return names[wanted]
    family = family_table().get(kind, name)
    if family is not None:
        own = family.parser_for(backend.name)
        if own is not None and normalize_name(own) in names:
            return names[normalize_name(own)]
    return None


def check_spec(kind: Kind, spec: str | ParserSpec) -> None:
    """Fail now, typed, on a spec that cannot build: an unknown backend or parser, a framework
    not installed (for its names), a ``python:`` class that cannot be imported."""
    backend, name = resolve(kind, spec)
    if backend.name == "python":
        load_class(name)


#: What `get_tool_parser` / `get_reasoning_parser` take themselves (named in an unknown option's error).
_OWN_OPTIONS: dict[str, tuple[str, ...]] = {
    "tool": ("tools", "on_error", "timeout", "max_held"),
    "reasoning": ("on_error", "timeout", "max_held"),
}


def check_options(backend: Backend, kind: Kind, name: str, options: dict[str, Any]) -> None:
    """Raise `UnknownOptionError` for an option the parser does not take (backends that say)."""
    accepted = backend.option_names(kind, name)
    if accepted is None:
        return
    unknown = [key for key in options if key not in accepted]
    if unknown:
        raise UnknownOptionError(f"{backend.name}:{name}", unknown, [*accepted, *_OWN_OPTIONS[kind]])


def _pipeline_options(
    parts: list[tuple[Kind, Backend, str]], options: dict[str, Any]
) -> list[dict[str, Any]]:
    """`options` split between a pipeline's parsers: each gets what it takes; one neither takes fails."""
    accepted = [backend.option_names(kind, name) for kind, backend, name in parts]
    if any(a is None for a in accepted):
        return [dict(options) for _ in parts]
    known = set().union(*accepted)  # type: ignore[arg-type]
    unknown = [key for key in options if key not in known]
    if unknown:
        specs = "the pipeline " + " + ".join(f"{backend.name}:{name}" for _, backend, name in parts)
        raise UnknownOptionError(specs, unknown, [*known, *_OWN_OPTIONS["tool"]])
    return [{k: v for k, v in options.items() if k in a} for a in accepted]  # type: ignore[operator]


def get_tool_parser(
    spec: str | ParserSpec | ToolCallParserConfig,
    tools: Sequence[ToolSpec] | None = None,
    *,
    on_error: OnError = "raise",
    timeout: float | None = None,
    max_held: int | None = None,
    **options: Any,
) -> GuardedToolParser:
    """A tool-call parser for `spec` (e.g. ``"vllm:hermes"``), under the failure policy.

    `tools`: the request's tool definitions (the OpenAI form, the flat ``{"name", "parameters"}``
    form, or pydantic models of either), checked here: a malformed list is `InvalidToolsError`
    whatever `on_error` says. `timeout` (seconds) runs the parser in a worker process that is
    stopped when a call exceeds it; `max_held` bounds how much text a stream may hold back. Both
    failures go through `on_error` like any parser error. Other keyword options go to the
    backend (e.g. ``tokenizer=`` for vLLM).
    """
    tool_list = checked_tools(tools) or None
    if isinstance(spec, ToolCallParserConfig):
        spec = spec.to_spec()
    backend, name = resolve("tool", spec)
    check_options(backend, "tool", name, options)
    if timeout is not None:
        parser: Any = BudgetedToolParser(get_backend, backend.name, name, tool_list, options, timeout)
    else:
        parser = backend.create_tool_parser(name, tools=tool_list, **options)
    return GuardedToolParser(parser, on_error, max_held=max_held)


def get_reasoning_parser(
    spec: str | ParserSpec | ReasoningParserConfig,
    *,
    on_error: OnError = "raise",
    timeout: float | None = None,
    max_held: int | None = None,
    **options: Any,
) -> GuardedReasoningParser:
    """A reasoning parser for `spec` (e.g. ``"sglang:deepseek-r1"``); options as `get_tool_parser`."""
    if isinstance(spec, ReasoningParserConfig):
        spec = spec.to_spec()
    backend, name = resolve("reasoning", spec)
    check_options(backend, "reasoning", name, options)
    if timeout is not None:
        parser: Any = BudgetedReasoningParser(get_backend, backend.name, name, options, timeout)
    else:
        parser = backend.create_reasoning_parser(name, **options)
    return GuardedReasoningParser(parser, on_error, max_held=max_held)


def get_pipeline(
    reasoning: str | ParserSpec | ReasoningParserConfig | None = None,
    tool: str | ParserSpec | ToolCallParserConfig | None = None,
    *,
    tools: Sequence[ToolSpec] | None = None,
    reasoning_started: bool | None = None,
    on_error: OnError = "raise",
    native: bool = True,
    **options: Any,
) -> Pipeline | GuardedPipeline:
    """Reasoning then tool parsing for one request shape.

    When both specs name the same framework backend and it offers a native
    per-request chain (`native=True`), that chain is used, so the pipeline
    behaves as the framework's own server does.
    """
    if reasoning is None and tool is None:
        named = ", ".join(f"{key}=" for key in options)
        given = f"; {named} {'is no spec' if len(options) == 1 else 'are no specs'}" if options else ""
        raise InvalidSpecError(
            f"a pipeline needs a reasoning spec, a tool spec, or both (reasoning=..., tool=...){given}"
        )
    if reasoning_started is not None and not isinstance(reasoning_started, bool):  # "false" is truthy
        raise InvalidSpecError(f"reasoning_started={reasoning_started!r}: expected True, False or None")
    tools = checked_tools(tools) or None  # (as get_tool_parser's; a native chain takes them too)
    if isinstance(reasoning, ReasoningParserConfig):
        reasoning = reasoning.to_spec()
    if isinstance(tool, ToolCallParserConfig):
        tool = tool.to_spec()
    own = {key: options.pop(key) for key in ("timeout", "max_held") if key in options}
    parts: list[tuple[Kind, Backend, str]] = []
    if reasoning is not None:
        parts.append(("reasoning", *resolve("reasoning", reasoning)))
    if tool is not None:
        parts.append(("tool", *resolve("tool", tool)))
    split = dict(zip((kind for kind, _, _ in parts), _pipeline_options(parts, options), strict=True))
    # A native chain runs in-process, so a time budget needs the generic pipeline.
    if native and len(parts) == 2 and own.get("timeout") is None and parts[0][1] is parts[1][1]:
        (_, backend, r_name), (_, _, t_name) = parts
        pipe = backend.create_pipeline(
            r_name, t_name, tools=tools, reasoning_started=reasoning_started, **options
        )
        if pipe is not None:
            return GuardedPipeline(pipe, on_error, max_held=own.get("max_held"))
    rp = (
        get_reasoning_parser(reasoning, on_error=on_error, **own, **split["reasoning"])
        if reasoning is not None
        else None
    )
    tp = get_tool_parser(tool, tools, on_error=on_error, **own, **split["tool"]) if tool is not None else None
    return Pipeline(rp, tp, reasoning_started=reasoning_started)


def _reset_caches() -> None:
    """Forget backend instances and name lists (tests that fake installs use this)."""
    with _lock:
        _instances.clear()
        _names.clear()

"""The seed design's command-line flags, for any `argparse` server.

Two lines in a server::

    parsebridge.add_parser_arguments(arg_parser)
    reasoning, tools = parsebridge.parsers_from_args(arg_parser.parse_args(), tools=request_tools)

Flags per kind (``reasoning-parser`` and ``tool-call-parser``):
``--X-backend BACKEND`` (every registered backend, and ``native``), ``--X NAME``, ``--X-module``,
``--X-class``. ``--X`` also takes a whole config string (``vllm:hermes``,
``python:pkg.mod:Class``), so the one flag is enough for most uses; an
explicit ``--X-backend`` wins over a backend named inside ``--X``. ``builtin``
is parsebridge's embedded default; ``native`` is the design's name for Dynamo's
Rust parsers (``dynamo``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..adapters import backend_names, get_reasoning_parser, get_tool_parser
from ..policy.guard import ON_ERROR_CHOICES, GuardedReasoningParser, GuardedToolParser, OnError
from ..protocol import (
    InvalidSpecError,
    ParserBackend,
    ParserSpec,
    ReasoningParserConfig,
    ToolCallParserConfig,
    ToolSpec,
)
from ..protocol.spec import BACKEND_ALIASES

_KINDS = (
    ("reasoning_parser", "reasoning-parser", "reasoning"),
    ("tool_call_parser", "tool-call-parser", "tool-call"),
)


def add_parser_arguments(
    parser: argparse.ArgumentParser,
    *,
    reasoning: bool = True,
    tools: bool = True,
    on_error: bool = True,
) -> argparse.ArgumentParser:
    """Add the parser-selection flags (in their own argument group) and return `parser`."""
    group = parser.add_argument_group(
        "parsebridge parsers",
        "choose reasoning and tool-call parsers by backend (parsebridge config strings)",
    )
    # Every backend the registry knows (smg, llamacpp and entry-point ones included), and the aliases.
    backends = [*backend_names(), *(a for a in BACKEND_ALIASES if a not in backend_names())]
    for dest, flag, label in _KINDS:
        if (dest == "reasoning_parser" and not reasoning) or (dest == "tool_call_parser" and not tools):
            continue
        group.add_argument(
            f"--{flag}-backend",
            dest=f"{dest}_backend",
            choices=backends,
            default=None,
            help=f"backend of the {label} parser (default: builtin, parsebridge's embedded parsers, or the "
            f"backend named in --{flag}; native = dynamo, Dynamo's Rust parsers)",
        )
        group.add_argument(
            f"--{flag}",
            dest=dest,
            metavar="NAME",
            default=None,
            help=f"{label} parser name, or a whole spec such as "
            + ("vllm:qwen3" if dest == "reasoning_parser" else "vllm:hermes"),
        )
        group.add_argument(
            f"--{flag}-module", dest=f"{dest}_module", metavar="MODULE", help="python backend: module path"
        )
        group.add_argument(
            f"--{flag}-class", dest=f"{dest}_class", metavar="CLASS", help="python backend: class name"
        )
    if on_error and not any(a.dest == "parser_on_error" for a in parser._actions):
        group.add_argument(
            "--parser-on-error",
            dest="parser_on_error",
            choices=ON_ERROR_CHOICES,
            default="raise",
            help="when a parser raises: a typed error (raise) or keep the text as content (fallback)",
        )
    return parser


def _config(
    ns: argparse.Namespace, dest: str, cls: type[ReasoningParserConfig | ToolCallParserConfig]
) -> Any:
    backend = getattr(ns, f"{dest}_backend", None)
    backend = BACKEND_ALIASES.get(backend, backend) if backend is not None else None
    name = getattr(ns, dest, None)
    module = getattr(ns, f"{dest}_module", None)
    klass = getattr(ns, f"{dest}_class", None)
    flag = "--" + dest.replace("_", "-")
    if backend is None and name is None and module is None and klass is None:
        return None
    if name and ":" in name:
        spec = ParserSpec.parse(name)
        if backend is not None and backend != spec.backend:
            raise InvalidSpecError(
                f"{flag}-backend {backend!r} contradicts the spec {name!r} given to {flag}"
            )
        if spec.backend == ParserBackend.PYTHON.value:
            return cls(backend="python", python_module=spec.module, python_class=spec.class_name)
        return cls(backend=spec.backend, parser_name=spec.name)
    if (module or klass) and backend in (None, ParserBackend.PYTHON.value):
        return cls(backend="python", python_module=module, python_class=klass)
    if not name:
        raise InvalidSpecError(f"{flag}-backend {backend!r} was given without {flag} NAME")
    return cls(backend=backend or ParserBackend.BUILTIN.value, parser_name=name)


def configs_from_args(
    ns: argparse.Namespace,
) -> tuple[ReasoningParserConfig | None, ToolCallParserConfig | None]:
    """The seed's config objects from parsed flags (None for a kind not asked for)."""
    return (
        _config(ns, "reasoning_parser", ReasoningParserConfig),
        _config(ns, "tool_call_parser", ToolCallParserConfig),
    )


def parsers_from_args(
    ns: argparse.Namespace,
    tools: Sequence[ToolSpec] | None = None,
    *,
    on_error: OnError | None = None,
    **options: Any,
) -> tuple[GuardedReasoningParser | None, GuardedToolParser | None]:
    """Parser objects from parsed flags; `on_error` defaults to ``--parser-on-error``."""
    policy: OnError = on_error or getattr(ns, "parser_on_error", None) or "raise"
    reasoning_cfg, tool_cfg = configs_from_args(ns)
    reasoning = get_reasoning_parser(reasoning_cfg, on_error=policy, **options) if reasoning_cfg else None
    tool = get_tool_parser(tool_cfg, tools, on_error=policy, **options) if tool_cfg else None
    return reasoning, tool

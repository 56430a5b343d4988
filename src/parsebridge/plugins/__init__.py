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
  config strings accept them; each also bare, as a bare config string is builtin
  (``pb:hermes``, ``pb:qwen25``);
* every parser of the *other* framework, when it is installed (in SGLang: when
  ``PARSEBRIDGE_PLUGIN_BACKENDS`` asks for it): ``pb:sglang:qwen25`` inside vLLM,
  ``pb:vllm:hermes`` inside SGLang;
* any ``python:module:Class`` parser the user registers, under a name of
  their choosing (`register` in either plugin module, or the
  ``PARSEBRIDGE_PLUGIN_PARSERS`` environment variable).

Names are lower case (SGLang looks reasoning parsers up lower-cased) and
contain only what the servers' command lines pass through unchanged.

Environment, read when a plugin module registers (a value it cannot use — an unknown
backend, an entry that does not load, a policy other than the two — stops the registration,
and so the server's start, with `PluginConfigError` naming the variable and the entry):

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

This package imports no framework: it holds what both plugins share, one
module a part — `settings` (the ``pb:`` prefix, the variables above),
`registrations` (the table of what to register, and each spec's kind),
`tools_and_markers` (what servers pass, in parsebridge's terms),
`parser_cache` (parser objects, made once; `offline_tokenizer`) and
`registrar` (a plugin's `register` and `register_all`); their names are
importable from here.
"""

from __future__ import annotations

from .parser_cache import PARSERS, ParserCache, offline_tokenizer
from .registrar import Registrar
from .registrations import (
    Registration,
    alias_registrations,
    describe,
    enumerate_registrations,
    kind_of,
    plugin_name,
    registrations,
)
from .settings import (
    DEFAULT_BACKENDS,
    ENV_BACKENDS,
    ENV_ON_ERROR,
    ENV_PARSERS,
    FRAMEWORK_LABELS,
    OTHER_FRAMEWORK,
    PREFIX,
    InvalidSpecError,
    Kind,
    PluginConfigError,
    default_backends,
    on_error_policy,
    parse_env_parsers,
)
from .settings import (
    _log as _log,
)
from .tools_and_markers import (
    reasoning_closed,
    reasoning_markers,
    reasoning_open,
    tool_dicts,
    tool_indices,
    tool_start_marker,
)


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


__all__ = [
    "DEFAULT_BACKENDS",
    "ENV_BACKENDS",
    "ENV_ON_ERROR",
    "ENV_PARSERS",
    "FRAMEWORK_LABELS",
    "OTHER_FRAMEWORK",
    "PARSERS",
    "PREFIX",
    "FrameworkMissingError",
    "InvalidSpecError",
    "Kind",
    "ParserCache",
    "PluginConfigError",
    "Registrar",
    "Registration",
    "alias_registrations",
    "default_backends",
    "describe",
    "enumerate_registrations",
    "kind_of",
    "offline_tokenizer",
    "on_error_policy",
    "parse_env_parsers",
    "plugin_name",
    "reasoning_closed",
    "reasoning_markers",
    "reasoning_open",
    "registrations",
    "require_framework",
    "tool_dicts",
    "tool_indices",
    "tool_start_marker",
    "vllm_plugin_file",
]

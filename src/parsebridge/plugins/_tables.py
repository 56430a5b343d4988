"""The frameworks' parser tables, saved and put back.

Registering a plugin writes ``pb:…`` names into vLLM's and SGLang's managers
(dicts held as class attributes). A server wants that for its lifetime; a
probe or a test does not: `tables_restored` gives the tables back as they
were, so a conformance run in a user's process leaves the frameworks' own
name lists untouched.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: (module, class) of every table a plugin registers into, across the supported releases.
REGISTRIES = (
    ("vllm.tool_parsers", "ToolParserManager"),
    ("vllm.entrypoints.openai.tool_parsers", "ToolParserManager"),
    ("vllm.reasoning", "ReasoningParserManager"),
    ("vllm.parser", "ParserManager"),
    ("sglang.srt.function_call.function_call_parser", "FunctionCallParser"),
    ("sglang.srt.parser.reasoning_parser", "ReasoningParser"),
    ("sglang.srt.reasoning_parser", "ReasoningParser"),
)

#: Modules that register on import (vLLM's plugin module, and its file form on vLLM 0.11).
PLUGIN_MODULES = frozenset({"parsebridge.plugins.vllm", "pb_vllm_plugin"})


def tables() -> list[dict[Any, Any]]:
    """The dicts the registries hold as class attributes (of the frameworks that are installed)."""
    out: dict[int, dict[Any, Any]] = {}
    for module, cls_name in REGISTRIES:
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            continue
        try:
            cls = getattr(importlib.import_module(module), cls_name, None)
        except Exception:  # a module this release does not have
            continue
        for value in vars(cls).values() if cls is not None else ():
            if isinstance(value, dict):
                out[id(value)] = value
    return list(out.values())


@contextmanager
def tables_restored(*, forget_all_plugins: bool = False) -> Iterator[None]:
    """Inside, register freely; after, every table is as it was, and the plugin modules imported
    inside (all of them with `forget_all_plugins`) are forgotten, so a later import registers again."""
    saved = [(table, dict(table)) for table in tables()]
    loaded = set() if forget_all_plugins else PLUGIN_MODULES & set(sys.modules)
    try:
        yield
    finally:
        for table, before in saved:
            table.clear()
            table.update(before)
        for name in PLUGIN_MODULES - loaded:
            sys.modules.pop(name, None)

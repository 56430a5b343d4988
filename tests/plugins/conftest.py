"""Plugin tests drive the frameworks' real servers with the scripted-engine harness in tests/serving."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SERVING = Path(__file__).resolve().parent.parent / "serving"
if str(SERVING) not in sys.path:
    sys.path.insert(0, str(SERVING))


#: The framework tables a plugin test registers parsers into (module, class): each test module
#: gets them back as they were, so names it registered (``pb:…``, a test's own parser) never
#: reach tests that read the frameworks' own names in the same worker process.
_REGISTRIES = (
    ("vllm.tool_parsers", "ToolParserManager"),
    ("vllm.entrypoints.openai.tool_parsers", "ToolParserManager"),
    ("vllm.reasoning", "ReasoningParserManager"),
    ("vllm.parser", "ParserManager"),
    ("sglang.srt.function_call.function_call_parser", "FunctionCallParser"),
    ("sglang.srt.parser.reasoning_parser", "ReasoningParser"),
    ("sglang.srt.reasoning_parser", "ReasoningParser"),
)


def _tables() -> list[dict[Any, Any]]:
    """The dicts the registries hold as class attributes (frameworks that are installed)."""
    out: dict[int, dict[Any, Any]] = {}
    for module, cls_name in _REGISTRIES:
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


@pytest.fixture(scope="module", autouse=True)
def _framework_registries_restored() -> Iterator[None]:
    saved = [(table, dict(table)) for table in _tables()]
    yield
    for table, before in saved:
        table.clear()
        table.update(before)
    # The plugin modules register on import: forget them, so the next module's import registers again.
    for name in [m for m in sys.modules if m in _PLUGIN_MODULES]:
        del sys.modules[name]


_PLUGIN_MODULES = frozenset({"parsebridge.plugins.vllm", "pb_vllm_plugin"})

"""One home per model output format: markers, renderer, tool-result message.

Everything the project knows about a family's format lives in one module
here (`formats/hermes.py`, `formats/kimi_k2.py`, …): the builtin parsers
import their markers from it, and the fixtures, the round-trip property
suite, the adversarial corpus and the benchmarks render model output with
its renderer. Nothing here parses: parsing is the backends' job.

    from parsebridge.formats import tool_format
    fmt = tool_format("hermes")
    text = fmt.render([("get_weather", {"city": "Paris"})])
    fmt.markers, fmt.format_tool_result("call_1", {"temp": 21})

Modules load on first use; this package imports only the standard library.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._base import Call, ReasoningFormat, ToolFormat, dump_json, join_calls, result_text, xml_value

#: tool family → "module:ATTRIBUTE" (modules relative to this package).
TOOL_FORMATS: dict[str, str] = {
    "hermes": "hermes:TOOL",
    "llama3_json": "llama3_json:TOOL",
    "mistral": "mistral:TOOL",
    "pythonic": "pythonic:TOOL",
    "deepseek_v3": "deepseek_v3:TOOL",
    "deepseek_v31": "deepseek_v31:TOOL",
    "qwen3_coder": "qwen3_coder:TOOL",
    "kimi_k2": "kimi_k2:TOOL",
    "glm45": "glm45:TOOL",
    "granite": "granite:TOOL",
    "internlm": "internlm:TOOL",
    "xlam": "xlam:TOOL",
    "step3": "step3:TOOL",
    "minimax_m2": "minimax_m2:TOOL",
    "gpt_oss": "gpt_oss:TOOL",
    "jamba": "jamba:TOOL",
    "hunyuan_a13b": "hunyuan_a13b:TOOL",
    "phi4_mini": "phi4_mini:TOOL",
    "seed_oss": "seed_oss:TOOL",
    # XML-ish tagged-parameter formats (tools-c)
    "glm47": "glm47:TOOL",
    "iquest_q1": "iquest_q1:TOOL",
    "dots": "dots:TOOL",
    "minicpm5": "minicpm5:TOOL",
    "gemma4": "gemma4:TOOL",
    "functiongemma": "functiongemma:TOOL",
}

#: reasoning family → "module:ATTRIBUTE".
REASONING_FORMATS: dict[str, str] = {
    "qwen3": "think:QWEN3",
    "deepseek_r1": "think:DEEPSEEK_R1",
    "qwen3_thinking": "think:QWEN3_THINKING",
    "mistral": "mistral:REASONING",
}


class UnknownFormatError(KeyError):
    """No format module for this family."""


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


def _aliases(table: dict[str, str]) -> dict[str, str]:
    return {alias: family for family in table for alias in _load(table[family]).aliases}


def tool_format(family: str) -> ToolFormat:
    """The tool-call format of `family` (its own name or an alias such as ``qwen3_xml``)."""
    key = family.strip().lower().replace("-", "_")
    if key not in TOOL_FORMATS:
        key = _aliases(TOOL_FORMATS).get(key, key)
    if key not in TOOL_FORMATS:
        raise UnknownFormatError(
            f"no tool format for family {family!r}; known: {', '.join(sorted(TOOL_FORMATS))}"
        )
    fmt: ToolFormat = _load(TOOL_FORMATS[key])
    return fmt


def reasoning_format(family: str) -> ReasoningFormat:
    """The reasoning format of `family`."""
    key = family.strip().lower().replace("-", "_")
    if key not in REASONING_FORMATS:
        key = _aliases(REASONING_FORMATS).get(key, key)
    if key not in REASONING_FORMATS:
        raise UnknownFormatError(
            f"no reasoning format for family {family!r}; known: {', '.join(sorted(REASONING_FORMATS))}"
        )
    fmt: ReasoningFormat = _load(REASONING_FORMATS[key])
    return fmt


def tool_families() -> list[str]:
    return list(TOOL_FORMATS)


def reasoning_families() -> list[str]:
    return list(REASONING_FORMATS)


__all__ = [
    "REASONING_FORMATS",
    "TOOL_FORMATS",
    "Call",
    "ReasoningFormat",
    "ToolFormat",
    "UnknownFormatError",
    "dump_json",
    "join_calls",
    "reasoning_families",
    "reasoning_format",
    "result_text",
    "tool_families",
    "tool_format",
    "xml_value",
]

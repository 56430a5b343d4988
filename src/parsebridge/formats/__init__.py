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

A tool format also carries `grammar` (its calls with arguments given as
text, for the adversarial corpus: malformed, huge or 10k-deep arguments) and
what a round trip may draw (`content`: where text stays content, `multi`,
`typed_values`). The fixture cases are data in `formats/cases/`
(`<kind>-<family>.yaml`, rendered by `parsebridge.formats.cases`).

Modules load on first use; this package imports only the standard library
and `protocol.family_rows` (itself standard-library only: the family names
and aliases `tool_format`/`reasoning_format` accept come from
`protocol/families.toml`, read on the first lookup). `formats.cases` reads
YAML with pyyaml, when asked to.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from typing import Any

from ..protocol.errors import ParsebridgeError, closest
from ..protocol.family_rows import Kind, normalize_name, rows_of
from ._base import Call, ContentAt, ReasoningFormat, ToolFormat, dump_json, join_calls, result_text, xml_value

# Which families and aliases exist is `protocol/families.toml`'s to say (read with
# the standard library by `protocol.family_rows`, on first lookup). These tables only
# say where each format family's object lives; every key is a family of the table,
# and a family without a format of its own names one with its `format` key.

#: tool format family → "module:ATTRIBUTE" (modules relative to this package).
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
    # JSON-payload formats (tools-a)
    "granite_20b_fc": "granite:TOOL_20B_FC",
    "json": "json_calls:TOOL",
    "cohere": "cohere:TOOL",
    "longcat": "longcat:TOOL",
    "gigachat3": "gigachat3:TOOL",
    "apertus": "apertus:TOOL",
    # DSML (tools-b)
    "deepseek_v32": "deepseek_v32:TOOL",
    "deepseek_v4": "deepseek_v4:TOOL",
    "deepseek_v41": "deepseek_v41:TOOL",
    "kimi_k3": "kimi_k3:TOOL",
    "plamo3": "plamo3:TOOL",
    "inkling": "inkling:TOOL",
    "minicpm5": "minicpm5:TOOL",
    # XML-ish tagged-parameter formats (tools-c)
    "glm47": "glm47:TOOL",
    "iquest_q1": "iquest_q1:TOOL",
    "dots": "dots:TOOL",
    "gemma4": "gemma4:TOOL",
    "functiongemma": "functiongemma:TOOL",
    # builtin-only formats (issue 27)
    "nemotron_deci": "nemotron_deci:TOOL",
    "sarashina": "sarashina:TOOL",
}

#: reasoning format family → "module:ATTRIBUTE".
REASONING_FORMATS: dict[str, str] = {
    "qwen3": "think:QWEN3",
    "deepseek_r1": "think:DEEPSEEK_R1",
    "qwen3_thinking": "think:QWEN3_THINKING",
    "mistral": "mistral:REASONING",
    "gpt_oss": "gpt_oss:REASONING",
    # builtin reasoning breadth (issue 14): think-tag variants, then the other shapes
    "kimi": "think:KIMI",
    "kimi_k2": "think:KIMI_K2",
    "k2_horizon": "think:K2_HORIZON",
    "glm45": "think:GLM45",
    "seed_oss": "think:SEED_OSS",
    "minimax_m2": "think:MINIMAX_M2",
    "minimax_m3": "think:MINIMAX_M3",
    "nemotron_v3": "think:NEMOTRON_V3",
    "granite_thinking": "think:GRANITE_THINKING",
    "step3": "think:STEP3",
    "step3p5": "think:STEP3P5",
    "deepseek_v3": "think:DEEPSEEK_V3",
    "holo2": "think:HOLO2",
    "deepseek_v4": "think:DEEPSEEK_V4",
    "deepseek_v41": "think:DEEPSEEK_V41",
    "olmo3": "think:OLMO3",
    "mimo": "think:MIMO",
    "poolside_v1": "think:POOLSIDE_V1",
    "minicpmv": "think:MINICPMV",
    "plamo3": "think:PLAMO3",
    "gemma4": "think:GEMMA4",
    "apertus": "think:APERTUS",
    "iquest_q1": "think:IQUEST_Q1",
    "hy_v3": "think:HY_V3",
    "hy_v4": "think:HY_V4",
    "granite": "reasoning_wrapped:GRANITE",
    "hunyuan_a13b": "reasoning_wrapped:HUNYUAN_A13B",
    "ernie45": "reasoning_wrapped:ERNIE45",
    "cohere_command3": "reasoning_wrapped:COHERE_COMMAND3",
    "cohere_command4": "reasoning_wrapped:COHERE_COMMAND4",
    "kimi_k3": "reasoning_wrapped:KIMI_K3",
    "minimax_m2_append_think": "reasoning_wrapped:MINIMAX_M2_APPEND_THINK",
    "inkling": "inkling:REASONING",
}


class UnknownFormatError(ParsebridgeError, KeyError):
    """No format module for this family: a `ParsebridgeError` like every error parsebridge raises
    on purpose, and a `KeyError` (a lookup that found nothing) as before."""

    def __str__(self) -> str:  # KeyError's own writes the message quoted, as a key's repr
        return str(self.args[0]) if self.args else ""


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


_TABLES: dict[Kind, dict[str, str]] = {"tool": TOOL_FORMATS, "reasoning": REASONING_FORMATS}


@functools.cache
def _spellings(kind: Kind) -> dict[str, str]:
    """Every family name and alias in `families.toml` (normalised) → the format family it writes."""
    table = _TABLES[kind]
    out = {normalize_name(family): family for family in table}
    for row in rows_of(kind):
        if row.format_family in table:
            for name in row.names:
                out.setdefault(normalize_name(name), row.format_family)
    return out


@functools.cache
def _format(kind: Kind, family: str) -> Any:
    """The format object of a format family, its `aliases` filled from `families.toml`."""
    fmt = _load(_TABLES[kind][family])
    others = tuple(r.name for r in rows_of(kind) if r.format == family and r.name != family)
    return dataclasses.replace(fmt, aliases=others) if others != fmt.aliases else fmt


def _lookup(kind: Kind, family: str) -> Any:
    key = _spellings(kind).get(normalize_name(family))
    if key is None:
        known = sorted(_TABLES[kind])
        near = closest(family, known)
        hint = f" Did you mean {', '.join(map(repr, near))}?" if near else ""
        raise UnknownFormatError(f"no {kind} format for family {family!r}.{hint} Known: {', '.join(known)}")
    return _format(kind, key)


def tool_format(family: str) -> ToolFormat:
    """The tool-call format of `family`: a family name or alias from `families.toml`.

    A family that writes another family's format (``qwen3_xml``, ``granite4``)
    gets that format; its `aliases` name the other families that write it.
    """
    fmt: ToolFormat = _lookup("tool", family)
    return fmt


def reasoning_format(family: str) -> ReasoningFormat:
    """The reasoning format of `family` (a family name or alias from `families.toml`)."""
    fmt: ReasoningFormat = _lookup("reasoning", family)
    return fmt


def tool_families() -> list[str]:
    """The tool families with a format module of their own."""
    return list(TOOL_FORMATS)


def reasoning_families() -> list[str]:
    """The reasoning families with a format module of their own."""
    return list(REASONING_FORMATS)


__all__ = [
    "REASONING_FORMATS",
    "TOOL_FORMATS",
    "Call",
    "ContentAt",
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

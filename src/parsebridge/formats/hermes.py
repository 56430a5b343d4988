"""Hermes / Qwen2.5 / Qwen3: ``<tool_call>\\n{"name": …, "arguments": …}\\n</tool_call>`` per call."""

from __future__ import annotations

from typing import Any

from ._base import (
    AFTER,
    BEFORE,
    BETWEEN,
    TextGrammar,
    ToolFormat,
    dump_json,
    join_calls,
    joined,
    object_call,
    result_text,
)

START, END = "<tool_call>", "</tool_call>"
RESPONSE_START, RESPONSE_END = "<tool_response>", "</tool_response>"


def render_call(name: str, args: dict[str, Any], *, ascii_only: bool = False, key: str = "arguments") -> str:
    return f"{START}\n{dump_json({'name': name, key: args}, ascii_only)}\n{END}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """What the Qwen2.5 / Hermes templates render for a tool message (the format has no id)."""
    return f"{RESPONSE_START}\n{result_text(result)}\n{RESPONSE_END}"


GRAMMAR = TextGrammar(
    (START, END), lambda n, a, i: f"{START}\n" + object_call()(n, a, i) + f"\n{END}", joined("\n")
)

TOOL = ToolFormat(
    family="hermes",
    summary='`<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes, Qwen2.5, Qwen3)',
    markers=(START, END),
    render=join_calls(render_call),
    format_tool_result=format_tool_result,
    grammar=GRAMMAR,
    content=BEFORE | AFTER | BETWEEN,
)

"""Meituan LongCat-Flash: ``<longcat_tool_call>{"name": …, "arguments": …}</longcat_tool_call>`` per call."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json, join_calls, result_text

START, END = "<longcat_tool_call>", "</longcat_tool_call>"
RESPONSE_START, RESPONSE_END = "<longcat_tool_response>", "</longcat_tool_response>"


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{START}{dump_json({'name': name, 'arguments': args})}{END}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<longcat_tool_response>…</longcat_tool_response>``, as the LongCat template wraps tool output (no id)."""
    return f"{RESPONSE_START}{result_text(result)}{RESPONSE_END}"


TOOL = ToolFormat(
    family="longcat",
    summary='`<longcat_tool_call>{"name": …, "arguments": …}</longcat_tool_call>` (Hermes with its own tags)',
    markers=(START, END),
    render=join_calls(render_call),
    format_tool_result=format_tool_result,
)

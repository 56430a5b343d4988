"""Qwen3-Coder XML calls: ``<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, join_calls, result_text, xml_value

START, END = "<tool_call>", "</tool_call>"
FN, FN_END = "<function=", "</function>"
PARAM, PARAM_END = "<parameter=", "</parameter>"


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"{PARAM}{k}>\n{xml_value(v)}\n{PARAM_END}\n" for k, v in args.items())
    return f"{START}\n{FN}{name}>\n{params}{FN_END}\n{END}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<tool_response>\\n…\\n</tool_response>`` as the Qwen3-Coder template renders it."""
    return f"<tool_response>\n{result_text(result)}\n</tool_response>"


TOOL = ToolFormat(
    family="qwen3_coder",
    summary="`<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>`, values typed by the tool schema",
    markers=(START, END, FN, FN_END, PARAM, PARAM_END),
    render=join_calls(render_call),
    format_tool_result=format_tool_result,
    aliases=("qwen3_xml",),
)

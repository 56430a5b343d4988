"""Swiss AI Apertus: ``<|tools_prefix|>[{"NAME": {arguments}}, …]<|tools_suffix|>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json, result_text

START, END = "<|tools_prefix|>", "<|tools_suffix|>"


def render(calls: Any) -> str:
    return START + dump_json([{n: a} for n, a in calls]) + END


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """The result as the tool message's content (JSON; the format has no id)."""
    return result_text(result)


TOOL = ToolFormat(
    family="apertus",
    summary='`<|tools_prefix|>[{"NAME": {arguments}}]<|tools_suffix|>` (name as the key)',
    markers=(START, END),
    render=render,
    format_tool_result=format_tool_result,
    servers_content="keep",
)

"""IBM Granite: 3.x ``<|tool_call|>`` + a JSON array of calls; granite-20b-functioncalling ``<function_call> {json}``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json, json_list_format, result_text

TAG = "<|tool_call|>"
#: Granite 3.1+ may write the marker as plain text instead of the special token.
TEXT_TAG = "<tool_call>"
#: granite-20b-functioncalling: one marker per call object, no closing marker.
FC_TAG = "<function_call>"
ROLE_START, ROLE_END, TURN_END = "<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"


def render_fc(calls: Any, *, sep: str = "\n") -> str:
    return sep.join(f"{FC_TAG} " + dump_json({"name": n, "arguments": a}) for n, a in calls)


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """The Granite 3.x template's tool turn: ``<|start_of_role|>tool<|end_of_role|>…<|end_of_text|>`` (no id)."""
    return f"{ROLE_START}tool{ROLE_END}{result_text(result)}{TURN_END}"


TOOL = json_list_format(
    "granite",
    '`<|tool_call|>[{"name": …, "arguments": …}]` (Granite 3.x; `<tool_call>` as text too)',
    TAG,
    format_tool_result=format_tool_result,
)
render, GRAMMAR = TOOL.render, TOOL.grammar

TOOL_20B_FC = ToolFormat(
    family="granite_20b_fc",
    summary='`<function_call> {"name": …, "arguments": …}` per call (granite-20b-functioncalling)',
    markers=(FC_TAG,),
    render=render_fc,
    format_tool_result=format_tool_result,
)

"""Llama-Nemotron (NVIDIA): ``<TOOLCALL>[{"name": …, "arguments": {…}}, …]</TOOLCALL>``."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, dump_json, joined, object_call, result_text

START, END = "<TOOLCALL>", "</TOOLCALL>"


def render(calls: Any, *, key: str = "arguments") -> str:
    return START + dump_json([{"name": n, key: a} for n, a in calls]) + END


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """The result as the tool message's content (the format has no id)."""
    return result_text(result)


GRAMMAR = TextGrammar((START, END), object_call(), joined(", ", START + "[", "]" + END))

TOOL = ToolFormat(
    family="nemotron_deci",
    summary='`<TOOLCALL>[{"name": …, "arguments": …}]</TOOLCALL>` (Llama-Nemotron)',
    markers=(START, END),
    render=render,
    format_tool_result=format_tool_result,
    grammar=GRAMMAR,
    content_before=True,
    content_after=True,
)

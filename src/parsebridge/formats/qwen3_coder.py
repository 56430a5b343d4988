"""Qwen3-Coder XML calls: ``<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, BETWEEN, TextGrammar, ToolFormat, join_calls, joined, xml_call, xml_value
from .hermes import format_tool_result

START, END = "<tool_call>", "</tool_call>"
FN, FN_END = "<function=", "</function>"
PARAM, PARAM_END = "<parameter=", "</parameter>"


def render_call(name: str, args: dict[str, Any]) -> str:
    params = "".join(f"{PARAM}{k}>\n{xml_value(v)}\n{PARAM_END}\n" for k, v in args.items())
    return f"{START}\n{FN}{name}>\n{params}{FN_END}\n{END}"


GRAMMAR = TextGrammar(
    (START, END, FN, FN_END, PARAM, PARAM_END),
    xml_call(
        lambda n: f"{START}\n{FN}{n}>\n", f"{FN_END}\n{END}", lambda k, v: f"{PARAM}{k}>\n{v}\n{PARAM_END}\n"
    ),
    joined("\n"),
    json_args=False,
)

# Tool results: Hermes' ``<tool_response>\\n…\\n</tool_response>``, as the Qwen3-Coder template renders them.
TOOL = ToolFormat(
    family="qwen3_coder",
    summary="`<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>`, values typed by the tool schema",
    markers=(START, END, FN, FN_END, PARAM, PARAM_END),
    render=join_calls(render_call),
    format_tool_result=format_tool_result,
    grammar=GRAMMAR,
    content=BEFORE | AFTER | BETWEEN,
    typed_values=True,
    servers_content="marker",
)

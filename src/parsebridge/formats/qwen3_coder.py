"""Qwen3-Coder XML calls: ``<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>``."""

from __future__ import annotations

from ._base import AFTER, BEFORE, BETWEEN, XmlCalls
from .hermes import format_tool_result

START, END = "<tool_call>", "</tool_call>"
FN, FN_END = "<function=", "</function>"
PARAM, PARAM_END = "<parameter=", "</parameter>"


MARKERS = (START, END, FN, FN_END, PARAM, PARAM_END)
#: One call's syntax, written once: the renderer and the text grammar follow from it.
CALLS = XmlCalls(
    lambda n: f"{START}\n{FN}{n}>\n", f"{FN_END}\n{END}", lambda k, v: f"{PARAM}{k}>\n{v}\n{PARAM_END}\n"
)
render_call = CALLS.render_call

# Tool results: Hermes' ``<tool_response>\\n…\\n</tool_response>``, as the Qwen3-Coder template renders them.
TOOL = CALLS.tool_format(
    "qwen3_coder",
    "`<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>`, values typed by the tool schema",
    MARKERS,
    format_tool_result=format_tool_result,
    grammar=MARKERS,
    content=BEFORE | AFTER | BETWEEN,
    servers_content="marker",
)
GRAMMAR = TOOL.grammar

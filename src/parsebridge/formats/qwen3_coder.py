"""Qwen3-Coder XML calls: ``<tool_call><function=NAME><parameter=P>…</parameter></function></tool_call>``."""

from __future__ import annotations

from collections.abc import Callable

from ._base import AFTER, BEFORE, BETWEEN, XmlCalls
from .hermes import format_tool_result

START, END = "<tool_call>", "</tool_call>"
FN, FN_END = "<function=", "</function>"
PARAM, PARAM_END = "<parameter=", "</parameter>"


def function_calls(start: str, end: str, param: Callable[[str, str], str]) -> XmlCalls:
    """``{start}\\n<function=NAME>\\n`` … ``</function>\\n{end}`` per call, calls a line apart (Qwen3-Coder's
    and Seed-OSS' calls; `param` writes one parameter, where they differ)."""
    return XmlCalls(lambda n: f"{start}\n{FN}{n}>\n", f"{FN_END}\n{end}", param)


MARKERS = (START, END, FN, FN_END, PARAM, PARAM_END)
#: One call's syntax, written once: the renderer and the text grammar follow from it.
CALLS = function_calls(START, END, lambda k, v: f"{PARAM}{k}>\n{v}\n{PARAM_END}\n")
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

"""GLM-4.5 / 4.6: ``<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>…</tool_call>``."""

from __future__ import annotations

from ._base import AFTER, BEFORE, BETWEEN, XmlCalls
from .hermes import format_tool_result

START, END = "<tool_call>", "</tool_call>"
KEY, KEY_END, VALUE, VALUE_END = "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"


MARKERS = (START, END, KEY, KEY_END, VALUE, VALUE_END)
#: One call's syntax, written once: the renderer and the text grammar follow from it.
CALLS = XmlCalls(lambda n: f"{START}{n}\n", END, lambda k, v: f"{KEY}{k}{KEY_END}\n{VALUE}{v}{VALUE_END}\n")
render_call = CALLS.render_call


# Tool results: Hermes' ``<tool_response>\\n…\\n</tool_response>``, the GLM-4.5 chat template's tool
# message body (after ``<|observation|>``).
TOOL = CALLS.tool_format(
    "glm45",
    "`<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>…</tool_call>`, values typed by the tool schema",
    MARKERS,
    grammar=MARKERS,
    content=BEFORE | AFTER | BETWEEN,
    format_tool_result=format_tool_result,
    servers_content="marker",
)
GRAMMAR = TOOL.grammar

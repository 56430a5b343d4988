"""GLM-4.5 / 4.6: ``<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>…</tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, BETWEEN, TextGrammar, ToolFormat, join_calls, joined, xml_call, xml_value
from .hermes import format_tool_result

START, END = "<tool_call>", "</tool_call>"
KEY, KEY_END, VALUE, VALUE_END = "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"


def render_call(name: str, args: dict[str, Any]) -> str:
    pairs = "".join(f"{KEY}{k}{KEY_END}\n{VALUE}{xml_value(v)}{VALUE_END}\n" for k, v in args.items())
    return f"{START}{name}\n{pairs}{END}"


GRAMMAR = TextGrammar(
    (START, END, KEY, KEY_END, VALUE, VALUE_END),
    xml_call(lambda n: f"{START}{n}\n", END, lambda k, v: f"{KEY}{k}{KEY_END}\n{VALUE}{v}{VALUE_END}\n"),
    joined("\n"),
    json_args=False,
)


# Tool results: Hermes' ``<tool_response>\\n…\\n</tool_response>``, the GLM-4.5 chat template's tool
# message body (after ``<|observation|>``).
TOOL = ToolFormat(
    family="glm45",
    summary="`<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>…</tool_call>`, values typed by the tool schema",
    markers=(START, END, KEY, KEY_END, VALUE, VALUE_END),
    render=join_calls(render_call),
    grammar=GRAMMAR,
    content=BEFORE | AFTER | BETWEEN,
    typed_values=True,
    format_tool_result=format_tool_result,
    servers_content="marker",
)

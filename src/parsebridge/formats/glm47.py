"""GLM-4.7 / GLM-5: GLM-4.5's calls without the newlines: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._base import ToolFormat, join_calls, xml_value
from .glm45 import END, KEY, KEY_END, START, VALUE, VALUE_END, format_tool_result


def call_renderer(start: str, end: str) -> Callable[[str, dict[str, Any]], str]:
    """(name, args) → ``{start}NAME<arg_key>k</arg_key><arg_value>v</arg_value>…{end}`` (no newlines)."""

    def render_call(name: str, args: dict[str, Any]) -> str:
        pairs = "".join(f"{KEY}{k}{KEY_END}{VALUE}{xml_value(v)}{VALUE_END}" for k, v in args.items())
        return f"{start}{name}{pairs}{end}"

    return render_call


render_call = call_renderer(START, END)


TOOL = ToolFormat(
    family="glm47",
    summary="`<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>` (GLM-4.5's calls, no newlines), values typed by the tool schema",
    markers=(START, END, KEY, KEY_END, VALUE, VALUE_END),
    render=join_calls(render_call, sep=""),
    format_tool_result=format_tool_result,
    typed_values=True,
)

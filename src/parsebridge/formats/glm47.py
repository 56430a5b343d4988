"""GLM-4.7 / GLM-5: GLM-4.5's calls without the newlines: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, XmlCalls
from .glm45 import END, KEY, KEY_END, START, VALUE, VALUE_END, format_tool_result


def arg_key_calls(start: str, end: str) -> XmlCalls:
    """``{start}NAME<arg_key>k</arg_key><arg_value>v</arg_value>…{end}`` per call (no newlines)."""
    return XmlCalls(lambda n: start + n, end, lambda k, v: f"{KEY}{k}{KEY_END}{VALUE}{v}{VALUE_END}", sep="")


def arg_key_format(family: str, summary: str, start: str, end: str, **facts: Any) -> ToolFormat:
    """A format writing GLM-4.7's calls between its own `start` and `end` (IQuest's blocks), values
    typed by the tool schema; `facts` are its other fields (its tool result)."""
    return arg_key_calls(start, end).tool_format(
        family, summary, (start, end, KEY, KEY_END, VALUE, VALUE_END), **facts
    )


render_call = arg_key_calls(START, END).render_call


TOOL = arg_key_format(
    "glm47",
    "`<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>` (GLM-4.5's calls, no newlines), values typed by the tool schema",
    START,
    END,
    format_tool_result=format_tool_result,
)

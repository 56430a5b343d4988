"""IQuest-Coder (Q1): GLM-4.7's calls in ``<iquest_tool_call>`` blocks: ``<iquest_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</iquest_tool_call>``."""

from __future__ import annotations

from ._base import ToolFormat, join_calls
from .glm45 import KEY, KEY_END, VALUE, VALUE_END
from .glm47 import call_renderer

START, END = "<iquest_tool_call>", "</iquest_tool_call>"
render_call = call_renderer(START, END)


# Tool results: `ToolFormat`'s default, the result text as is: neither framework ships the IQuest
# template's tool turn, so we add no wrapper.
TOOL = ToolFormat(
    family="iquest_q1",
    summary="`<iquest_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</iquest_tool_call>`, values typed by the tool schema",
    markers=(START, END, KEY, KEY_END, VALUE, VALUE_END),
    render=join_calls(render_call, sep=""),
    typed_values=True,
)

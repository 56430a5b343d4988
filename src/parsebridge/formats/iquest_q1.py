"""IQuest-Coder (Q1): GLM-4.7's calls in ``<iquest_tool_call>`` blocks: ``<iquest_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</iquest_tool_call>``."""

from __future__ import annotations

from .glm45 import KEY, KEY_END, VALUE, VALUE_END
from .glm47 import arg_key_calls, arg_key_format

START, END = "<iquest_tool_call>", "</iquest_tool_call>"
render_call = arg_key_calls(START, END).render_call


# Tool results: `ToolFormat`'s default, the result text as is: neither framework ships the IQuest
# template's tool turn, so we add no wrapper.
TOOL = arg_key_format(
    "iquest_q1",
    "`<iquest_tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</iquest_tool_call>`, values typed by the tool schema",
    START,
    END,
)

__all__ = ["END", "KEY", "KEY_END", "START", "TOOL", "VALUE", "VALUE_END", "render_call"]

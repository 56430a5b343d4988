"""IQuest-Coder (Q1) tool calls: GLM-4.7's layout in ``<iquest_tool_call>`` blocks.

Format::

    <iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></iquest_tool_call>

Read exactly as `glm45` reads GLM (the name ends at a newline, ``<arg_key>``
or the block's end; values typed by the tool schema); only the block tags
differ. Malformed output follows the shared `tagged` machine (see glm45).

`format_tool_result`: the result text as is (no IQuest template ships with
the frameworks).
"""

from __future__ import annotations

from typing import Any

from ...formats.iquest_q1 import END, KEY, KEY_END, START, VALUE, VALUE_END
from ...formats.iquest_q1 import format_tool_result as _format_tool_result
from .engines.tagged import TaggedCallParser, TaggedCallStream


class IQuestQ1ToolStream(TaggedCallStream):
    start, end = START, END
    param_open, param_name_close = KEY, KEY_END
    value_open, param_close = VALUE, VALUE_END


class IQuestQ1ToolParser(TaggedCallParser):
    """IQuest ``<iquest_tool_call>NAME<arg_key>…`` calls (builtin, incremental)."""

    name = "iquest_q1"
    markers = (START, END, KEY, KEY_END, VALUE, VALUE_END)
    stream_class = IQuestQ1ToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text as is."""
        return _format_tool_result(tool_call_id, result)

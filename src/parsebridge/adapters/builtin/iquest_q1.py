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

from ...formats.iquest_q1 import END, KEY, KEY_END, START, VALUE, VALUE_END
from .engines.tagged_parser import TaggedCallParser, Tags


class IQuestQ1ToolParser(TaggedCallParser):
    """IQuest ``<iquest_tool_call>NAME<arg_key>…`` calls (builtin, incremental)."""

    name = "iquest_q1"
    tags = Tags(START, END, param_open=KEY, param_name_close=KEY_END, value_open=VALUE, param_close=VALUE_END)
    # (values inline, as GLM's: a trailing newline or a double space is the value's, as SGLang reads it)
    stream_flags = frozenset({"inline_values"})

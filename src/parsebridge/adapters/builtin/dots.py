"""dots tool calls (rednote dots.llm).

Format::

    <dots_function_call>
    <invoke name="NAME">
    <parameter name="P">VALUE</parameter>
    </invoke>
    </dots_function_call>

MiniMax-M2's invoke layout in a ``<dots_function_call>`` block: any number of
invokes per block, names with or without quotes, values typed by the tool
schema (`schema_values`) with ONE leading and ONE trailing newline removed.
Malformed output follows the shared `tagged` machine (see minimax_m2).

Where the frameworks differ: SGLang also accepts a JSON ``{"name": …,
"arguments": …}`` object as the block's body. The published format is the
invoke layout, so a JSON body is not a call here: it stays content verbatim
(no call is invented from a body the format does not define).

`format_tool_result`: the result text as is (no dots template ships with the
frameworks).
"""

from __future__ import annotations

from typing import Any

from ...formats.dots import END, INVOKE, INVOKE_END, PARAM, PARAM_END, START
from ...formats.dots import format_tool_result as _format_tool_result
from .engines.tagged import TaggedCallParser, TaggedCallStream


class DotsToolStream(TaggedCallStream):
    start, end = START, END
    call_open, call_close = INVOKE, INVOKE_END
    param_open, param_close = PARAM, PARAM_END


class DotsToolParser(TaggedCallParser):
    """dots ``<dots_function_call><invoke name=…>`` calls (builtin, incremental)."""

    name = "dots"
    markers = (START, END, INVOKE, INVOKE_END, PARAM, PARAM_END)
    stream_class = DotsToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text as is."""
        return _format_tool_result(tool_call_id, result)

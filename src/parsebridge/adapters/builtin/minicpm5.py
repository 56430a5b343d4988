"""MiniCPM5 tool calls (MiniCPM's V3 XML schema).

Format (one element per call, no wrapper, several calls allowed)::

    <function name="NAME"><param name="P">VALUE</param></function>
    <function name="NAME"><param name="P"><![CDATA[multi-line
    text]]></param></function>

A value wrapped whole in ``<![CDATA[…]]>`` is the wrapped text; then it is
typed by the tool schema (`_values`). Because the wrapper is only known when
the value closes, values are emitted when their parameter closes (no
string streaming inside a value). ONE leading and ONE trailing newline are
removed, as for the other tagged formats.

Malformed output (the shared `_tagged` machine): ``<function name=…>`` with
no readable name stays content verbatim up to ``</function>``; stray text
between parameters is content, in place; a missing ``</param>`` is ended by
the next ``<param name=`` or ``</function>``; a new ``<function name=``
closes an unclosed call.

`format_tool_result`: the result text as is (no MiniCPM5 template ships with
the frameworks).
"""

from __future__ import annotations

from typing import Any

from ...formats.minicpm5 import CDATA, CDATA_END, FN, FN_END, PARAM, PARAM_END
from ...formats.minicpm5 import format_tool_result as _format_tool_result
from ._tagged import TaggedCallParser, TaggedCallStream


class MiniCPM5ToolStream(TaggedCallStream):
    call_open, call_close = FN, FN_END
    param_open, param_close = PARAM, PARAM_END

    def _streams_strings(self) -> bool:
        return False

    def _unwrap(self, text: str) -> str:
        inner = text.strip()
        if inner.startswith(CDATA) and inner.endswith(CDATA_END):
            return inner[len(CDATA) : -len(CDATA_END)]
        return text


class MiniCPM5ToolParser(TaggedCallParser):
    """MiniCPM5 ``<function name=…><param name=…>`` calls (builtin, incremental)."""

    name = "minicpm5"
    markers = (FN, FN_END, PARAM, PARAM_END)
    stream_class = MiniCPM5ToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text as is."""
        return _format_tool_result(tool_call_id, result)

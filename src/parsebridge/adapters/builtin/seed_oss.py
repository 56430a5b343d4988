"""ByteDance Seed-OSS tool calls.

Format (Seed-OSS chat template)::

    <seed:tool_call>
    <function=NAME>
    <parameter=P>VALUE</parameter>
    </function>
    </seed:tool_call>

Qwen3-Coder's layout in a ``<seed:tool_call>`` block; values are typed by
the tool schema the same way (`schema_values`), with ONE leading and ONE trailing
newline removed.

Malformed output (the shared `tagged` machine): a block without a readable
``<function=NAME>`` stays content verbatim up to ``</seed:tool_call>``; stray
text between parameters is content, in place; a missing ``</parameter>`` is
ended by the next ``<parameter=`` or ``</function>``; a missing
``</function>`` by the block's end or a new block.

`format_tool_result`: the result text as is (the template puts a tool
message's content verbatim in a ``tool`` turn).
"""

from __future__ import annotations

from typing import Any

from ...formats.seed_oss import END, FN, FN_END, PARAM, PARAM_END, START
from ...formats.seed_oss import format_tool_result as _format_tool_result
from .engines.tagged import TaggedCallParser, TaggedCallStream


class SeedOssToolStream(TaggedCallStream):
    start, end = START, END
    call_open, call_close = FN, FN_END
    param_open, param_close = PARAM, PARAM_END


class SeedOssToolParser(TaggedCallParser):
    """Seed-OSS ``<seed:tool_call><function=…>`` calls (builtin, incremental)."""

    name = "seed_oss"
    markers = (START, END, FN, FN_END, PARAM, PARAM_END)
    stream_class = SeedOssToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text as is, as the Seed-OSS template renders a tool message."""
        return _format_tool_result(tool_call_id, result)

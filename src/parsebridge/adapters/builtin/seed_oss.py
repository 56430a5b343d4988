"""ByteDance Seed-OSS tool calls.

Format (Seed-OSS chat template)::

    <seed:tool_call>
    <function=NAME>
    <parameter=P>VALUE</parameter>
    </function>
    </seed:tool_call>

Qwen3-Coder's layout in a ``<seed:tool_call>`` block; values are typed by
the tool schema the same way (`schema_values`). The template writes a value
inline, so every character between its tags is the value's (a trailing newline,
a double space); under conventions="servers" ONE leading and ONE trailing
newline are removed, as vLLM reads it (SGLang has no Seed-OSS parser).

Malformed output (the shared `tagged` machine): a block without a readable
``<function=NAME>`` stays content verbatim up to ``</seed:tool_call>``; stray
text between parameters is content, in place; a missing ``</parameter>`` is
ended by the next ``<parameter=`` or ``</function>``; a missing
``</function>`` by the block's end or a new block.

`format_tool_result`: the result text as is (the template puts a tool
message's content verbatim in a ``tool`` turn).
"""

from __future__ import annotations

from ...formats.seed_oss import END, FN, FN_END, PARAM, PARAM_END, START
from .engines.tagged_parser import TaggedCallParser, Tags


class SeedOssToolParser(TaggedCallParser):
    """Seed-OSS ``<seed:tool_call><function=…>`` calls (builtin, incremental)."""

    name = "seed_oss"
    tags = Tags(START, END, FN, FN_END, PARAM, param_close=PARAM_END)
    # (values inline: every character is the value's; vLLM, under "servers", trims one newline each side)
    stream_flags = frozenset({"inline_values", "servers_trims_one_newline"})

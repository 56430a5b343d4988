"""dots tool calls (rednote dots.llm).

Format::

    <dots_function_call>
    <invoke name="NAME">
    <parameter name="P">VALUE</parameter>
    </invoke>
    </dots_function_call>

MiniMax-M2's invoke layout in a ``<dots_function_call>`` block: any number of
invokes per block, names with or without quotes, values typed by the tool
schema (`schema_values`), every character between a value's tags its own (a
trailing newline, a double space; under ``conventions="servers"`` the value is
stripped of whitespace, as both servers read it).
Malformed output follows the shared `tagged` machine (see minimax_m2). Under
``conventions="servers"``, as vLLM and SGLang both read it, a value with no declared
schema stays a string (``42`` stays "42"), but the text ``null`` is null.

Where the frameworks differ: SGLang also accepts a JSON ``{"name": …,
"arguments": …}`` object as the block's body. The published format is the
invoke layout, so a JSON body is not a call here: it stays content verbatim
(no call is invented from a body the format does not define).

`format_tool_result`: the result text as is (no dots template ships with the
frameworks).
"""

from __future__ import annotations

from ...formats.dots import END, INVOKE, INVOKE_END, PARAM, PARAM_END, START
from .engines.tagged_parser import TaggedCallParser, Tags


class DotsToolParser(TaggedCallParser):
    """dots ``<dots_function_call><invoke name=…>`` calls (builtin, incremental)."""

    name = "dots"
    tags = Tags(START, END, INVOKE, INVOKE_END, PARAM, param_close=PARAM_END)
    # (both servers keep an undeclared value a string, but read `null` as null first)
    # (values inline: every character is the value's; both servers strip it, so "servers" does)
    stream_flags = frozenset(
        {
            "servers_untyped_strings",
            "servers_untyped_null",
            "inline_values",
            "servers_strips_values",
            "servers_containers_are_text",
            "servers_types_by_type",
        }
    )

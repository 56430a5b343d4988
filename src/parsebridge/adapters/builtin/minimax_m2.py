"""MiniMax-M2 tool calls.

Format (MiniMax-M2 chat template)::

    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="P">VALUE</parameter>
    </invoke>
    <invoke name="…">…</invoke>
    </minimax:tool_call>

One block holds any number of ``<invoke>`` calls. Names are the attribute's
text without its quotes. Values are typed by the tool schema (`schema_values`;
strings verbatim, other types written as JSON); the template writes a value
inline, so every character between its tags is the value's (a trailing newline,
a double space), as vLLM reads it (SGLang strips the value).

Malformed output (the shared `tagged` machine): a block whose first invoke
has no readable name stays content verbatim up to ``</minimax:tool_call>``;
stray text between invokes or parameters is content, in place; a missing
``</parameter>`` is ended by the next ``<parameter name=`` or ``</invoke>``;
a missing ``</invoke>`` is ended by the next ``<invoke name=`` or the block's
end.

Under ``conventions="servers"``, as vLLM and SGLang both read it: a call to a tool the request's
`tools` do not declare is no call (its text is what a block without a readable name gives), and a
value with no declared schema stays a string (``42`` stays "42").

`format_tool_result`: ``<response>{result}</response>``, as the MiniMax-M2
template renders each tool message inside its tool turn.
"""

from __future__ import annotations

from ...formats.minimax_m2 import END, INVOKE, INVOKE_END, PARAM, PARAM_END, START
from .engines.tagged_parser import TaggedCallParser, Tags


class MinimaxM2ToolParser(TaggedCallParser):
    """MiniMax-M2 ``<invoke name=…><parameter name=…>`` calls (builtin, incremental)."""

    name = "minimax_m2"
    tags = Tags(START, END, INVOKE, INVOKE_END, PARAM, param_close=PARAM_END)
    # (both servers drop a call to an undeclared tool, and keep an undeclared parameter's value a string)
    # (values inline: every character between the tags is the value's, as vLLM reads it; SGLang strips it)
    stream_flags = frozenset(
        {
            "servers_drops_undeclared",
            "servers_untyped_strings",
            "inline_values",
            "servers_containers_are_text",
        }
    )

"""GLM-4.5 / 4.6 / 4.7 / 5 tool calls (one parser reads both layouts).

Format (GLM-4.5 / 4.6 chat template)::

    <tool_call>NAME
    <arg_key>K</arg_key>
    <arg_value>V</arg_value>
    </tool_call>

GLM-4.7 / GLM-5 write the same tags without the newlines
(``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``),
so the name ends at the first newline, ``<arg_key>`` or ``</tool_call>``,
whichever comes first; whitespace between tags is ignored. Values are typed
by the tool schema (`schema_values`; strings verbatim, the template writes other
types as JSON) and a value is every character between its tags (both templates
write values inline: a trailing newline or a double space is the value's).

Malformed output (the shared `tagged` machine): ``<tool_call>`` whose name
is missing or not a name (e.g. a JSON body) stays content verbatim up to its
``</tool_call>``; a key with no ``<arg_value>`` is dropped; a missing
``</arg_value>`` is ended by the next ``<arg_key>`` or ``</tool_call>``; a
name cut off by the end of output (no terminator yet) is content; a block with no
parameter that the next ``<tool_call>`` interrupts (``I use <tool_call> blocks.`` then a call:
the start marker written in prose) is no call, its text is text, under both conventions.

Where the frameworks differ: SGLang's ``glm45`` needs the newline after the
name and its ``glm47`` reads the name up to ``<arg_key>``; vLLM uses one
parser for both names. We accept both layouts under both names: nothing in
either template makes the other layout mean something else.

Under ``conventions="servers"``, as vLLM and SGLang both read it: a call to a tool the request's
`tools` do not declare is no call (its text is what a block without a readable name gives), nor
is a block opened right after another ``<tool_call>`` (a doubled start), up to its ``</tool_call>``.
A call cut off by the end of output is no call under both conventions (`whole_calls`).

`format_tool_result`: ``<tool_response>\\n{result}\\n</tool_response>``, the
body the GLM-4.5 template writes after ``<|observation|>``.
"""

from __future__ import annotations

from ...formats.glm45 import END, KEY, KEY_END, START, VALUE, VALUE_END
from .engines.tagged_parser import TaggedCallParser, Tags


class Glm45ToolParser(TaggedCallParser):
    """GLM ``<tool_call>NAME<arg_key>…`` calls (builtin, incremental)."""

    name = "glm45"
    tags = Tags(START, END, param_open=KEY, param_name_close=KEY_END, value_open=VALUE, param_close=VALUE_END)
    # (both servers drop a call to an undeclared tool, read no call in one opened by a doubled
    # start marker, and read a value up to its ``</arg_value>``: an ``<arg_key>`` inside it is text)
    stream_flags = frozenset(
        {
            "servers_drops_undeclared",
            "servers_doubled_start_no_call",
            "inline_values",
            "servers_tag_ends_value",
            "servers_key_in_value_is_text",
        }
    )

"""AI21 Jamba: ``<tool_calls>[{"name", "arguments"}, …]</tool_calls>``."""

from __future__ import annotations

from ._base import AFTER, BEFORE, json_list_format

START, END = "<tool_calls>", "</tool_calls>"


# Tool results: `ToolFormat`'s default, the result as the tool message's content (the template adds
# the turn; the format has no id).
TOOL = json_list_format(
    "jamba", '`<tool_calls>[{"name": …, "arguments": …}]</tool_calls>`', START, END, content=BEFORE | AFTER
)
render, GRAMMAR = TOOL.render, TOOL.grammar

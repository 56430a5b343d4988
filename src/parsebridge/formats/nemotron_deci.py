"""Llama-Nemotron (NVIDIA): ``<TOOLCALL>[{"name": …, "arguments": {…}}, …]</TOOLCALL>``."""

from __future__ import annotations

from ._base import AFTER, BEFORE, json_list_format

START, END = "<TOOLCALL>", "</TOOLCALL>"

# Tool results: `ToolFormat`'s default, the result as the tool message's content (the format has no
# id).
TOOL = json_list_format(
    "nemotron_deci",
    '`<TOOLCALL>[{"name": …, "arguments": …}]</TOOLCALL>` (Llama-Nemotron)',
    START,
    END,
    content=BEFORE | AFTER,
)
render, GRAMMAR = TOOL.render, TOOL.grammar

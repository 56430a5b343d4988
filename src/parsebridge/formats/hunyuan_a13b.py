"""Tencent Hunyuan-A13B: ``<tool_calls>[{"name", "arguments"}, …]</tool_calls>`` (Jamba's shape)."""

from __future__ import annotations

from ._base import ToolFormat
from .jamba import END, GRAMMAR, START, render

# Tool results: `ToolFormat`'s default, as Jamba's.
TOOL = ToolFormat(
    family="hunyuan_a13b",
    summary='`<tool_calls>[{"name": …, "arguments": …}]</tool_calls>` (Jamba\'s shape)',
    markers=(START, END),
    render=render,
    grammar=GRAMMAR,
    content_before=True,
    content_after=True,
)

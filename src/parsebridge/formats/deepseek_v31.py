"""DeepSeek V3.1: the V3 section markers with ``NAME<｜tool▁sep｜>{json}`` bodies (no fence)."""

from __future__ import annotations

from ._base import ToolFormat
from .deepseek_v3 import GRAMMAR_V31, MARKERS, format_tool_result, render_v31

TOOL = ToolFormat(
    family="deepseek_v31",
    summary="`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>` in the V3 section",
    markers=MARKERS,
    render=render_v31,
    format_tool_result=format_tool_result,
    grammar=GRAMMAR_V31,
    content_before=True,
    content_after=True,
    servers_content="marker",
)

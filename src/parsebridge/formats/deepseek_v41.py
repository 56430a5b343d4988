"""DeepSeek V4.1 DSML tool calls: V4's elements with spaced tag names (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke``)."""

from __future__ import annotations

from ._base import ToolFormat
from .deepseek_v4 import format_tool_result
from .deepseek_v32 import DsmlTags, dsml_renderer

TAGS = DsmlTags(" calls", " invoke", " parameter")

TOOL = ToolFormat(
    family="deepseek_v41",
    summary='DSML, spaced: `<｜DSML｜ calls><｜DSML｜ invoke name="…"><｜DSML｜ parameter name="…" string="…">…`',
    markers=TAGS.markers,
    render=dsml_renderer(TAGS),
    format_tool_result=format_tool_result,
    servers_content="marker",
)

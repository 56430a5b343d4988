"""DeepSeek V4 DSML tool calls: V3.2's elements in a ``<｜DSML｜tool_calls>`` block.

Spellings seen in production for the block opener, ``<｜DSML｜toolcalls>`` and
``<｜DSML｜tool>``, are read too (`ALT_BEGINS`).
"""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, result_text
from .deepseek_v32 import DSML, DsmlTags, dsml_renderer

TAGS = DsmlTags("tool_calls")
ALT_BEGINS = (f"<{DSML}toolcalls>", f"<{DSML}tool>")


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<tool_result>…</tool_result>``: one result as V4's encoding renders it (inside a user turn)."""
    return f"<tool_result>{result_text(result)}</tool_result>"


TOOL = ToolFormat(
    family="deepseek_v4",
    summary='DSML: `<｜DSML｜tool_calls><｜DSML｜invoke name="…"><｜DSML｜parameter name="…" string="…">…`',
    markers=(*TAGS.markers, *ALT_BEGINS),
    render=dsml_renderer(TAGS),
    format_tool_result=format_tool_result,
    servers_content="marker",
)

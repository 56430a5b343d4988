"""Swiss AI Apertus: ``<|tools_prefix|>[{"NAME": {arguments}}, …]<|tools_suffix|>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

START, END = "<|tools_prefix|>", "<|tools_suffix|>"


def render(calls: Any) -> str:
    return START + dump_json([{n: a} for n, a in calls]) + END


# Tool results: `ToolFormat`'s default, the result as the tool message's content (JSON; the format
# has no id).
TOOL = ToolFormat(
    family="apertus",
    summary='`<|tools_prefix|>[{"NAME": {arguments}}]<|tools_suffix|>` (name as the key)',
    markers=(START, END),
    render=render,
    servers_content="keep",
)

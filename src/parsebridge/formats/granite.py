"""IBM Granite 3.x: ``<|tool_call|>`` + a JSON array of calls."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

TAG = "<|tool_call|>"


def render(calls: Any) -> str:
    return TAG + dump_json([{"name": n, "arguments": a} for n, a in calls])


TOOL = ToolFormat(
    family="granite",
    summary='`<|tool_call|>[{"name": …, "arguments": …}]`',
    markers=(TAG,),
    render=render,
)

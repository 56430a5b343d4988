"""AI21 Jamba: ``<tool_calls>[{"name", "arguments"}, …]</tool_calls>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

START, END = "<tool_calls>", "</tool_calls>"


def render(calls: Any, *, tag: str = "tool_calls") -> str:
    return f"<{tag}>" + dump_json([{"name": n, "arguments": a} for n, a in calls]) + f"</{tag}>"


TOOL = ToolFormat(
    family="jamba",
    summary='`<tool_calls>[{"name": …, "arguments": …}]</tool_calls>`',
    markers=(START, END),
    render=render,
)

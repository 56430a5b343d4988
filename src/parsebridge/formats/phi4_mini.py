"""Phi-4-mini: ``functools[{"name", "arguments"}, …]``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

TAG = "functools"


def render(calls: Any) -> str:
    return TAG + dump_json([{"name": n, "arguments": a} for n, a in calls])


TOOL = ToolFormat(
    family="phi4_mini",
    summary='`functools[{"name": …, "arguments": …}]`',
    markers=(TAG,),
    render=render,
)

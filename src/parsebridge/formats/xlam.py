"""Salesforce xLAM: a bare JSON array of ``{"name", "arguments"}`` objects."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json


def render(calls: Any) -> str:
    return dump_json([{"name": n, "arguments": a} for n, a in calls])


TOOL = ToolFormat(
    family="xlam",
    summary='a bare JSON array `[{"name": …, "arguments": …}]`',
    markers=(),
    render=render,
)

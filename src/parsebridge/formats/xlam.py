"""Salesforce xLAM: a bare JSON array of ``{"name", "arguments"}`` objects."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, dump_json, joined, object_call


def render(calls: Any) -> str:
    return dump_json([{"name": n, "arguments": a} for n, a in calls])


#: xLAM may fence its array as a json code block.
FENCE = "```json"
GRAMMAR = TextGrammar((FENCE,), object_call(), joined(", ", "[", "]"))

TOOL = ToolFormat(
    family="xlam",
    summary='a bare JSON array `[{"name": …, "arguments": …}]`',
    markers=(),
    render=render,
    grammar=GRAMMAR,
)

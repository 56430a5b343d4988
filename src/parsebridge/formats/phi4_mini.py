"""Phi-4-mini: ``functools[{"name", "arguments"}, …]``."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, dump_json, joined, object_call

TAG = "functools"


def render(calls: Any) -> str:
    return TAG + dump_json([{"name": n, "arguments": a} for n, a in calls])


GRAMMAR = TextGrammar((TAG,), object_call(), joined(", ", f"{TAG}[", "]"))


# Tool results: `ToolFormat`'s default, the result as the tool message's content (the template adds
# the turn; the format has no id).
TOOL = ToolFormat(
    family="phi4_mini",
    summary='`functools[{"name": …, "arguments": …}]`',
    markers=(TAG,),
    render=render,
    grammar=GRAMMAR,
)

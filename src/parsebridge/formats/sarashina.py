"""Sarashina (SB Intuitions): ``<|tool_calls|>`` then a list of Python-literal dicts ``[{'name': …, 'arguments': {…}}]``
(the marker may be missing: a list at the output's start)."""

from __future__ import annotations

from typing import Any

from ._base import BEFORE, ToolFormat

TAG = "<|tool_calls|>"
#: `<|tool_calls|>` is one special token, which a server that skips special tokens strips: the
#: call list then stands alone, opening with this bracket at the start of the output.
BARE_OPEN = "["


def render(calls: Any) -> str:
    return TAG + repr([{"name": n, "arguments": a} for n, a in calls])


# Tool results: `ToolFormat`'s default, the result text as is.
TOOL = ToolFormat(
    family="sarashina",
    summary="`<|tool_calls|>` then a Python-literal list `[{'name': …, 'arguments': {…}}]`",
    markers=(TAG,),
    render=render,
    content=BEFORE,
)

"""Llama-Nemotron (NVIDIA): ``<TOOLCALL>[{"name": …, "arguments": {…}}, …]</TOOLCALL>``."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, dump_json, joined, object_call

START, END = "<TOOLCALL>", "</TOOLCALL>"


def render(calls: Any, *, key: str = "arguments") -> str:
    return START + dump_json([{"name": n, key: a} for n, a in calls]) + END


GRAMMAR = TextGrammar((START, END), object_call(), joined(", ", START + "[", "]" + END))

# Tool results: `ToolFormat`'s default, the result as the tool message's content (the format has no
# id).
TOOL = ToolFormat(
    family="nemotron_deci",
    summary='`<TOOLCALL>[{"name": …, "arguments": …}]</TOOLCALL>` (Llama-Nemotron)',
    markers=(START, END),
    render=render,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
)

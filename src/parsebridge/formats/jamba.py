"""AI21 Jamba: ``<tool_calls>[{"name", "arguments"}, …]</tool_calls>``."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, dump_json, joined, object_call

START, END = "<tool_calls>", "</tool_calls>"


def render(calls: Any, *, tag: str = "tool_calls") -> str:
    return f"<{tag}>" + dump_json([{"name": n, "arguments": a} for n, a in calls]) + f"</{tag}>"


GRAMMAR = TextGrammar((START, END), object_call(), joined(", ", f"{START}[", f"]{END}"))


# Tool results: `ToolFormat`'s default, the result as the tool message's content (the template adds
# the turn; the format has no id).
TOOL = ToolFormat(
    family="jamba",
    summary='`<tool_calls>[{"name": …, "arguments": …}]</tool_calls>`',
    markers=(START, END),
    render=render,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
)

"""Salesforce xLAM: a JSON array of ``{"name", "arguments"}`` objects — bare, fenced, or after a marker."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, dump_json, joined, object_call

FENCE, FENCE_LANG = "```", "json"
#: other wrappers the xLAM handler accepts around the array.
TOOL_CALLS, TAG_START, TAG_END = "[TOOL_CALLS]", "<tool_call>", "</tool_call>"


def render(calls: Any, *, wrap: str = "") -> str:
    """The array; `wrap` = ``fence`` (```json … ```), ``tool_calls`` ([TOOL_CALLS] …) or ``tag``."""
    body = dump_json([{"name": n, "arguments": a} for n, a in calls])
    if wrap == "fence":
        return f"{FENCE}{FENCE_LANG}\n{body}\n{FENCE}"
    if wrap == "tool_calls":
        return TOOL_CALLS + body
    if wrap == "tag":
        return TAG_START + body + TAG_END
    return body


#: xLAM may fence its array as a json code block.
GRAMMAR = TextGrammar((FENCE + FENCE_LANG,), object_call(), joined(", ", "[", "]"))

# Tool results: `ToolFormat`'s default, the result as the tool message's content (the template lists
# it in the history; no id).
TOOL = ToolFormat(
    family="xlam",
    summary='a JSON array `[{"name": …, "arguments": …}]`, bare or in ```json / `[TOOL_CALLS]` / `<tool_call>`',
    markers=(),
    render=render,
    grammar=GRAMMAR,
)

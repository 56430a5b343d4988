"""Generic gateway JSON: ``{"name": …, "arguments": …}`` or an array of them, bare or in a ```json fence."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

FENCE, FENCE_LANG = "```", "json"


def render(calls: Any, *, array: bool | None = None, fence: bool = False, key: str = "arguments") -> str:
    """One object for one call (unless `array`), an array for several; `fence` wraps it in ```json."""
    objs = [{"name": n, key: a} for n, a in calls]
    body = dump_json(objs[0] if len(objs) == 1 and not array else objs)
    return f"{FENCE}{FENCE_LANG}\n{body}\n{FENCE}" if fence else body


# Tool results: `ToolFormat`'s default, the tool message's content as gateways pass it on: a string
# verbatim, anything else as JSON.
TOOL = ToolFormat(
    family="json",
    summary='a bare JSON call `{"name": …, "arguments"|"parameters": …}` or an array of them, optionally ```json-fenced',
    markers=(),
    render=render,
)

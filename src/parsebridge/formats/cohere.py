"""Cohere Command A (``<|START_ACTION|>[…]<|END_ACTION|>``) and Command R/R+ (``Action: ```json […]````).

Each call is ``{"tool_call_id": "0", "tool_name": …, "parameters": {…}}`` (Command R
omits the id). Command A wraps its answer in ``<|START_RESPONSE|>…<|END_RESPONSE|>``, Command 4
in ``<|START_TEXT|>…<|END_TEXT|>``.
"""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

START_ACTION, END_ACTION = "<|START_ACTION|>", "<|END_ACTION|>"
START_RESPONSE, END_RESPONSE = "<|START_RESPONSE|>", "<|END_RESPONSE|>"
#: Command 4's answer wrapper (Command A's is the response one): structure, never content.
START_TEXT, END_TEXT = "<|START_TEXT|>", "<|END_TEXT|>"
START_THINKING, END_THINKING = "<|START_THINKING|>", "<|END_THINKING|>"
START_RESULT, END_RESULT = "<|START_TOOL_RESULT|>", "<|END_TOOL_RESULT|>"
#: Command R/R+: a plain-text prefix and a fenced JSON array.
ACTION_PREFIX, FENCE, FENCE_LANG = "Action:", "```", "json"


def render(calls: Any, *, style: str = "a") -> str:
    """`style` ``a``: Command A's action block; ``r``: Command R's ``Action: ```json`` block."""
    if style == "r":
        items = ",\n".join("    " + dump_json({"tool_name": n, "parameters": a}) for n, a in calls)
        return f"{ACTION_PREFIX} {FENCE}{FENCE_LANG}\n[\n{items}\n]\n{FENCE}"
    items = ",\n".join(
        "    " + dump_json({"tool_call_id": str(i), "tool_name": n, "parameters": a})
        for i, (n, a) in enumerate(calls)
    )
    return f"{START_ACTION}[\n{items}\n]{END_ACTION}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """Command A's tool-result block: the call's id and its result as document ``"0"``."""
    doc = result if isinstance(result, (dict, list)) else {"result": result}
    return (
        START_RESULT
        + dump_json([{"tool_call_id": tool_call_id, "results": {"0": doc}, "is_error": None}])
        + END_RESULT
    )


TOOL = ToolFormat(
    family="cohere",
    summary='`<|START_ACTION|>[{"tool_name": …, "parameters": …}]<|END_ACTION|>` (Command A; Command R `Action: ```json`)',
    markers=(START_ACTION, END_ACTION, START_RESPONSE, END_RESPONSE, START_TEXT, END_TEXT),
    render=render,
    format_tool_result=format_tool_result,
    servers_content="marker",
)

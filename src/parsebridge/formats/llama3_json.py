"""Llama 3.1 / 3.2 JSON tool calls: optional ``<|python_tag|>``, objects with name and parameters."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, TextGrammar, ToolFormat, dump_json, joined, object_call

TAG = "<|python_tag|>"
#: End-of-message / end-of-turn tokens the model writes after a call (never content).
EOM, EOT = "<|eom_id|>", "<|eot_id|>"


def render_call(name: str, args: dict[str, Any], *, key: str = "parameters", ascii_only: bool = False) -> str:
    return dump_json({"name": name, key: args}, ascii_only)


def render(calls: Any, *, key: str = "parameters", tag: bool = False, sep: str = "; ") -> str:
    return (TAG if tag else "") + sep.join(render_call(n, a, key=key) for n, a in calls)


GRAMMAR = TextGrammar((TAG,), object_call("parameters"), joined("; "))

TOOL = ToolFormat(
    family="llama3_json",
    summary="optional `<|python_tag|>`, JSON objects with `name` and `parameters`/`arguments`, `;`-separated",
    markers=(TAG, EOM, EOT),
    render=render,
    grammar=GRAMMAR,
    content=AFTER,
)

"""Pythonic calls (Llama 3.2 / 4): ``[f(a=1), g(b="x")]``, optionally in ``<|python_start|>…<|python_end|>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json

PY_START, PY_END = "<|python_start|>", "<|python_end|>"


def literal(value: Any) -> str:
    """A Python literal for a JSON value (True/False/None, strings JSON-quoted)."""
    if value is True:
        return "True"
    if value is False:
        return "False"
    if value is None:
        return "None"
    if isinstance(value, str):
        return dump_json(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dump_json(k)}: {literal(x)}" for k, x in value.items()) + "}"
    return repr(value)


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{name}(" + ", ".join(f"{k}={literal(v)}" for k, v in args.items()) + ")"


def render(calls: Any, *, wrap: bool = False) -> str:
    text = "[" + ", ".join(render_call(n, a) for n, a in calls) + "]"
    return f"{PY_START}{text}{PY_END}" if wrap else text


TOOL = ToolFormat(
    family="pythonic",
    summary='`[f(a=1), g(b="x")]`, optionally in `<|python_start|>…<|python_end|>`',
    markers=(PY_START, PY_END),
    render=render,
)

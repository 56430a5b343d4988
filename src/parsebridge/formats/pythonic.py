"""Pythonic calls (Llama 3.2 / 4): ``[f(a=1), g(b="x")]``, optionally in ``<|python_start|>…<|python_end|>``."""

from __future__ import annotations

import json
from typing import Any

from ._base import AFTER, TextGrammar, ToolFormat, dump_json, joined

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


_PY_WORDS = {"true": "True", "false": "False", "null": "None"}


def py_kwargs(args: str) -> str | None:
    """A JSON object's text as Python keyword arguments, or None when it is not an object.

    Iterative, so arguments nested 10k deep (deeper than `json` reads) convert too.
    """
    try:
        value = json.loads(args)
    except RecursionError:  # deeper than json can read: only an object nested on purpose
        value = {}
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    text = args.strip()[1:-1]
    out: list[str] = []
    i, depth, n = 0, 0, len(text)
    expect_key = True
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            literal = text[i : j + 1]
            i = j + 1
            if depth == 0 and expect_key:
                k = i
                while text[k] in " \t\r\n":
                    k += 1
                k += 1  # past the colon
                while k < n and text[k] in " \t\r\n":
                    k += 1
                out.append(json.loads(literal) + "=")
                i = k
                expect_key = False
            else:
                out.append(literal)
            continue
        if c.isalpha():
            j = i
            while j < n and text[j].isalpha():
                j += 1
            out.append(_PY_WORDS.get(text[i:j], text[i:j]))
            i = j
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 0:
            expect_key = True
        out.append(c)
        i += 1
    return "".join(out).strip()


def _call_text(name: str, args: str, index: int) -> str:
    kwargs = py_kwargs(args)
    return f"{name}({args if kwargs is None else kwargs})"


GRAMMAR = TextGrammar((PY_START, PY_END), _call_text, joined(", ", "[", "]"))


TOOL = ToolFormat(
    family="pythonic",
    summary='`[f(a=1), g(b="x")]`, optionally in `<|python_start|>…<|python_end|>`',
    markers=(PY_START, PY_END),
    render=render,
    grammar=GRAMMAR,
    content=AFTER,
)

"""Kimi K3 "XTML": a ``tools`` channel of ``<|open|>call tool="NAME"<|sep|>`` elements, typed arguments.

::

    <|open|>response<|sep|>Let me run it.<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|>
    <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>

``<|open|>``, ``<|close|>`` and ``<|sep|>`` are special tokens. ``type="string"``
values are raw text; other types are JSON. Attribute values escape ``&`` and
``"`` as ``&amp;``/``&quot;``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._base import Call, ToolFormat, dump_json

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
TOOLS_OPEN, TOOLS_CLOSE = f"{OPEN}tools{SEP}", f"{CLOSE}tools{SEP}"
RESPONSE_OPEN, RESPONSE_CLOSE = f"{OPEN}response{SEP}", f"{CLOSE}response{SEP}"
MESSAGE_CLOSE = f"{CLOSE}message{SEP}"
CALL_OPEN, CALL_CLOSE = f"{OPEN}call", f"{CLOSE}call{SEP}"
ARG_OPEN, ARG_CLOSE = f"{OPEN}argument", f"{CLOSE}argument{SEP}"

_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def escape_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


def _type_of(value: Any) -> str:
    for cls, name in _TYPES:
        if isinstance(value, cls):
            return name
    return "null"


def render(calls: Sequence[Call], *, start: int = 1) -> str:
    parts = []
    for i, (name, args) in enumerate(calls):
        params = "".join(
            f'{ARG_OPEN} key="{escape_attr(k)}" type="{_type_of(v)}"{SEP}'
            f"{v if isinstance(v, str) else dump_json(v)}{ARG_CLOSE}"
            for k, v in args.items()
        )
        parts.append(f'{CALL_OPEN} tool="{escape_attr(name)}" index="{start + i}"{SEP}{params}{CALL_CLOSE}')
    return TOOLS_OPEN + "".join(parts) + TOOLS_CLOSE


TOOL = ToolFormat(
    family="kimi_k3",
    summary='XTML: `<|open|>tools<|sep|><|open|>call tool="NAME"<|sep|><|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>…`',
    markers=(
        TOOLS_OPEN,
        TOOLS_CLOSE,
        CALL_OPEN,
        CALL_CLOSE,
        ARG_OPEN,
        ARG_CLOSE,
        RESPONSE_OPEN,
        RESPONSE_CLOSE,
    ),
    render=render,
    notes="format_tool_result: the result text (no K3 tool-message wrapper verified).",
    servers_content="marker",
)

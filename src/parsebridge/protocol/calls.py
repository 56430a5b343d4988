"""A tool call's two values that come from text: a fresh id, and arguments parsed from JSON text."""

from __future__ import annotations

import json
from collections.abc import Callable
from os import register_at_fork as _register_at_fork
from os import urandom as _urandom
from typing import Any

#: Ids drawn ahead: one read of the OS's random source per `_ID_BATCH` ids, not one per id (a
#: system call costs more than the rest of announcing a call). A forked child starts empty,
#: so parent and child never hand out the same ids.
_ID_POOL: list[str] = []
_ID_BATCH = 256
_register_at_fork(after_in_child=_ID_POOL.clear)


def new_call_id() -> str:
    """A fresh OpenAI-style tool-call id (`call_` + 24 hex chars).

    96 random bits from the OS, as `uuid4` draws them, without building a UUID
    (builtin streams mint one per call).
    """
    try:
        return _ID_POOL.pop()
    except IndexError:
        hexed = _urandom(12 * _ID_BATCH).hex()
        _ID_POOL.extend(["call_" + hexed[i : i + 24] for i in range(0, 24 * _ID_BATCH, 24)])
        return _ID_POOL.pop()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: The C scanner behind `json.loads`, called directly: arguments are parsed once per call on
#: every one-shot path, and `loads` adds two Python frames and a whitespace regex around it.
#: Strict: ``NaN``, ``Infinity`` and ``-Infinity`` are no JSON (Python's decoder takes them, and
#: its encoder writes them back, so arguments holding one would go out as text no JSON parser
#: of a client reads).
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_constant=_no_constant
).scan_once


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Arguments text → (dict, None), or ({}, verbatim text) when it is not a JSON object.

    Keeping the verbatim text instead of dropping the call is the documented
    fallback: a client may still want to see what the model tried to say.
    """
    stripped = text.strip()
    if not stripped:
        return {}, None
    if stripped[0] != "{":  # only an object can be arguments
        return {}, text
    try:
        value, end = _scan_json(stripped, 0)
    except (StopIteration, ValueError, RecursionError):
        return {}, text
    if end != len(stripped) or not isinstance(value, dict):
        return {}, text
    return value, None

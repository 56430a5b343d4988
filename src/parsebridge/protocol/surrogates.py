"""JSON text for results that hold a lone surrogate, which pydantic's JSON writer refuses.

A lone surrogate (U+D800-U+DFFF without its other half) is legal in a Python `str` and in
JSON (the escape ``\\ud800``), but not in UTF-8. A parser keeps one as it keeps every other
character of the model's output: in text given with one, or decoded from a JSON escape the
model wrote inside a call (``{"a": "\\ud800"}``, all ASCII). pydantic's `model_dump_json`
then raises; parsebridge's models write it as the escape instead, so a result always
serialises and ``json.loads`` gives the same string back. Only that failure pays for this:
everything else goes through pydantic as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

#: One half of a UTF-16 pair, alone: what UTF-8 cannot encode.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_lone_surrogates(text: str) -> str:
    """`text` (JSON text) with each lone surrogate written as its JSON escape (``\\ud800``): the
    same JSON value, now encodable as UTF-8. In JSON a surrogate can only stand inside a string,
    where the escape means it. ASCII text (nearly all) is returned as is."""
    if text.isascii():
        return text
    return LONE_SURROGATE.sub(_escape, text)


def _is_surrogate_failure(exc: Exception) -> bool:
    return "surrogates not allowed" in str(exc)


def dumped_json(write: Callable[[], str], dump: Callable[..., Any], kwargs: dict[str, Any]) -> str:
    """``write()`` (pydantic's JSON of a model); where that fails on a lone surrogate, the same JSON
    written from ``dump(mode="json", **kwargs)`` by `json`, the surrogate as its escape.

    `kwargs` are `model_dump_json`'s: ``indent`` and ``ensure_ascii`` shape the text, the rest
    choose what is dumped, as `model_dump` takes them. Compact output uses pydantic's separators.
    """
    try:
        return write()
    except ValueError as exc:  # pydantic_core.PydanticSerializationError is a ValueError
        if not _is_surrogate_failure(exc):
            raise
    options = dict(kwargs)
    indent = options.pop("indent", None)
    ensure_ascii = bool(options.pop("ensure_ascii", False))
    data = dump(mode="json", **options)
    separators = (",", ":") if indent is None else None
    text = json.dumps(data, ensure_ascii=ensure_ascii, indent=indent, separators=separators)
    return escape_lone_surrogates(text)

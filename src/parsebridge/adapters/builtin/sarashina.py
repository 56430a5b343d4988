"""Sarashina tool calls: ``<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]``.

After ``<|tool_calls|>`` comes a Python literal (``ast.literal_eval``): a list of
dicts with a string ``name`` and a dict ``arguments`` (or ``parameters``), or
one such dict. Text before the marker is content, streamed as it comes; the
literal is read at the end of output (the calls arrive then). Neither vLLM
0.33 nor SGLang 0.5.23 ships a parser for it.

Malformed output (nothing is lost): a literal that does not parse, or an item
that is not such a dict, leaves the marker and everything after it in the
content verbatim; text after the literal is content (the literal's end is
looked for at the last `MAX_TRIES` closing brackets).

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from typing import Any, ClassVar

from ...formats._base import result_text
from ...formats.sarashina import TAG
from ...protocol import StreamDelta, ToolCall, ToolParserBase, ToolParseResult, ToolStreamBase
from ...protocol.models import make_delta, make_tool_call, make_tool_result
from ...protocol.streams import result_as_delta
from .reasoning import held_prefix

_ARG_KEYS = ("arguments", "parameters")


def _literal_prefix(text: str) -> tuple[Any, str] | None:
    """The Python literal opening `text` (after whitespace) and the text after it, or None."""
    body = text.lstrip()
    for end in _closers(body):
        try:
            return ast.literal_eval(body[:end]), body[end:]
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


#: Candidate ends tried per output (each a `literal_eval`): bounds the work on text after a list.
MAX_TRIES = 32


def _closers(body: str) -> list[int]:
    """Candidate ends of the opening literal: after each ``]`` or ``}``, last first (at most `MAX_TRIES`)."""
    if not body or body[0] not in "[{":
        return []
    ends: list[int] = []
    i = len(body)
    while len(ends) < MAX_TRIES:
        i = max(body.rfind("]", 0, i), body.rfind("}", 0, i))
        if i < 0:
            break
        ends.append(i + 1)
    return ends


def _calls(value: Any) -> list[ToolCall] | None:
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        args = next((item[k] for k in _ARG_KEYS if k in item), {})
        if not isinstance(args, dict):
            return None
        try:
            text = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return None
        calls.append(make_tool_call(item["name"], text))
    return calls or None


def read_calls(after: str) -> tuple[list[ToolCall], str] | None:
    """The calls after the marker and the text after them, or None when it is not a call list."""
    found = _literal_prefix(after)
    if found is None:
        return None
    calls = _calls(found[0])
    return (calls, found[1]) if calls is not None else None


class SarashinaToolStream(ToolStreamBase):
    """Content up to the marker as it comes; the literal after it at the end of output."""

    def __init__(self, parser: SarashinaToolParser) -> None:
        super().__init__()
        self._held = ""
        self._after: list[str] | None = None

    def pending_text(self) -> str:
        return self._held + "".join(self._after or ())

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if self._after is not None:
            self._after.append(text)
            return make_delta()
        held = self._held + text
        at = held.find(TAG)
        if at != -1:
            self._held, self._after = "", [held[at + len(TAG) :]]
            return make_delta(held[:at])
        keep = held_prefix(held, TAG)
        self._held = held[len(held) - keep :] if keep else ""
        return make_delta(held[: len(held) - keep])

    def _flush(self) -> StreamDelta:
        if self._after is None:
            out, self._held = self._held, ""
            return make_delta(out)
        after = "".join(self._after)
        read = read_calls(after)
        if read is None:
            return make_delta(TAG + after)
        calls, rest = read
        return result_as_delta(make_tool_result(rest or None, calls))


class SarashinaToolParser(ToolParserBase):
    """Sarashina ``<|tool_calls|>`` Python-literal call lists (builtin)."""

    backend = "builtin"
    name = "sarashina"
    markers: ClassVar[tuple[str, ...]] = (TAG,)

    def parse(self, text: str) -> ToolParseResult:
        s = self.stream()
        s.feed(text)
        return s.finish()

    def stream(self) -> SarashinaToolStream:
        return SarashinaToolStream(self)

    def has_tool_calls(self, text: str) -> bool:
        return TAG in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        return result_text(result)

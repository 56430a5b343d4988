"""Sarashina tool calls: ``<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]``.

After ``<|tool_calls|>`` comes a Python literal (``ast.literal_eval``): a list of
dicts with a string ``name`` and a dict ``arguments`` (or ``parameters``), or
one such dict. Text before the marker is content, streamed as it comes; the
literal is read at the end of output (the calls arrive then). Neither vLLM
0.33 nor SGLang 0.5.23 ships a parser for it.

Malformed output (nothing is lost): a literal that does not parse, or an item
that is not such a dict, leaves the marker and everything after it in the
content verbatim; text after the literal is content under ``conventions="lossless"``,
left out of it (on the result's `dropped`) under "servers" (the literal's end is
looked for at the last `MAX_TRIES` closing brackets).

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ...formats._base import result_text
from ...formats.sarashina import TAG
from ...protocol import StreamDelta, ToolCall, ToolParserBase, ToolParseResult, ToolSpec, ToolStreamBase
from ...protocol.models import make_delta, make_tool_call, make_tool_result, set_raw_text
from ...protocol.streams import result_as_delta
from .engines.conventions import SERVERS, check_conventions, servers_content
from .engines.think_tags import held_prefix

_ARG_KEYS = ("arguments", "parameters")
#: Where a line ends for Python's parser (the line numbers `ast` gives count these only).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _literal_prefix(text: str) -> tuple[Any, str, list[tuple[int, int]]] | None:
    """The Python literal opening `text` (after whitespace), the text after it and each item's
    span in `text` (a list's elements, or the one dict), or None."""
    lead = len(text) - len(text.lstrip())
    body = text[lead:]
    for end in _closers(body):
        try:
            tree = ast.parse(body[:end], mode="eval")
            value = ast.literal_eval(tree)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        items = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
        return value, body[end:], _spans(body[:end], items, lead)
    return None


def _spans(source: str, nodes: list[ast.expr], shift: int) -> list[tuple[int, int]]:
    """Each node's character span in `source` plus `shift` (ast gives lines and UTF-8 byte columns)."""
    # Python's own line ends only (`str.splitlines` also splits at U+2028 and others in strings).
    starts = [0, *(m.end() for m in _LINE_END.finditer(source)), len(source)]

    def at(line: int, col: int) -> int:
        row = source[starts[line - 1] : starts[line]]
        return shift + starts[line - 1] + len(row.encode()[:col].decode(errors="ignore"))

    return [(at(n.lineno, n.col_offset), at(n.end_lineno or n.lineno, n.end_col_offset or 0)) for n in nodes]


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


def _calls(value: Any, raw: list[str]) -> list[ToolCall] | None:
    items = value if isinstance(value, list) else [value]
    calls = []
    for item, raw_text in zip(items, raw, strict=True):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        args = next((item[k] for k in _ARG_KEYS if k in item), {})
        if not isinstance(args, dict):
            return None
        try:
            text = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return None
        calls.append(make_tool_call(item["name"], text, raw_text=raw_text))
    return calls or None


def read_calls(after: str) -> tuple[list[ToolCall], str, list[tuple[int, int]]] | None:
    """The calls after the marker, the text after them and each call's span in `after`, or None
    when it is not a call list."""
    found = _literal_prefix(after)
    if found is None:
        return None
    value, rest, spans = found
    calls = _calls(value, [after[a:b] for a, b in spans])
    return (calls, rest, spans) if calls is not None else None


class SarashinaToolStream(ToolStreamBase):
    """Content up to the marker as it comes; the literal after it at the end of output."""

    def __init__(self, parser: SarashinaToolParser) -> None:
        super().__init__()
        self._cut = parser.cuts_content
        self._held = ""
        self._after: list[str] | None = None
        self._fed = 0  # characters fed so far
        self._after_at = 0  # offset of the text after the marker, once it is seen
        #: Each call's (start, end) in the text fed (see `open_from`), and its raw text.
        self.call_spans: list[tuple[int, int]] = []
        self.raw_texts: list[str] = []

    def pending_text(self) -> str:
        return self._held + "".join(self._after or ())

    def open_from(self) -> int:
        """No call found later starts before this offset: the marker's end once seen, else the
        text still held back."""
        return self._after_at if self._after is not None else self._fed - len(self._held)

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._fed += len(text)
        if self._after is not None:
            self._after.append(text)
            return make_delta()
        held = self._held + text
        at = held.find(TAG)
        if at != -1:
            self._held, self._after = "", [held[at + len(TAG) :]]
            self._after_at = self._fed - len(self._after[0])
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
        calls, rest, spans = read
        self.call_spans += [(self._after_at + a, self._after_at + b) for a, b in spans]
        self.raw_texts += [after[a:b] for a, b in spans]
        if self._cut and rest:  # conventions="servers": text after the calls is left out
            self._acc.dropped_parts.append(rest)
            rest = ""
        return result_as_delta(make_tool_result(rest or None, calls))

    def finish(self) -> ToolParseResult:
        """The assembled result, each call with its raw text (as `parse` gives it)."""
        result = super().finish()
        for call, raw in zip(result.tool_calls, self.raw_texts, strict=False):
            set_raw_text(call, raw)  # fresh calls built by the accumulator
        return result


class SarashinaToolParser(ToolParserBase):
    """Sarashina ``<|tool_calls|>`` Python-literal call lists (builtin)."""

    backend = "builtin"
    name = "sarashina"
    markers: ClassVar[tuple[str, ...]] = (TAG,)

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.conventions = check_conventions(options.get("conventions"))
        #: "servers": text after the call list is left out of the content (on `dropped`).
        self.cuts_content = self.conventions == SERVERS and servers_content(self.name) != "keep"

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

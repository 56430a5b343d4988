"""Sarashina tool calls: ``<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]``.

After ``<|tool_calls|>`` comes a Python literal (``ast.literal_eval``): a list of
dicts with a string ``name`` and a dict ``arguments`` (or ``parameters``), or
one such dict. Text before the marker is content, streamed as it comes. The
literal is held until its opening bracket is closed (`_LiteralEnd` follows
Python's strings and comments to find where: a literal can end nowhere else)
and read then: its calls arrive at once. Only the first literal is read; the
text after it is streamed as it comes, as content under ``conventions="lossless"``,
left out of it (on the result's `dropped`) under "servers". So a stream holds
at most the marker's length before it, and the literal itself after it: one
whose bracket never closes is held to the end of output (`max_held` caps that
under the failure policy: the held text is then released as content). Neither
vLLM 0.33 nor SGLang 0.5.23 ships a parser for it.

The marker is one special token, which a server that skips special tokens strips: a list that
opens the output (after whitespace) is read as if the marker stood before it. Until the first
character that is not whitespace, the stream holds the whitespace (at most that).

Malformed output (nothing is lost): a literal that does not parse (or never
closes), text after the marker that does not open one, or an item that is not
such a dict, leaves the marker and everything after it in the content verbatim.

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ...formats._base import result_text
from ...formats.sarashina import BARE_OPEN, TAG
from ...protocol import StreamDelta, ToolCall, ToolParserBase, ToolParseResult, ToolSpec, ToolStreamBase
from ...protocol.models import make_delta, make_tool_call, make_tool_result, set_raw_text
from ...protocol.streams import result_as_delta
from .engines.conventions import SERVERS, check_conventions, servers_content
from .engines.python_source import parse_expression
from .engines.think_tags import held_prefix

_ARG_KEYS = ("arguments", "parameters")
#: Where a line ends for Python's parser (the line numbers `ast` gives count these only).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _literal(text: str, end: int) -> tuple[Any, list[tuple[int, int]]] | None:
    """The Python literal `text[:end]` (after whitespace) and each item's span in `text` (a list's
    elements, or the one dict), or None when it is not one."""
    lead = len(text[:end]) - len(text[:end].lstrip())
    body = text[lead:end]
    try:
        tree = parse_expression(body)
        value = ast.literal_eval(tree)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    items = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
    return value, _spans(body, items, lead)


def _spans(source: str, nodes: list[ast.expr], shift: int) -> list[tuple[int, int]]:
    """Each node's character span in `source` plus `shift` (ast gives lines and UTF-8 byte columns)."""
    # Python's own line ends only (`str.splitlines` also splits at U+2028 and others in strings).
    starts = [0, *(m.end() for m in _LINE_END.finditer(source)), len(source)]

    def at(line: int, col: int) -> int:
        row = source[starts[line - 1] : starts[line]]
        return shift + starts[line - 1] + len(row.encode()[:col].decode(errors="ignore"))

    return [(at(n.lineno, n.col_offset), at(n.end_lineno or n.lineno, n.end_col_offset or 0)) for n in nodes]


#: Outside a string: what opens or closes a bracket, a string or a comment.
_CODE = re.compile(r"""[\[\](){}'"#]""")
#: Inside a string: a backslash (it escapes the next character, raw strings too) or its quote.
_IN_STRING = {"'": re.compile(r"[\\']"), '"': re.compile(r'[\\"]')}
_LINE_OR_END = re.compile(r"[\r\n]")


class _LiteralEnd:
    """Where a Python literal that opens with a bracket ends, found piece by piece.

    Brackets are counted outside strings and comments, as Python's tokenizer reads them; a valid
    literal ends where its first bracket closes, and a prefix ending anywhere else is not one.
    `scan` is given the text from where it last stopped (`resume`) on: it stops before a quote or
    backslash whose meaning the next piece decides.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""  # the open string's quote (one or three characters), "" outside one
        self.comment = False

    def scan(self, s: str) -> tuple[int, int]:
        """(The literal's end in `s`, or -1; where the next scan starts in `s`)."""
        i, n = 0, len(s)
        while i < n:
            if self.comment:
                m = _LINE_OR_END.search(s, i)
                if m is None:
                    return -1, n
                self.comment, i = False, m.end()
            elif self.quote:
                q = self.quote
                m = _IN_STRING[q[0]].search(s, i)
                if m is None:
                    return -1, n
                j = m.start()
                if s[j] == "\\":
                    if j + 1 == n:
                        return -1, j
                    i = j + 2
                elif len(q) == 1 or s.startswith(q, j):
                    self.quote, i = "", j + len(q)
                elif n - j < 3 and s[j:] == q[0] * (n - j):
                    return -1, j  # maybe the closing triple quote, cut by the piece's end
                else:
                    i = j + 1
            else:
                m = _CODE.search(s, i)
                if m is None:
                    return -1, n
                j, c = m.start(), m.group()
                i = j + 1
                if c in "[({":
                    self.depth += 1
                elif c in "])}":
                    self.depth -= 1
                    if self.depth <= 0:
                        return i, i
                elif c == "#":
                    self.comment = True
                elif n - j < 3 and s[j:] == c * (n - j):
                    return -1, j  # one quote, an empty string or a triple quote: the next piece says
                else:
                    self.quote = c * 3 if s.startswith(c * 3, j) else c
                    i = j + len(self.quote)
        return -1, n


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


def read_calls(after: str, end: int) -> tuple[list[ToolCall], list[tuple[int, int]]] | None:
    """The calls in `after[:end]` (the text after the marker up to where its literal ends) and each
    call's span in `after`, or None when it is not a call list."""
    found = _literal(after, end)
    if found is None:
        return None
    value, spans = found
    calls = _calls(value, [after[a:b] for a, b in spans])
    return (calls, spans) if calls is not None else None


def _hold(pieces: list[str], text: str) -> None:
    """Append `text`, joining the last pieces while the one before is no longer than the last: the
    list stays short (a few dozen pieces at any size) and each character is copied a few dozen
    times at most, where one small string per chunk would cost ~15 times the text held."""
    pieces.append(text)
    while len(pieces) > 1 and len(pieces[-2]) <= len(pieces[-1]):
        last = pieces.pop()
        pieces[-1] += last


#: Where the stream is: before the marker, after it (the literal not yet opened, then open),
#: and past the literal (read as calls, or not: the rest is then content whatever the conventions).
_BEFORE, _LEAD, _LITERAL, _CALLS_READ, _VERBATIM = range(5)


class SarashinaToolStream(ToolStreamBase):
    """Content up to the marker as it comes; the literal after it once its bracket closes; the
    rest as it comes. Held: a prefix of the marker, or the literal (and the whitespace before it)."""

    def __init__(self, parser: SarashinaToolParser) -> None:
        super().__init__()
        self._cut = parser.cuts_content
        self._state = _BEFORE
        self._held = ""  # before the marker: a prefix of it, or the whitespace that opened the output
        self._opening = True  # nothing but whitespace fed yet: a bare list may still open the output
        self._tag = TAG  # the marker the literal came after ("" for a bare list)
        self._after: list[str] = []  # after the marker: the text up to where the literal ends
        self._unscanned = ""  # the literal's text `_scan` has not read yet (a quote or backslash)
        self._scan = _LiteralEnd()
        self._fed = 0  # characters fed so far
        self._after_at = 0  # offset of the text after the marker, once it is seen
        #: Each call's (start, end) in the text fed (see `open_from`), and its raw text.
        self.call_spans: list[tuple[int, int]] = []
        self.raw_texts: list[str] = []

    def pending_text(self) -> str:
        if self._state == _BEFORE:
            return self._held
        return self._tag + "".join(self._after) if self._state in (_LEAD, _LITERAL) else ""

    def release_calls(self) -> int:
        """Forget the calls read so far (their spans and raw text) and return how many: for a
        consumer that cut their raw text out of what it fed (as the other builtin streams' method
        of that name). Only a stream made `without_history()` forgets: one with history needs
        them for `finish()`, keeps them and returns 0."""
        if self._acc.keeps_history:
            return 0
        count = len(self.call_spans)
        self.call_spans.clear()
        self.raw_texts.clear()
        return count

    def open_from(self) -> int:
        """No call found later starts before this offset: the marker's end while its literal is
        held, else the text still held back (none once the literal was read)."""
        if self._state in (_LEAD, _LITERAL):
            return self._after_at
        return self._fed - len(self._held)

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._fed += len(text)
        state = self._state
        if state in (_CALLS_READ, _VERBATIM):
            return self._rest(text)
        if state != _BEFORE:
            return self._literal(text)
        held = self._held + text
        if self._opening:
            rest = held.lstrip()
            if not rest:
                self._held = held
                return make_delta()
            self._opening = False
            if rest.startswith(BARE_OPEN):
                return self._bare(held)
        at = held.find(TAG)
        if at != -1:
            self._held, self._state = "", _LEAD
            self._after_at = self._fed - (len(held) - at - len(TAG))
            return make_delta(held[:at]).merged(self._literal(held[at + len(TAG) :]))
        keep = held_prefix(held, TAG)
        self._held = held[len(held) - keep :] if keep else ""
        return make_delta(held[: len(held) - keep])

    def _bare(self, held: str) -> StreamDelta:
        """The output opens with a list (the marker stripped): read it as after the marker."""
        self._held, self._state, self._tag = "", _LEAD, ""
        self._after_at = self._fed - len(held)
        return self._literal(held)

    def _rest(self, text: str) -> StreamDelta:
        """Text past the literal: content, or left out after calls under "servers"."""
        if self._cut and self._state == _CALLS_READ:
            if text:
                self._acc.dropped_parts.append(text)
            return make_delta()
        return make_delta(text)

    def _literal(self, text: str) -> StreamDelta:
        """Text after the marker, held until the literal it opens ends (then read) or does not open."""
        if self._state == _LEAD:
            lead = len(text) - len(text.lstrip())
            if lead == len(text):
                _hold(self._after, text)
                return make_delta()
            self._state = _LITERAL
            if text[lead] not in "[{":
                return self._not_calls(text)
        _hold(self._after, text)
        end, resume = self._scan.scan(self._unscanned + text)
        if end < 0:
            self._unscanned = (self._unscanned + text)[resume:]
            return make_delta()
        after = "".join(self._after)
        end = len(after) - (len(self._unscanned) + len(text) - end)  # the literal's end in `after`
        self._unscanned = ""
        return self._read(after[:end]).merged(self._rest(after[end:]))

    def _read(self, after: str) -> StreamDelta:
        """The literal (with the whitespace before it), read: its calls, or the marker and it as content."""
        self._after = []
        read = read_calls(after, len(after))
        if read is None:
            return self._not_calls(after)
        calls, spans = read
        self._state = _CALLS_READ
        self.call_spans += [(self._after_at + a, self._after_at + b) for a, b in spans]
        self.raw_texts += [after[a:b] for a, b in spans]
        return result_as_delta(make_tool_result(None, calls))

    def _not_calls(self, text: str) -> StreamDelta:
        """No call list after the marker: it, what was held and `text` are content."""
        held = "".join(self._after)
        self._after, self._unscanned, self._state = [], "", _VERBATIM
        return make_delta(self._tag + held + text)

    def _flush(self) -> StreamDelta:
        if self._state == _BEFORE:
            out, self._held = self._held, ""
            return make_delta(out)
        if self._state in (_LEAD, _LITERAL):  # the literal never ended
            after = "".join(self._after)
            self._after, self._unscanned, self._state = [], "", _VERBATIM
            return make_delta(self._tag + after)
        return make_delta()

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
        if TAG in text:
            return True
        return text.lstrip().startswith(BARE_OPEN) and bool(self.parse(text).tool_calls)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        return result_text(result)

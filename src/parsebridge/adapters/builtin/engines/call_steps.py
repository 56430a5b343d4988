"""The steps a format's `_step` takes on a call: a span opens, is named (or rejected), takes
argument fragments and ends; each ended call's raw text, cut from the fed text kept; plus
the two cursor helpers every format uses.

A mixin of `BuiltinToolStream` (`scan`), kept apart so the driver's module holds the
driver: the state these steps read and write is declared in its ``__slots__``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ....protocol.calls import new_call_id
from ....protocol.models import make_call_delta
from .markers import JSON_WS, MORE, find_markers, find_or_safe, match_marker

#: Chunks kept for the calls' raw text before the kept text is trimmed (`_keep_raw`).
RAW_TRIM_EVERY = 256


#: What a call name may hold: no whitespace, quotes, brackets or braces.
_NAME_OK = re.compile(r"[^\s<>{}\[\]\"'`]+\Z")


def clean_name(text: str) -> str | None:
    """A tag's name text → the name (whitespace and one pair of quotes removed), None if not a name."""
    name = text.strip(JSON_WS)
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'":
        name = name[1:-1].strip(JSON_WS)
    return name if _NAME_OK.match(name) else None


def stripped_name(text: str) -> str | None:
    """A tag's name text → the name with whitespace stripped, None if empty (Qwen3-Coder's rule)."""
    return text.strip(JSON_WS) or None


class CallSteps:
    """Call bookkeeping over the driver's buffer (see `BuiltinToolStream`)."""

    __slots__ = ()
    _buf: str
    _pos: int
    _base: int
    _final: bool
    _span: int | None
    _span_abs: int
    _span_parts: list[str]
    _servers: bool
    _markup: tuple[str, ...]
    _doubled: str
    _held_markup: list[str]
    _pending_ws: list[str]
    _acc: Any
    _index: int
    _in_call: bool
    _args_held: list[str]
    _call_start: int
    _arg_parts: list[str]
    _out_calls: list[Any]
    call_spans: list[tuple[int, int]]
    raw_texts: list[str]
    _raw_kept: list[str]
    _raw_at: int
    # and the driver's `_content`, `_structure` and `_start_dropping`

    def _begin_span(self, pos: int) -> None:
        """A possible call starts at `pos`; keep its raw text until the name is known."""
        if self._span is None:
            self._span = pos
            self._span_parts = []
            self._span_abs = self._base + pos

    def _drop_span(self) -> None:
        """The undecided text turned out to be call structure (separators): drop it."""
        self._span = None
        self._span_parts = []

    def _reject(self, pos: int) -> None:
        """The undecided span up to `pos` is not a call: it is content, verbatim (under
        conventions="servers", but for the markup both servers leave out: `_unnamed`)."""
        if self._span is None:
            return
        text = "".join(self._span_parts) + self._buf[self._span : pos]
        self._drop_span()
        if self._markup or self._doubled:
            self._unnamed(text, pos)
        else:
            self._content(text)

    def _close_at(self, marker: str, own_end: str | None) -> None:
        """At `marker`, which ends the current call or span (cursor on it; consumed when it is
        `own_end`, the format's closing marker): a named call ends, an undecided span is content."""
        if marker == own_end:
            self._pos += len(marker)
        if self._in_call:
            self._end_call(self._pos)
        else:
            self._reject(self._pos)

    def _unnamed(self, text: str, pos: int) -> None:
        """conventions="servers": the rejected span `text` (the buffer goes on at `pos`) is
        content, but for the markup both servers leave out (the format's `servers_markup`),
        which goes to `dropped`. "doubled": the start marker alone, directly followed by
        another, waits for what the next span turns out to be (a call: dropped by `_commit`;
        else content, in front of that span's text). "markers": every marker of the format
        in it is dropped; the text around them stays content."""
        start = self._doubled
        if start and text == start and self._buf.startswith(start, pos):
            self._held_markup.append(text)
            return
        if self._held_markup:
            text = "".join(self._held_markup) + text
            self._held_markup = []
        markers = self._markup
        i = 0
        if markers:
            dropped = self._acc.dropped_parts
            j, which = find_markers(text, 0, markers)
            while which is not None:
                self._content(text[i:j])
                dropped.append(which)
                i = j + len(which)
                j, which = find_markers(text, i, markers)
        self._content(text[i:])

    def _commit(self, name: str, call_start: int | None = None, call_id: str | None = None) -> None:
        """The span is a call named `name`: announce it (index, id, name); `call_id` is the id the
        model wrote for it (Kimi K2's ``functions.NAME:IDX``), else a fresh one."""
        start = self._span_abs if call_start is None else self._base + call_start
        self._drop_span()
        if self._held_markup:  # a doubled start marker right before the call (see `_unnamed`)
            self._acc.dropped_parts.extend(self._held_markup)
            self._held_markup = []
        self._structure()
        if self._servers:
            self._start_dropping()
        self._index += 1
        self._in_call = True
        self._args_held = []
        self._call_start = start
        self._seal()
        self._out_calls.append(make_call_delta(self._index, call_id or new_call_id(), name, ""))

    def _args(self, text: str, hold_ws: bool = True) -> None:
        """An argument fragment of the current call; a trailing whitespace run waits (dropped at end)."""
        if not text:
            return
        if hold_ws:
            body = text.rstrip(JSON_WS)
            if not body:
                self._args_held.append(text)
                return
            held, self._args_held = self._args_held, [text[len(body) :]] if len(body) < len(text) else []
            text = body
        else:
            held, self._args_held = self._args_held, []
        if not (self._out_calls and self._out_calls[-1].index == self._index):
            self._seal()
            self._out_calls.append(make_call_delta(self._index, None, None, ""))
        self._arg_parts.extend(held)
        self._arg_parts.append(text)

    def _seal(self) -> None:
        """Join the pending argument fragments into the last delta (one join per chunk: linear)."""
        if self._arg_parts:
            # The delta is ours and not yet handed out: joined straight into its field.
            self._out_calls[-1].arguments += "".join(self._arg_parts)
            self._arg_parts = []

    def _restate(self, name: str | None, arguments: str | None) -> None:
        """The open call's object wrote its name or arguments key again (`call_objects`): the last
        counts, as ``json.loads`` keeps it. The call is held until it ends (`whole_calls`), so its
        deltas are all here: the first takes `name`, and `arguments` replace the ones streamed."""
        self._seal()
        self._args_held = []
        index = self._index
        calls = self._out_calls
        first = next((d for d in calls if d.index == index), None)
        if first is None or first.name is None:  # (not held: nothing to restate)
            return
        if name is not None:
            first.name = name
        if arguments is not None:
            first.arguments = arguments
            calls[:] = [d for d in calls if d.index != index or d is first]

    def _end_call(self, pos: int) -> None:
        """The current call's span ends at `pos` (exclusive)."""
        if not self._in_call:
            return
        self._in_call = False
        self._args_held = []
        self.call_spans.append((self._call_start, self._base + pos))
        self._structure()

    def pending_text(self) -> str:
        """Raw text seen but not yet shown (held whitespace, an undecided call, a marker prefix)."""
        held = "".join(self._pending_ws) + "".join(self._held_markup)
        if self._span is None:
            return held + self._buf[self._pos :]
        return held + "".join(self._span_parts) + self._buf[self._span :]

    def pending_size(self) -> int:
        """`len(self.pending_text())`, counted without joining the text: the guard asks after every
        chunk when `max_held` is set, and a held call's text grows with each (tested equal)."""
        held = sum(map(len, self._pending_ws)) + sum(map(len, self._held_markup))
        if self._span is None:
            return held + max(len(self._buf) - self._pos, 0)
        return held + sum(map(len, self._span_parts)) + max(len(self._buf) - self._span, 0)

    # -- each call's raw text ------------------------------------------------------------------
    def _keep_raw(self, text: str = "") -> None:
        """Cut the raw text of each call ended since the last time out of the kept fed text, then
        drop what no call found later can span (before `open_from()`); `text` is fed text to keep.
        A stream calls it once `RAW_TRIM_EVERY` chunks are kept, but not on its per-chunk
        arguments paths: inside a call `open_from()` is at most the call's start, so nothing
        could be dropped there, and the check would cost every argument chunk."""
        if not self._acc.keeps_history:
            return
        kept = "".join(self._raw_kept) + text
        at = self._raw_at
        texts, spans = self.raw_texts, self.call_spans
        for start, end in spans[len(texts) :]:
            texts.append(kept[start - at : end - at])
        keep = min(self.open_from(), at + len(kept))
        if keep > at:
            kept = kept[keep - at :]
            self._raw_at = keep
        self._raw_kept = [kept] if kept else []

    def release_calls(self) -> int:
        """Forget the spans of the calls ended so far and return how many were forgotten (`call_spans`
        is emptied in place and fills again from the next call on): for a consumer that has cut each
        call's raw text out of the text it fed (with `open_from`) and needs the spans no more, so that
        what the stream keeps does not grow with the number of calls (the CLI's `parse --stream`).

        Only a stream made `without_history()` forgets them: one with history needs them for
        `finish()`'s raw text, keeps them and returns 0. Nothing else changes: not the deltas, not
        `open_from()`, not `finish()`."""
        if self._acc.keeps_history:
            return 0
        spans = self.call_spans
        count = len(spans)
        spans.clear()
        return count

    def open_from(self) -> int:
        """The offset (in the text fed so far) before which no call found later can start: the
        open call's or the undecided span's start, else the start of the buffer. With `call_spans`,
        it lets a consumer that keeps the fed text from there on cut out each call's raw text
        (the CLI's `parse --stream`; `parse` slices its whole input)."""
        start = self._base
        if self._span is not None:
            start = min(start, self._span_abs)
        if self._in_call:
            start = min(start, self._call_start)
        return start

    # -- small cursor helpers ------------------------------------------------------------------
    def _take_run(self, run: re.Pattern[str], into: list[str]) -> bool:
        """Move past the run of `run` at the cursor, adding it to `into` (a name read across chunks);
        True when text follows it in the buffer."""
        m = run.match(self._buf, self._pos)
        if m:
            into.append(m.group())
            self._pos = m.end()
        return self._pos < len(self._buf)

    def _skip_ws(self) -> bool:
        """Skip JSON whitespace; True when a non-whitespace character is available."""
        buf, i, n = self._buf, self._pos, len(self._buf)
        while i < n and buf[i] in JSON_WS:
            i += 1
        self._pos = i
        return i < n

    def _marker_past_ws(self, markers: Sequence[str]) -> str | None:
        """Past JSON whitespace, the marker at the cursor (None: another character there), or
        `MORE` when more text is needed: none follows the whitespace yet, or it may become one."""
        if not self._skip_ws():
            return MORE
        return match_marker(self._buf, self._pos, markers, self._final)

    def _ws_as_content(self) -> bool:
        """Whitespace at the cursor is content (held by the content policy); True when a
        non-whitespace character follows it."""
        start = self._pos
        more = self._skip_ws()
        self._content(self._buf[start : self._pos])
        return more

    def _outside(self, starts: tuple[str, ...]) -> str | None:
        """Content up to the first start marker: emits text before it, returns the marker (not consumed).

        Returns None when the buffer is exhausted (text that could begin a marker stays).
        """
        stop, which = find_or_safe(self._buf, self._pos, starts, self._final)
        self._content(self._buf[self._pos : stop])
        self._pos = stop
        return which

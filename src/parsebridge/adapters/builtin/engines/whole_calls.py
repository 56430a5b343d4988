"""conventions="servers" for formats whose servers' one-shot readings take a call only once it, or
its whole section, is complete.

vLLM's and SGLang's streams of some formats (Kimi K3, MiniCPM 5) announce a call at its
close, never before, and their one-shot readings leave a call the end of output cut off
out of the calls: its text is read as if no call had begun (content, or left out with
the rest of the content where the format's content ends at the first call or marker).
For Step-3 the unit is the call section: both servers' streams announce a call as it
goes, but their one-shot readings (which builtin's "servers" follows) read a section only
once it is closed (``<｜tool_calls_end｜>``): an unclosed one, cut off anywhere (even after
a complete call), is text, markers included. A builtin stream never shows what its final
reading takes back, so it holds what such a unit shows until the unit is complete.
`WholeCalls` gives a builtin stream that reading, at every chunking, and its one-shot
parse the same (`parse` runs the stream):

* from the moment a call is named (`_commit`; for a section, its first call) its deltas,
  and any content shown inside the unit, are held, not released; when the unit ends (the
  call: `_end_call`; the section: `_close_section`) they are released at once (and the
  section's calls' spans join `call_spans` then, not before); meanwhile `pending_text` holds the
  unit's raw text, so the guard's `max_held` counts it and a break releases it;
* at the end of output inside the unit (`_at_end`), the held deltas are discarded, the
  content state goes back to where it was before the unit began, and the unit's raw text
  (kept from the fed text: `open_from` reaches back to its start) is given to `_content`.

The mixin goes in front of a format's stream class (`whole_calls_stream`) only under
"servers" for a stream class that sets `servers_whole_calls` (the unit is the call),
`servers_whole_sections` (the section; a call outside a section is held as a call) or
`servers_call_at_parameter`; under "lossless" the call is kept, flagged, as every builtin
format keeps a cut-off call, and every section is read.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ....protocol import StreamDelta
from ....protocol.models import empty_delta
from .conventions import SERVERS
from .scan import BuiltinToolParser, BuiltinToolStream


class WholeCalls:
    """Mixin over a `scan.BuiltinToolStream` subclass (see the module docstring)."""

    # (The driver's state it reads and writes; set by `BuiltinToolStream.__init__`.)
    _acc: Any
    _buf: str
    _base: int
    _raw_at: int
    _in_call: bool
    _span: int | None
    _index: int
    _call_start: int
    _dropping: bool
    _ws_mode: bool
    _pending_ws: list[str]
    _seen_structure: bool
    _held_markup: list[str]
    _out_content: list[str]
    _out_calls: list[Any]
    _arg_parts: list[str]
    _args_held: list[str]

    def __init__(self, parser: Any) -> None:
        super().__init__(parser)  # type: ignore[call-arg]
        #: A stream's `feed` keeps the fed text from the open call on (`_raw_kept`), with or without
        #: history; `parse` feeds its text in one piece, whose buffer at the call's commit is kept.
        self._raw_kept: list[str] = []
        self._commit_buf: tuple[int, str] = (0, "")
        #: A named call's unit (the call, or its section) is open and its output held (`_release_held`).
        self._holding = False
        #: Where the unit's output begins in `_out_content`/`_out_calls` (until its first release).
        self._mark = (0, 0)
        #: The content state just before the unit began (restored when it is cut off).
        self._saved: tuple[Any, ...] = ()
        #: The unit is the section (`servers_whole_sections`): a call named in a section is held
        #: until the section closes (`_to_close`), with the spans of its calls ended so far.
        self._by_section = bool(getattr(self, "servers_whole_sections", False))
        self._to_close = False
        self._held_spans: list[tuple[int, int]] = []
        #: Where the held unit's raw text starts (the first call's start: its section's opener).
        self._hold_start = 0

    def _keep_raw(self, text: str = "") -> None:
        if self._acc.keeps_history:
            return BuiltinToolStream._keep_raw(self, text)  # type: ignore[arg-type]
        # (no history: no call's raw text is cut, but the open call's text is kept)
        kept = "".join(self._raw_kept) + text
        cut = min(self.open_from(), self._raw_at + len(kept)) - self._raw_at
        self._raw_kept = [kept[cut:]] if cut < len(kept) else []
        self._raw_at += max(cut, 0)
        return None

    def open_from(self) -> int:
        """As the driver's, but never past the start of a held unit (its raw text may become text)."""
        start: int = super().open_from()  # type: ignore[misc]
        return min(start, self._hold_start) if self._holding else start

    def pending_text(self) -> str:
        """As the driver's; while a unit is held, all of its raw text so far is seen but not shown (with
        the whitespace and markup held before it): the guard's `max_held` counts it, a break releases it."""
        if not self._holding:
            return super().pending_text()  # type: ignore[misc, no-any-return]
        before = "".join(self._saved[2]) + "".join(self._saved[5])
        return before + "".join(self._raw_kept)[self._hold_start - self._raw_at :]

    def _commit(self, name: str, call_start: int | None = None) -> None:
        if self._holding and self._to_close:  # (a later call of the held section: held with it)
            super()._commit(name, call_start)  # type: ignore[misc]
            return
        self._saved = (
            self._dropping,
            self._ws_mode,
            self._pending_ws,  # (lists the driver replaces, never changes, once the call begins)
            self._seen_structure,
            len(self._acc.dropped_parts),
            self._held_markup or (),  # (a list `_commit` replaces when it holds anything)
            self._index,
        )
        self._mark = (len(self._out_content), len(self._out_calls))
        self._commit_buf = (self._base, self._buf)
        super()._commit(name, call_start)  # type: ignore[misc]
        self._hold_start = self._call_start
        self._to_close = self._by_section and getattr(self, "_in_section", False)
        self._holding = True
        self._release = self._release_held

    def _release_held(self) -> StreamDelta:
        """`_release` while a unit is held (set on the instance from its first call's commit to its
        end, so a stream outside one releases as the driver does, at no cost): the unit's output
        stays in the driver's lists until it ends; at the first release, what came before it
        in those lists (the mark) goes out."""
        c, k = self._mark
        if not (c or k):
            return empty_delta()
        out, calls, parts = self._out_content, self._out_calls, self._arg_parts
        held = out[c:], calls[k:]
        del out[c:], calls[k:]
        self._arg_parts = []  # (the held call's: `_commit` sealed the calls before it)
        delta = BuiltinToolStream._release(self)  # type: ignore[arg-type]
        self._out_content, self._out_calls = held
        self._arg_parts = parts
        self._mark = (0, 0)
        return delta

    def _end_call(self, pos: int) -> None:
        ended = self._in_call and self._holding
        super()._end_call(pos)  # type: ignore[misc]
        if ended:
            if self._to_close:  # (the section goes on: the call's span waits with its deltas)
                self._held_spans.append(self.call_spans.pop())  # type: ignore[attr-defined]
            else:
                self._show_call()

    def _close_section(self, marker: str) -> None:
        super()._close_section(marker)  # type: ignore[misc]
        if self._holding and self._to_close:
            self._show_call()

    def _show_call(self) -> None:
        """The held call is a call whatever follows (it ended, or its format shows it from here on:
        `servers_call_at_parameter`): the next release hands out what was held."""
        if self._holding:
            self._holding = self._to_close = False
            self._mark = (0, 0)
            if self._held_spans:
                self.call_spans.extend(self._held_spans)  # type: ignore[attr-defined]
                self._held_spans = []
            del self._release

    def _at_end(self) -> None:
        super()._at_end()  # type: ignore[misc]
        if self._holding and (self._in_call or self._to_close):
            self._cut_off()

    def _cut_off(self) -> None:
        """End of output inside the held unit: it held no call; its raw text is text."""
        dropping, ws_mode, pending, seen, n_dropped, markup, index = self._saved
        if self._raw_kept:  # (a stream)
            raw = "".join(self._raw_kept)[self._hold_start - self._raw_at :]
        else:  # (`parse`: one buffer from before the unit to the end)
            base, buf = self._commit_buf
            raw = buf[self._hold_start - base :]
        self._dropping, self._ws_mode, self._pending_ws, self._seen_structure = (
            dropping,
            ws_mode,
            pending,
            seen,
        )
        if self._acc.keeps_history:
            del self._acc.dropped_parts[n_dropped:]
        c, k = self._mark
        del self._out_content[c:], self._out_calls[k:]
        self._arg_parts, self._args_held = [], []
        self._held_markup, self._held_spans = [], []
        self._drop_span()  # type: ignore[attr-defined]  # (a section's next call begun: its text is in `raw`)
        self._index = index
        self._in_call = self._holding = self._to_close = False
        del self._release
        self._content("".join(markup) + raw)  # type: ignore[attr-defined]


@cache
def whole_calls_stream(cls: type) -> type:
    """`cls` with `WholeCalls` in front (one class per stream class). The mixin's state goes in slots:
    in the instance's dictionary, beside a format's own attributes, it would outgrow the interpreter's
    shared-key dictionaries (see `BuiltinToolStream`), which slows every attribute access."""
    namespace = {"__module__": cls.__module__, "__slots__": _SLOTS}
    return type(f"WholeCalls{cls.__name__}", (WholeCalls, cls), namespace)


#: The state `WholeCalls.__init__` adds (`_release`, set and deleted per held unit, stays in the dictionary).
_SLOTS = (
    "_by_section",
    "_commit_buf",
    "_held_spans",
    "_hold_start",
    "_holding",
    "_mark",
    "_saved",
    "_to_close",
)


def stream_class_for(parser: Any) -> type:
    """The stream class `parser` reads with: its own, or its `WholeCalls` variant under "servers"
    when the class sets `servers_whole_calls`, `servers_whole_sections` (or `servers_call_at_parameter`:
    the stream shows the call once its first parameter opens, `_show_call`)."""
    cls: type = parser.stream_class
    if parser.conventions == SERVERS and any(getattr(cls, flag, False) for flag in _HOLDS):
        return whole_calls_stream(cls)
    return cls


#: The stream class flags that put `WholeCalls` in front under "servers".
_HOLDS = ("servers_whole_calls", "servers_whole_sections", "servers_call_at_parameter")


class WholeCallsToolParser(BuiltinToolParser):
    """A builtin parser whose stream class may hold calls under "servers" (it sets one of `_HOLDS`):
    it reads with `stream_class_for(self)`, chosen once per parser."""

    def __init__(self, tools: Any = None, **options: Any) -> None:
        super().__init__(tools, **options)
        #: The stream class: the format's, or its `whole_calls` variant where it applies.
        self._stream_class: type[BuiltinToolStream] = stream_class_for(self)

    def stream(self) -> BuiltinToolStream:
        """A fresh incremental stream (per request)."""
        return self._stream_class(self)

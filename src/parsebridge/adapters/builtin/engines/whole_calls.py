"""Whole calls: a builtin tool stream shows a call only once it is whole, and never a call that is not.

The rule (under both conventions, one-shot and streamed at every chunking): no call whose
arguments are not a complete JSON object is returned as a call. A model cut off by
``max_tokens`` inside a call, a call whose JSON never closes or is not an object, a call body
that breaks off before its end: a client must never see a call header it will not get the rest
of, so a stream holds each call (its header, its arguments, any content shown inside it) from the
moment it is named (`_commit`) until it ends (`_end_call`), and then decides:

* **whole** — it ended where its format ends a call (its close marker, its object's closing
  brace: not at the end of output, and a format whose call body breaks off before its end sets
  `_call_broken`), and its arguments text parses to a JSON object (none at all reads as ``{}``; a
  JSON string whose text is a JSON object, as OpenAI's API writes arguments, reads as that object):
  the held deltas are released at once, the call with all its arguments in one delta. A call
  the end of output cuts off before it closed is never whole, even where its arguments were
  already complete (SGLang reads no call there either, and vLLM only in some formats); one that
  closed but whose block's end the output cut off (Hermes's object, Qwen3-Coder's
  ``</function>``, a gpt-oss body's object before its stop token ``<|call|>``: the format sets
  `_call_closed`) is whole;
* **not whole** — the held deltas are discarded, the content state goes back to where it was
  before the call began, and the call's raw text (from the fed text: `open_from` reaches back to
  its start) is given to `_content`: content under ``"lossless"`` (nothing is lost); under
  ``"servers"`` content where the text before the call is still content (the first call: vLLM
  shows it so), on `dropped` after a call (the content has ended there: SGLang reads no call and
  leaves the text out; vLLM shows no call either). The call's index is given to the next call.

Step-3 under ``"servers"`` holds a whole section instead (`servers_whole_sections`): both
servers' one-shot readings read a section only once it is closed (``<｜tool_calls_end｜>``), so
an unclosed one, cut off anywhere (even after a complete call), is text, markers included; its
calls' spans join `call_spans` when the section closes.

While a call is held, `pending_text` holds its raw text, so the guard's `max_held` counts it and a
break releases it. Holding stays linear: a held call's deltas are joined once, when it is
decided, and its raw text is sliced once, when it is not whole.

`BuiltinToolParser` reads with `whole_calls_stream(stream_class)`: the mixin in front of every
format's stream class, one class per stream class.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ....protocol import StreamDelta
from ....protocol.calls import parse_arguments
from ....protocol.models import empty_delta
from .conventions import SERVERS
from .scan import BuiltinToolStream


class WholeCalls:
    """Mixin over a `scan.BuiltinToolStream` subclass (see the module docstring)."""

    # (The driver's state it reads and writes; set by `BuiltinToolStream.__init__`.)
    _acc: Any
    _buf: str
    _base: int
    _raw_at: int
    _in_call: bool
    _final: bool
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
    call_spans: list[tuple[int, int]]

    def __init__(self, parser: Any) -> None:
        super().__init__(parser)  # type: ignore[call-arg]
        #: A stream's `feed` keeps the fed text from the open call on (`_raw_kept`), with or without
        #: history; `parse` sets `_whole_text`, the text it feeds in one piece.
        self._raw_kept: list[str] = []
        self._whole_text: str | None = None
        #: A named call's unit (the call, or its section) is open and its output held (`_release_held`).
        self._holding = False
        #: Where the unit's output begins in `_out_content`/`_out_calls` (until its first release),
        #: and the open call's (the same but in a held section).
        self._mark = (0, 0)
        self._call_mark = (0, 0)
        #: The content state just before the unit began (restored when it is cut off), and before
        #: the open call began (restored when it is not whole).
        self._saved: tuple[Any, ...] = ()
        self._call_saved: tuple[Any, ...] = ()
        #: The format saw the open call's structure break off before its end (`_end_call` then
        #: reads it as not whole).
        self._call_broken = False
        #: The unit is the section (`servers_whole_sections` under "servers"): a call named in a
        #: section is held until the section closes (`_to_close`), with the spans of its calls ended so far.
        self._by_section = parser.conventions == SERVERS and bool(
            getattr(self, "servers_whole_sections", False)
        )
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

    def _raw_text(self, start: int, end: int | None = None) -> str:
        """The fed text from offset `start` to `end` (the end of what was fed when None)."""
        if self._whole_text is not None:  # (`parse`)
            return self._whole_text[start:end]
        at = self._raw_at
        return "".join(self._raw_kept)[start - at : None if end is None else end - at]

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
        if self._whole_text is not None:
            return before + self._whole_text[self._hold_start : self._base + len(self._buf)]
        return before + self._raw_text(self._hold_start)

    def pending_size(self) -> int:
        """`len(self.pending_text())` without joining the held call's text, which grows with every
        chunk (the guard's `max_held` asks after each: joining it there was quadratic)."""
        if not self._holding:
            return super().pending_size()  # type: ignore[misc, no-any-return]
        saved = self._saved
        before = sum(map(len, saved[2])) + sum(map(len, saved[5]))
        return before + max(self._base + len(self._buf) - self._hold_start, 0)

    def _state_now(self) -> tuple[Any, ...]:
        """The content state a call or a unit that turns out to hold no call goes back to."""
        return (
            self._dropping,
            self._ws_mode,
            self._pending_ws,  # (lists the driver replaces, never changes, once the call begins)
            self._seen_structure,
            len(self._acc.dropped_parts),
            self._held_markup or (),  # (a list `_commit` replaces when it holds anything)
            self._index,
            getattr(self, "_section_named", None),  # (a section format's: did a call of it stand)
        )

    def _commit(self, name: str, call_start: int | None = None, call_id: str | None = None) -> None:
        self._call_saved = self._state_now()
        self._call_mark = (len(self._out_content), len(self._out_calls))
        self._call_broken = self._call_closed = False
        if self._holding and self._to_close:  # (a later call of the held section: held with it)
            super()._commit(name, call_start, call_id)  # type: ignore[misc]
            return
        self._saved = self._call_saved
        self._mark = self._call_mark
        super()._commit(name, call_start, call_id)  # type: ignore[misc]
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
        cc, ck = self._call_mark
        self._call_mark = (cc - c, ck - k)
        return delta

    def _whole_call(self) -> bool:
        """Whether the open (held) call is whole (see the module docstring)."""
        if self._call_broken or (self._final and not self._call_closed):  # (broken, or cut off)
            return False
        self._seal()  # type: ignore[attr-defined]
        index = self._index
        held = [d for d in self._out_calls[self._call_mark[1] :] if d.index == index]
        args = "".join(d.arguments for d in held)
        if parse_arguments(args)[1] is None:
            return True
        inner = object_in_string(args)
        if inner is None:
            return False
        # (arguments the model wrote as a JSON string holding the object, as OpenAI's API sends them:
        # the object; the held deltas are not shown yet, so the call is shown with it)
        held[0].arguments = inner
        k = self._call_mark[1]
        self._out_calls[k:] = [d for d in self._out_calls[k:] if d.index != index or d is held[0]]
        return True

    def _end_call(self, pos: int) -> None:
        ended = self._in_call and self._holding
        whole = self._whole_call() if ended else True
        super()._end_call(pos)  # type: ignore[misc]
        if not ended:
            return
        if not whole:
            self._not_a_call()
        elif self._to_close:  # (the section goes on: the call's span waits with its deltas)
            self._held_spans.append(self.call_spans.pop())
        else:
            self._show_call()

    def _not_a_call(self) -> None:
        """The call that just ended is not whole: its held output goes, its raw text is text."""
        start, end = self.call_spans.pop()
        markup = self._restore(self._call_saved)
        c, k = self._call_mark
        del self._out_content[c:], self._out_calls[k:]
        self._arg_parts, self._args_held = [], []
        if not self._to_close:  # (a call of its own: nothing is held any more)
            self._holding = False
            self._mark = (0, 0)
            del self._release
        self._as_text("".join(markup) + self._call_lead + self._raw_text(start, end))

    def _as_text(self, text: str) -> None:
        """The text of a unit that held no call, as text: content (on `dropped` where the content has
        ended), less the markup the format's servers leave out (`servers_markup`, as `_reject` does)."""
        if self._markup or self._doubled:  # type: ignore[attr-defined]
            self._unnamed(text, self._pos)  # type: ignore[attr-defined]
        else:
            self._content(text)  # type: ignore[attr-defined]

    def _restore(self, saved: tuple[Any, ...]) -> Any:
        """Put the content state `saved` back (`_state_now`); its held markup, to give back as text."""
        dropping, ws_mode, pending, seen, n_dropped, markup, index, named = saved
        self._dropping, self._ws_mode, self._pending_ws, self._seen_structure = (
            dropping,
            ws_mode,
            pending,
            seen,
        )
        if named is not None:  # (a section none of whose calls stood is no section: its markers are text)
            self._section_named = named
        if self._acc.keeps_history:
            del self._acc.dropped_parts[n_dropped:]
        self._index = index
        return markup

    def _close_section(self, marker: str) -> None:
        super()._close_section(marker)  # type: ignore[misc]
        if self._holding and self._to_close:
            self._show_call()

    def _show_call(self) -> None:
        """The held unit holds calls: the next release hands out what was held."""
        if self._holding:
            self._holding = self._to_close = False
            self._mark = (0, 0)
            if self._held_spans:
                self.call_spans.extend(self._held_spans)
                self._held_spans = []
            del self._release

    def _at_end(self) -> None:
        super()._at_end()  # type: ignore[misc]
        if self._holding and self._to_close:
            self._cut_off()

    def _cut_off(self) -> None:
        """End of output inside a held section: it held no call; its raw text is text."""
        raw = self._raw_text(self._hold_start)
        markup = self._restore(self._saved)
        c, k = self._mark
        del self._out_content[c:], self._out_calls[k:]
        self._arg_parts, self._args_held = [], []
        self._held_markup, self._held_spans = [], []
        self._drop_span()  # type: ignore[attr-defined]  # (a section's next call begun: its text is in `raw`)
        self._in_call = self._holding = self._to_close = False
        del self._release
        self._as_text("".join(markup) + raw)


def object_in_string(args: str) -> str | None:
    """The JSON object `args` holds as a JSON string (``"{\\"city\\": \\"Paris\\"}"``), as its
    JSON text; None where `args` is no string or its text no JSON object."""
    stripped = args.strip()
    if not stripped.startswith('"'):
        return None
    try:
        text = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(text, str) or parse_arguments(text)[1] is not None or not text.strip():
        return None
    return text.strip()


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
    "_call_broken",
    "_call_closed",
    "_call_mark",
    "_call_saved",
    "_held_spans",
    "_hold_start",
    "_holding",
    "_mark",
    "_saved",
    "_to_close",
    "_whole_text",
)

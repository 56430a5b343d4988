"""conventions="servers" for formats whose servers show a call only once it is complete.

vLLM's and SGLang's streams of some formats (Kimi K3, MiniCPM 5) announce a call at its
close, never before, and their one-shot readings leave a call the end of output cut off
out of the calls: its text is read as if no call had begun (content, or left out with
the rest of the content where the format's content ends at the first call or marker).
`WholeCalls` gives a builtin stream that reading, at every chunking, and its one-shot
parse the same (`parse` runs the stream):

* from the moment a call is named (`_commit`) its deltas, and any content shown inside
  it, are held, not released; when the call ends (`_end_call`) they are released at once;
* at the end of output inside a call (`_at_end`), the held deltas are discarded, the
  content state goes back to where it was before the call began, and the call's raw text
  (kept from the fed text) is given to `_content` as text.

The mixin goes in front of a format's stream class (`whole_calls_stream`) only under
"servers" for a stream class that sets `servers_whole_calls`; under "lossless" the call
is kept, flagged, as every builtin format keeps a cut-off call.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ....protocol import StreamDelta
from .conventions import SERVERS

#: Fed chunks kept outside a call before the kept text is trimmed.
_TRIM_EVERY = 64


class WholeCalls:
    """Mixin over a `scan.BuiltinToolStream` subclass (see the module docstring)."""

    # (The driver's state it reads and writes; set by `BuiltinToolStream.__init__`.)
    _acc: Any
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
        #: The fed text from offset `_fed_at` on (what a call cut off at the end may span).
        self._fed: list[str] = []
        self._fed_at = 0
        #: A named call is open and its deltas are held (`_held_content`, `_held_calls`).
        self._holding = False
        self._held_content: list[str] = []
        self._held_calls: list[Any] = []
        #: Where the call's output begins in `_out_content`/`_out_calls` (before its first release).
        self._mark = (0, 0)
        #: The content state just before the call began (restored when it is cut off).
        self._saved: tuple[Any, ...] = ()

    def _feed(self, text: str, token_ids: Sequence[int] | None, final: bool = False) -> StreamDelta:
        fed = self._fed
        if len(fed) >= _TRIM_EVERY and not self._in_call and self._span is None:
            kept = "".join(fed)
            cut = self.open_from() - self._fed_at  # type: ignore[attr-defined]  # (nothing before it can be a call's)
            self._fed = fed = [kept[cut:]]
            self._fed_at += cut
        fed.append(text)
        return super()._feed(text, token_ids, final)  # type: ignore[misc,no-any-return]

    def _commit(self, name: str, call_start: int | None = None) -> None:
        self._saved = (
            self._dropping,
            self._ws_mode,
            list(self._pending_ws),
            self._seen_structure,
            len(self._acc.dropped_parts),
            list(self._held_markup),
            self._index,
        )
        self._mark = (len(self._out_content), len(self._out_calls))
        super()._commit(name, call_start)  # type: ignore[misc]
        self._holding = True

    def _release(self) -> StreamDelta:
        if self._holding:
            self._seal()  # type: ignore[attr-defined]
            c, k = self._mark
            self._held_content += self._out_content[c:]
            del self._out_content[c:]
            self._held_calls += self._out_calls[k:]
            del self._out_calls[k:]
            self._mark = (0, 0)
        return super()._release()  # type: ignore[misc,no-any-return]

    def _end_call(self, pos: int) -> None:
        ended = self._in_call and self._holding
        super()._end_call(pos)  # type: ignore[misc]
        if ended:
            self._holding = False
            if self._held_content or self._held_calls:
                self._out_content[0:0] = self._held_content
                self._out_calls[0:0] = self._held_calls
                self._held_content, self._held_calls = [], []

    def _at_end(self) -> None:
        super()._at_end()  # type: ignore[misc]
        if self._holding and self._in_call:
            self._cut_off()

    def _cut_off(self) -> None:
        """End of output inside the held call: it was no call; its raw text is text."""
        dropping, ws_mode, pending, seen, n_dropped, markup, index = self._saved
        raw = "".join(self._fed)[self._call_start - self._fed_at :]
        self._dropping, self._ws_mode, self._pending_ws, self._seen_structure = (
            dropping,
            ws_mode,
            pending,
            seen,
        )
        if self._acc.keeps_history:
            del self._acc.dropped_parts[n_dropped:]
        c, k = self._mark
        del self._out_content[c:]
        del self._out_calls[k:]
        self._held_content, self._held_calls = [], []
        self._arg_parts, self._args_held = [], []
        self._held_markup = []
        self._index = index
        self._in_call = self._holding = False
        self._content("".join(markup) + raw)  # type: ignore[attr-defined]


@cache
def whole_calls_stream(cls: type) -> type:
    """`cls` with `WholeCalls` in front (one class per stream class)."""
    return type(f"WholeCalls{cls.__name__}", (WholeCalls, cls), {"__module__": cls.__module__})


def stream_class_for(parser: Any) -> type:
    """The stream class `parser` reads with: its own, or its `WholeCalls` variant under "servers"
    when the class sets `servers_whole_calls`."""
    cls: type = parser.stream_class
    if parser.conventions == SERVERS and getattr(cls, "servers_whole_calls", False):
        return whole_calls_stream(cls)
    return cls

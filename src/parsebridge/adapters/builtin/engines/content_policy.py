"""The builtin content policy: what of the text outside calls is content, what is call structure.

A mixin of `BuiltinToolStream` (`scan`), like `call_steps`: rule 1 of the builtin
malformed-output contract (a whitespace-only run touching a call on one side and a call
or the start/end of the output on the other belongs to the call structure), and
conventions="servers" (content ends where the format's servers end it: what follows is
kept on the result's ``dropped``). The state it reads and writes is declared in the
driver's ``__slots__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ContentPolicy:
    """Content and held whitespace over the driver's output lists (see `BuiltinToolStream`)."""

    __slots__ = ()
    _acc: Any
    _pos: int
    _span: int | None
    _cut: str
    _dropping: bool
    _ws_mode: bool
    _pending_ws: list[str]
    _out_content: list[str]
    _seen_structure: bool
    _reject: Callable[[int], None]  # (`CallSteps`)

    def _content(self, text: str) -> None:
        """Text outside calls; whitespace right after a call (or at start) waits for what follows."""
        if not text:
            return
        if self._dropping:
            # (`_ws_mode` stays True: `feed`'s in-place content path then comes here too.)
            self._acc.dropped_parts.append(text)
            return
        if self._cut:
            at = text.find(self._cut)
            if at != -1:
                self._content(text[:at])
                self._start_dropping()
                self._acc.dropped_parts.append(text[at:])
                return
        if self._ws_mode:
            if text.isspace():
                self._pending_ws.append(text)
                return
            self._ws_mode = False
            self._out_content.extend(self._pending_ws)
            self._pending_ws = []
        self._out_content.append(text)

    def _start_dropping(self) -> None:
        """conventions="servers": the content ends here; what `_content` is given from now on
        (whitespace held so far included) is left out of it, kept on the result's `dropped`."""
        self._dropping = True
        self._ws_mode = True
        if self._pending_ws:
            self._acc.dropped_parts.extend(self._pending_ws)
            self._pending_ws = []

    def _inline_content(self, text: str) -> None:
        """Stray text inside a call span that is not part of the call: content, verbatim, in place."""
        if text:
            if self._dropping:
                self._acc.dropped_parts.append(text)
            else:
                self._out_content.append(text)

    def _structure(self) -> None:
        """A committed piece of call structure (outside any call): swallow adjacent whitespace."""
        self._pending_ws = []
        self._ws_mode = True
        self._seen_structure = True

    def _section_ended(self, marker: str, named: bool) -> None:
        """At a tool-call section's end `marker` (consumed): structure when a call of the
        section was `named`; else the undecided span up to here, or the marker itself, is content."""
        if named:
            self._structure()
        elif self._span is not None:
            self._reject(self._pos)
        else:
            self._content(marker)

    def _settle_held_ws(self) -> None:
        """At the end of output: held whitespace is content unless call structure was seen."""
        if self._pending_ws and not self._seen_structure:
            self._out_content.extend(self._pending_ws)
        self._pending_ws = []

"""What the formats with a tool-call section share: DeepSeek V3, the section formats (`section_json`)
and the invoke formats (`invoke`).

Their calls stand in a section (``<｜tool▁calls▁begin｜>`` … ``<｜tool▁calls▁end｜>``)
or bare, and they read the section the same way: a section is structure once
one of its calls is named, and content (markers included) while none is; text
between a section's start and its first call decides that (whitespace waits,
anything else makes the section content). `SectionStream` holds that state
and the steps the formats took each in its own copy: between calls, raw JSON
arguments up to their closing brace, and the rest of a call up to its end.
A format sets `_call_end`, the marker that closes a call.
"""

from __future__ import annotations

from .markers import find_or_safe
from .scan import CLOSED, MARKER, BuiltinToolStream, JsonRaw
from .tool_parser import BuiltinToolParser

#: `_between_calls`: the undecided section turned out to be content (step again).
REJECTED = "\x00rejected"
#: The state between calls: every section format numbers it 0.
OUTSIDE = 0


class SectionStream(BuiltinToolStream):
    """The driver with a tool-call section's state (see the module docstring)."""

    __slots__ = ("_call_end", "_in_section", "_section_named")
    _state: int

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._in_section = False
        self._section_named = False
        #: The marker that closes a call (consumed when it stops one).
        self._call_end = ""

    def _stop_call(self, marker: str) -> None:
        """At `marker`, which ends the current call (cursor on it; the format's `_call_end` is
        consumed): a named call ends, an undecided span is content; back between calls."""
        self._close_at(marker, self._call_end)
        self._state = OUTSIDE

    def _open_section(self) -> None:
        """At a section's start marker (a repeated one inside an undecided section starts it anew)."""
        if not self._in_section or not self._section_named:
            self._in_section = True
            self._section_named = False

    def _close_section(self, marker: str) -> None:
        """At the section's end `marker`, consumed."""
        self._in_section = False
        self._section_ended(marker, self._section_named)

    def _named_in_section(self) -> None:
        """A call was named: inside a section, the section is structure."""
        self._section_named = self._section_named or self._in_section

    def _between_calls(self, markers: tuple[str, ...]) -> str | None:
        """Outside a call: up to the next of `markers` (returned, the cursor on it), None when
        more text is needed. Outside a section the text before it is content; in a section
        whose first call is undecided only whitespace may stand there: other text makes
        the section content and `REJECTED` is returned."""
        if self._span is None:
            return self._outside(markers)
        buf, pos = self._buf, self._pos
        stop, which = find_or_safe(buf, pos, markers, self._final)
        if buf[pos:stop].strip():
            self._reject(pos)
            return REJECTED
        self._pos = stop
        return which

    def _json_args(self, raw: JsonRaw, breakers: tuple[str, ...]) -> bool | None:
        """Raw JSON arguments up to their closing brace: True when it closed (the caller
        moves on), None at a breaker (the call stopped there), False when more text is needed."""
        buf, pos = self._buf, self._pos
        end, why = raw.scan(buf, pos, breakers, self._final, stop_at_close=True)
        self._args(buf[pos:end])
        self._pos = end
        if why == CLOSED:
            return True
        if why == MARKER:
            assert raw.marker is not None
            self._stop_call(raw.marker)
            return None
        return False

    def _to_call_end(self, breakers: tuple[str, ...]) -> bool:
        """The rest of a call (ignored when it is named) up to the breaker that ends it."""
        buf = self._buf
        j, which = find_or_safe(buf, self._pos, breakers, self._final)
        self._pos = j
        if which is None:
            return False
        self._stop_call(which)
        return True

    def _drop_named_section(self) -> None:
        """End of output between calls: a section's span after a named call is structure."""
        if self._span is not None and self._section_named:
            self._drop_span()

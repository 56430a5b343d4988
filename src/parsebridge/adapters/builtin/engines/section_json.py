"""Shared machine of the special-token section formats with raw JSON arguments (Kimi K2, PLaMo 3).

A section marker holds calls ``CALL_BEGIN head ARG_BEGIN {json} [ARGS_END] CALL_END``;
the formats differ in their marker texts and in how the head names the
function (Kimi K2: ``functions.NAME:IDX``; PLaMo 3: the name between name
markers), so one machine (`SectionJsonStream`) reads them, configured by a
`SectionDialect`. The name is announced at ARG_BEGIN; arguments stream raw up
to their closing brace (marker text inside a JSON string is data).

Malformed output (builtin policy, see `scan`):

* section and call markers with whitespace between them are structure; other text between
  calls inside a section is content; a bare call without the section is accepted;
* a call whose head yields no name stays in the content verbatim, markers included; a
  section without any named call is content too;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`);
  text after the arguments up to CALL_END is ignored;
* a new call/section marker inside a call ends it (as if truncated);
* end of output inside a call: no call, its text is text (`whole_calls`); unnamed →
  content. `drop` markers (end-of-turn tokens) are never text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .conventions import SERVERS
from .json_text import ArgsScan
from .markers import find_or_safe
from .scan import MORE, JsonRaw
from .sections import REJECTED, SectionStream
from .tool_parser import BuiltinToolParser


@dataclass(frozen=True)
class SectionDialect:
    """The marker texts of one section format, and how a call's head names the function."""

    section_begin: str
    section_end: str
    call_begin: str
    arg_begin: str
    call_end: str
    name_from_head: Callable[[str], str | None]
    args_end: str = ""
    drop: tuple[str, ...] = ()
    #: The call id a head carries (Kimi K2's ``functions.NAME:IDX``, which its chat template
    #: renders back into the next prompt), or None: the call then gets a fresh id.
    id_from_head: Callable[[str], str | None] | None = None

    @property
    def markers(self) -> tuple[str, ...]:
        extra = (self.args_end,) if self.args_end else ()
        return (
            self.section_begin,
            self.call_begin,
            self.arg_begin,
            *extra,
            self.call_end,
            self.section_end,
            *self.drop,
        )


_OUTSIDE, _HEAD, _ARGS_WAIT, _ARGS, _TAIL = range(5)


class SectionJsonStream(SectionStream):
    """Incremental machine of a section of calls with raw JSON arguments (see the module docstring)."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        d: SectionDialect = parser.dialect  # type: ignore[attr-defined]
        self._d = d
        args_end = (d.args_end,) if d.args_end else ()
        self._breakers = (d.call_end, d.call_begin, d.section_end, d.section_begin, *args_end)
        self._head_ends = (d.arg_begin, *self._breakers)
        self._state = _OUTSIDE
        self._call_end = d.call_end
        self._head: list[str] = []
        self._ids_used: set[str] = set()  # the heads' ids given to calls so far (`_head_id`)
        self._raw = JsonRaw(self._breakers)
        #: The arguments' `_fast_mode`: their scanner (reset per call, never replaced) and the
        #: breakers `_json_args` scans for.
        self._args_mode: ArgsScan | None = None  # (made at a stream's first call: `parse` never asks)
        self._bare_calls = parser.conventions != SERVERS or parser.servers_bare_calls

    def _fast_mode(self) -> Any:
        """In the arguments, a chunk the scanner consumes whole is only `_args(chunk)` (see `ArgsScan`)."""
        if self._state != _ARGS:
            return None
        mode = self._args_mode
        if mode is None:
            mode = self._args_mode = ArgsScan(self._raw, self._breakers, "", True)
        return mode

    def _outside_markers(self) -> tuple[str, ...]:
        d = self._d
        if self._in_section:
            return (d.section_begin, d.call_begin, d.section_end, *d.drop)
        if self._bare_calls:
            return (d.section_begin, d.call_begin, *d.drop)
        return (d.section_begin, *d.drop)  # (under "servers": both servers read calls only in a section)

    def _stop_call(self, marker: str) -> None:
        """At a breaker marker inside a call (cursor on it)."""
        if marker == self._d.args_end:  # the arguments end, the call goes on
            self._pos += len(marker)
            self._state = _TAIL
            return
        super()._stop_call(marker)

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _OUTSIDE:
            return self._outside_step()
        if state == _HEAD:
            return self._head_step(buf)
        if state == _ARGS_WAIT:
            found = self._marker_past_ws(self._breakers)
            if found == MORE:
                return False
            if found is not None:
                self._stop_call(found)
                return True
            self._raw.reset()
            self._state = _ARGS
            return True
        if state == _ARGS:
            closed = self._json_args(self._raw, self._breakers)
            if closed:
                self._state = _TAIL
            return closed is not False
        # _TAIL: named → ignore up to the call end; unnamed → content at the call end
        return self._to_call_end(self._breakers)

    def _outside_step(self) -> bool:
        """Between calls: content up to a marker; a call or the section opens, or ends."""
        which = self._between_calls(self._outside_markers())
        if which is None or which is REJECTED:  # (more text needed / the section was content)
            return which is REJECTED
        if which in self._d.drop:  # end-of-turn tokens: never text
            self._pos += len(which)
            if self._span is None:
                self._structure()
            return True
        if which == self._d.section_end:
            self._pos += len(which)
            self._close_section(which)
            return True
        self._begin_span(self._pos)
        self._pos += len(which)
        if which == self._d.section_begin:
            self._open_section()
        else:
            self._head = []
            self._state = _HEAD
        return True

    def _head_step(self, buf: str) -> bool:
        """A call's head up to its arguments: the name, or the call stops (unnamed: its tail)."""
        stop, which = find_or_safe(buf, self._pos, self._head_ends, self._final)
        self._head.append(buf[self._pos : stop])
        self._pos = stop
        if which is None:
            return False
        if which != self._d.arg_begin:
            self._stop_call(which)
            return True
        self._pos += len(which)
        head = "".join(self._head)
        name = self._d.name_from_head(head)
        if name is None:
            self._state = _TAIL
        else:
            self._commit(name, call_id=self._head_id(head))
            self._named_in_section()
            self._state = _ARGS_WAIT
        return True

    def _head_id(self, head: str) -> str | None:
        """The model's id for the call (see `SectionDialect.id_from_head`), unless an earlier call
        of this output had it: ids stay unique within a response."""
        call_id = self._d.id_from_head(head) if self._d.id_from_head else None
        if call_id is None or call_id in self._ids_used:
            return None
        self._ids_used.add(call_id)
        return call_id

    def _at_end(self) -> None:
        if self._state == _OUTSIDE:
            self._drop_named_section()

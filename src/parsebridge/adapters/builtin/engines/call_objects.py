"""JSON call objects, ``{"name": ..., "arguments": ...}``, read incrementally by the builtin formats."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from .json_text import CLOSED, MARKER, NEED, STOP, ArgsScan, JsonRaw, Quiet, string_body, string_or_value
from .markers import MORE, match_marker

#: The stream a reader steps (`scan.BuiltinToolStream`; not imported: `scan` imports this module).
BuiltinToolStream = Any


_KEY_WAIT, _KEY, _COLON, _VALUE_WAIT, _VALUE, _AFTER = range(6)
#: What ends a run of string body the raw scan consumes without a change of state.
_IN_STRING_STOP = re.compile(r'["\\]').search
_QUIET_IN_STRING = Quiet(_IN_STRING_STOP)  # another key's string: nothing kept
#: reader results besides NEED/MARKER
DONE, BROKEN = "done", "broken"
_NAME, _ARGS, _OTHER, _LATE_ARGS = "name", "args", "other", "late args"


class ObjectReader:
    """Reads one ``{"name": str, "arguments"|"parameters": value, ...}`` object after its ``{``.

    The name is announced as soon as its string closes; the arguments value
    is streamed raw as it arrives (buffered when it comes before the name).
    Other keys are ignored (`answer_like` says whether there were any). A key written twice
    counts by its last value, as ``json.loads`` (and so both servers' one-shot readings) keeps
    it: the call is held until its object closes (`whole_calls`), and then takes the last name
    and the last arguments (`_restate`). Returns DONE after the closing brace, MARKER at a marker
    outside strings, BROKEN at a character that cannot continue the object
    (cursor left on it), NEED when the buffer is exhausted.
    """

    ARG_KEYS: ClassVar[tuple[str, ...]] = ("arguments", "parameters")
    #: keys naming the function (Cohere writes "tool_name"); the first one seen counts.
    NAME_KEYS: ClassVar[tuple[str, ...]] = ("name",)

    def __init__(self, markers: Sequence[str]) -> None:
        self.markers = tuple(markers)
        self._firsts = frozenset(m[0] for m in self.markers)
        self.phase = _KEY_WAIT
        self.name: str | None = None
        self.args_state = 0  # 0 not seen, 1 streaming, 2 done
        self.other_key = False  # a key that is neither a name key nor an arguments key
        self.marker: str | None = None
        self._raw = JsonRaw(self.markers)
        self._args_mode: ArgsScan | None = None  # (made at the first in-place arguments chunk)
        self._role = _OTHER
        self._tok: list[str] = []
        self._key: str | None = None
        self._early_args: list[str] = []
        #: The arguments key that counted (a later one of the same key replaces its value), and
        #: the last duplicate name and arguments text (`_restate`).
        self._args_key: str | None = None
        self._late_args: list[str] = []
        self.late_name: str | None = None
        self.late_args: str | None = None
        # Sinks are the lists' own `append` (the lists are cleared, never replaced): no
        # reference back to the reader, so a finished reader is freed without the collector.
        self._quiet_tok = Quiet(_IN_STRING_STOP, self._tok.append)
        self._quiet_early = Quiet(_IN_STRING_STOP, self._early_args.append)
        self._quiet_late = Quiet(_IN_STRING_STOP, self._late_args.append)

    @property
    def answer_like(self) -> bool:
        """No arguments key, and a key besides the name: a JSON answer that has a "name" field
        (``{"name": "Alice", "age": 30}``), not a call, where no marker of a format says it is one."""
        return self.args_state == 0 and self.other_key

    def fast_mode(self) -> ArgsScan | Quiet | None:
        """The stream's `_fast_mode` while this reader steps: the raw scan while it streams
        the arguments of a named call; inside a key or another value's string, a `Quiet`
        (the scan consumes a chunk without quote or backslash whole, into `_tok` for a key
        or the name, into the early arguments before the name, nowhere for other keys)."""
        phase = self.phase
        if phase == _VALUE:
            role = self._role
            if role == _ARGS and self.name is not None:
                args = self._args_mode
                if args is None:
                    args = self._args_mode = ArgsScan(self._raw, self.markers, ",}]", False)
                return args
            raw = self._raw
            if not raw.in_str or raw.esc:
                return None
            if role == _NAME:
                return self._quiet_tok
            if role == _LATE_ARGS:
                return self._quiet_late
            return self._quiet_early if role == _ARGS else _QUIET_IN_STRING
        if phase == _KEY and not self._raw.esc:
            return self._quiet_tok
        return None

    def _marker_at(self, st: BuiltinToolStream) -> str | None:
        found = match_marker(st._buf, st._pos, self.markers, st._final) if self.markers else None
        if found is not None and found != MORE:
            self.marker = found
        return found

    def step(self, st: BuiltinToolStream) -> str:
        buf = st._buf
        while True:
            if self.phase == _VALUE or self.phase == _KEY:
                r = self._scan(st)
                if r is not None:
                    return r
                continue
            if not st._skip_ws():
                return NEED
            c = buf[st._pos]
            if c in self._firsts:
                found = self._marker_at(st)
                if found == MORE:
                    return NEED
                if found is not None:
                    return MARKER
            if self.phase == _KEY_WAIT or self.phase == _AFTER:
                if c == '"':
                    self.phase = _KEY
                    self._tok.clear()
                    self._raw.reset(in_str=True)
                    st._pos += 1
                elif c == "}":
                    st._pos += 1
                    if self.name is not None and (self.late_name is not None or self.late_args is not None):
                        st._restate(self.late_name, self.late_args)
                    return DONE
                elif c == "," and self.phase == _AFTER:
                    self.phase = _KEY_WAIT
                    st._pos += 1
                else:
                    return BROKEN
            elif self.phase == _COLON:
                if c != ":":
                    return BROKEN
                st._pos += 1
                self.phase = _VALUE_WAIT
            else:  # _VALUE_WAIT
                key = self._key
                if key in self.NAME_KEYS:  # (a later one: `late_name`)
                    self._role = _NAME
                elif key in self.ARG_KEYS and self.args_state == 0:
                    self._role = _ARGS
                    self._args_key = key
                    self.args_state = 1
                elif key == self._args_key and self.args_state == 2:
                    self._role = _LATE_ARGS
                    self._late_args.clear()
                else:
                    self._role = _OTHER
                    self.other_key = self.other_key or key not in self.NAME_KEYS
                self._tok.clear()
                self._raw.reset()
                self.phase = _VALUE

    def _name_read(self, st: BuiltinToolStream, name: Any) -> None:
        """A name key's value read: the call's name, or (a name key written again) its last name."""
        if not isinstance(name, str):
            return
        if self.name is not None:
            self.late_name = name
            return
        self.name = name
        st._commit(name)
        st._args("".join(self._early_args))
        self._early_args.clear()

    def _late_args_read(self) -> None:
        """The arguments key written again: its value is the call's (before the name: in its place)."""
        text = "".join(self._late_args).strip()
        self._late_args.clear()
        if self.name is None:
            self._early_args[:] = [text]
        else:
            self.late_args = text

    def _scan(self, st: BuiltinToolStream) -> str | None:
        start = st._pos
        if self.phase == _KEY:
            end, why = self._raw.scan(st._buf, start, (), st._final, stop_at_close=True)
            st._pos = end
            if why == CLOSED:
                self._tok.append(st._buf[start : end - 1])
                key = string_body("".join(self._tok))
                self._key = key if isinstance(key, str) else None
                self.phase = _COLON
                return None
            self._tok.append(st._buf[start:end])
            return NEED
        name_role = self._role == _NAME
        end, why = self._raw.scan(
            st._buf, start, self.markers, st._final, stops=",}]", stop_at_close=name_role
        )
        st._pos = end
        piece = st._buf[start:end]
        if self._role == _NAME:
            self._tok.append(piece)
        elif self._role == _ARGS:
            if self.name is None:
                self._early_args.append(piece)
            else:
                st._args(piece)
        elif self._role == _LATE_ARGS:
            self._late_args.append(piece)
        if why in (STOP, CLOSED):
            self.phase = _AFTER
            if self._role == _NAME:
                self._name_read(st, string_or_value("".join(self._tok).strip()))
            elif self._role == _ARGS:
                self.args_state = 2
            elif self._role == _LATE_ARGS:
                self._late_args_read()
            return None
        if why == MARKER:
            self.marker = self._raw.marker
            return MARKER
        return NEED

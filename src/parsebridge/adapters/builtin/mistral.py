"""Mistral tool calls: ``[TOOL_CALLS]`` + a JSON array, or the newer ``[TOOL_CALLS]name{json}``.

Accepted shapes after ``[TOOL_CALLS]`` (whitespace allowed after the marker):

* ``[{"name": ..., "arguments": {...}}, ...]`` — a JSON array of call objects;
* ``{"name": ..., "arguments": {...}}`` — a single bare object;
* ``name{json}`` and ``name[ARGS]{json}`` — the v11+ form, repeatable
  (``[TOOL_CALLS]a{...}[TOOL_CALLS]b{...}``); the name is announced at ``{``
  / ``[ARGS]`` and the arguments stream raw until their closing brace;
* ``name[CALL_ID]id[ARGS]{json}`` — the same with the model's call id (tokenizers from v13 on),
  which is the call's id. A call without one gets a fresh id of the form Mistral's tokenizers
  accept (nine letters or digits: `formats.mistral.new_call_id`), so that a conversation sent
  back to a Mistral model with our ids is not refused.

Text before ``[TOOL_CALLS]`` and after a completed call/array is content.

Malformed output (builtin policy, see `scan`):

* a ``[TOOL_CALLS]`` not followed by a readable name (plain text, an empty array, an element
  without a string "name") stays in the content verbatim, from the marker on; inside an
  array, an unnamed element and everything after it are content;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`);
* an array element that breaks after its name: the call is kept with what was read and the
  rest of the output is content (no end marker to resync on);
* a ``[TOOL_CALLS]`` outside strings inside a call ends that call (as if truncated);
* end of output inside a call: no call, its text is text (`whole_calls`).

`format_tool_result`: ``[TOOL_RESULTS]{"call_id": ID, "content": RESULT}[/TOOL_RESULTS]``
(the v3 tokenizer's tool-result message; RESULT is the string, or the JSON value).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats.mistral import ARGS, CALL_ID, TOOL_CALLS
from ...formats.mistral import format_tool_result as _format_tool_result
from ...formats.mistral import new_call_id as new_mistral_call_id
from .engines.json_text import ArgsScan
from .engines.scan import (
    BROKEN,
    CLOSED,
    DONE,
    MARKER,
    MORE,
    BuiltinToolStream,
    JsonRaw,
    ObjectReader,
    match_marker,
)
from .engines.tool_parser import BuiltinToolParser

_MARKERS = (TOOL_CALLS,)
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]+")

_OUTSIDE, _AFTER_TAG, _NAME, _ARGS_WAIT, _ARGS, _ARRAY_WAIT, _ELEMENT, _SINGLE, _CALL_ID = range(9)
#: What a name is followed by in the v11+ form: its arguments, or (v13+) the model's call id first.
_AFTER_NAME = (ARGS, CALL_ID)


class MistralToolStream(BuiltinToolStream):
    """Incremental mistral machine (array, single object or name{json} forms)."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _OUTSIDE
        self._name: list[str] = []
        self._raw = JsonRaw(_MARKERS)  # (one per stream, reset per call: `_args_mode` holds it)
        self._args_mode: ArgsScan | None = None  # (made at a stream's first call: `parse` never asks)
        self._reader = ObjectReader(_MARKERS)
        self._call_id = ""  # the id the model wrote after [CALL_ID] (v13+), for the next call
        self._array_calls = 0

    def _fast_mode(self) -> Any:
        """A v11+ call's arguments: a chunk the scanner consumes whole is only `_args(chunk)`
        (`ArgsScan`); an object call's: the reader's mode (`ObjectReader.fast_mode`)."""
        state = self._state
        if state == _ARGS:
            mode = self._args_mode
            if mode is None:
                mode = self._args_mode = ArgsScan(self._raw, _MARKERS, "", True)
            return mode
        return self._reader.fast_mode() if state in (_ELEMENT, _SINGLE) else None

    def _to_outside(self) -> bool:
        self._state = _OUTSIDE
        return True

    def _fail(self) -> bool:
        """Not a call after all: the undecided text is content; continue outside."""
        self._reject(self._pos)
        return self._to_outside()

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _OUTSIDE:
            if self._outside(_MARKERS) is None:
                return False
            self._begin_span(self._pos)
            self._pos += len(TOOL_CALLS)
            self._state = _AFTER_TAG
            return True
        if state == _AFTER_TAG:
            return self._after_tag_step(buf)
        if state == _NAME:
            return self._name_step(buf)
        if state == _ARGS_WAIT:
            if not self._skip_ws():
                return False
            self._raw.reset()
            self._state = _ARGS
            return True
        if state == _ARGS:
            start = self._pos
            end, why = self._raw.scan(buf, start, _MARKERS, self._final, stop_at_close=True)
            self._args(buf[start:end])
            self._pos = end
            if why in (CLOSED, MARKER):
                self._end_call(self._pos)
                return self._to_outside()
            return False
        if state == _ARRAY_WAIT:
            return self._array_step(buf)
        if state == _CALL_ID:
            return self._call_id_step(buf)
        # _ELEMENT / _SINGLE
        r = self._reader.step(self)
        if r == DONE and self._in_call:
            index = self._index
            self._end_call(self._pos)
            if state == _SINGLE:
                return self._to_outside()
            if self._index != index and not self._array_calls:  # (no call: `whole_calls`; the rest is text)
                return self._to_outside()
            self._array_calls += self._index == index
            self._state = _ARRAY_WAIT
            return True
        if r in (DONE, BROKEN, MARKER):
            if self._in_call:
                self._call_broken = r != DONE  # (an object that never closed: no call, `whole_calls`)
                self._end_call(self._pos)
                return self._to_outside()
            return self._fail()
        return False

    def _array_step(self, buf: str) -> bool:
        """In the array, before an element or after a call: an object, a comma, or the array ends."""
        if self._array_calls:
            self._begin_span(self._pos)  # separators: structure if a call follows, else content
        if not self._skip_ws():
            return False
        c = buf[self._pos]
        if c == "{":
            self._pos += 1
            self._reader = ObjectReader(_MARKERS)
            self._state = _ELEMENT
        elif c == "," and self._array_calls:
            self._pos += 1
        elif c == "]" and self._array_calls:
            self._pos += 1
            self._drop_span()
            self._structure()
            return self._to_outside()
        else:
            return self._fail()
        return True

    def _commit(self, name: str, call_start: int | None = None, call_id: str | None = None) -> None:
        super()._commit(name, call_start, call_id or new_mistral_call_id())

    def _name_step(self, buf: str) -> bool:
        """A v11+ call's name, up to its arguments (an object, or [ARGS] before it)."""
        if not self._take_run(_NAME_RUN, self._name):
            return False
        if buf[self._pos] == "{":
            self._commit("".join(self._name))
            self._raw.reset()
            self._state = _ARGS
            return True
        found = match_marker(buf, self._pos, _AFTER_NAME, self._final)
        if found == MORE:
            return False
        if found == CALL_ID:
            self._pos += len(CALL_ID)
            self._state = _CALL_ID
            return True
        if found == ARGS:
            return self._open_args()
        return self._fail()

    def _open_args(self) -> bool:
        """``[ARGS]`` after the name (and the model's call id): the call is named, its arguments follow."""
        call_id, self._call_id = self._call_id, ""
        self._commit("".join(self._name), call_id=call_id or None)
        self._pos += len(ARGS)
        self._state = _ARGS_WAIT
        return True

    def _call_id_step(self, buf: str) -> bool:
        """The model's call id (v13+), up to ``[ARGS]``: the call's id; anything else is no call."""
        m = _NAME_RUN.match(buf, self._pos)
        if m:
            self._call_id += m.group()
            self._pos = m.end()
        if self._pos == len(buf) and not self._final:
            return False
        found = match_marker(buf, self._pos, (ARGS,), self._final)
        if found == MORE:
            return False
        if found == ARGS:
            return self._open_args()
        return self._fail()

    def _after_tag_step(self, buf: str) -> bool:
        """After [TOOL_CALLS]: an array, one object, or a name (the v11+ form) opens."""
        found = self._marker_past_ws(_MARKERS)
        if found == MORE:
            return False
        if found is not None:
            return self._fail()
        c = buf[self._pos]
        if c == "[":
            self._pos += 1
            self._array_calls = 0
            self._state = _ARRAY_WAIT
        elif c == "{":
            self._pos += 1
            self._reader = ObjectReader(_MARKERS)
            self._state = _SINGLE
        elif _NAME_RUN.match(c):
            self._name = []
            self._state = _NAME
        else:
            return self._fail()
        return True

    def _at_end(self) -> None:
        if self._state == _ARRAY_WAIT and self._array_calls:
            self._drop_span()  # an unclosed array after complete calls: separators are structure


class MistralToolParser(BuiltinToolParser):
    """Mistral ``[TOOL_CALLS]`` calls (builtin, incremental)."""

    name = "mistral"
    markers: ClassVar[tuple[str, ...]] = (TOOL_CALLS, ARGS, CALL_ID)
    stream_class = MistralToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``[TOOL_RESULTS]{"call_id": …, "content": …}[/TOOL_RESULTS]`` (Mistral v3 tokenizer)."""
        return _format_tool_result(tool_call_id, result)

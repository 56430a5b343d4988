"""Qwen3-Coder XML-ish tool calls.

Format::

    <tool_call>
    <function=NAME>
    <parameter=P>
    VALUE
    </parameter>
    </function>
    </tool_call>

Value rule: a value is the text between ``<parameter=P>`` and ``</parameter>``
(a missing ``</parameter>`` is tolerated: the next ``<parameter=`` or
``</function>`` ends it; ``<tool_call>``/``</tool_call>`` inside a value are
plain text, so a value may hold such markers) with ONE leading and ONE trailing
newline removed. Then:

* P declared in `tools` with a JSON-schema type that includes "string" → the text as is;
* P declared with other types (integer, number, boolean, object, array, null) → ``json.loads``
  of the stripped text when it is valid JSON, else the text as a string;
* P undeclared (or declared without a type) → obvious JSON literals (numbers, true/false/null,
  objects, arrays) are decoded, anything else stays a string.

NaN/Infinity are never decoded (they are not JSON). Repeated parameters produce
repeated keys in the arguments JSON; the last one wins when parsed.

Streaming builds the arguments JSON incrementally and prefix-stably: ``{`` and
``"P": `` as soon as a parameter opens; string-typed values stream as JSON
string fragments (a trailing newline is held until we know it is not the
last one); other values are emitted when their parameter closes. The call is
announced when ``<function=NAME>`` is complete.

Malformed output (builtin policy, see `_scan`): a block without a readable
``<function=NAME>`` stays in the content verbatim; stray text between
parameters (not a tag), or between ``</function>`` and ``</tool_call>``
(unless only whitespace), is not part of the call: it is shown as content,
in place, verbatim (nothing is lost); ``</tool_call>`` without ``</function>``
closes the arguments object normally, and so does a new ``<tool_call>``. At end of output inside a call, an open
parameter is finished (as if closed) but the object is not, so the arguments
text is flagged unless no parameter had started (then ``{}``).

`format_tool_result`: ``<tool_response>\\n{result}\\n</tool_response>``, as the
Qwen3-Coder chat template renders a tool message (no id in this format).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ...formats.qwen3_coder import END, FN, FN_END, PARAM, PARAM_END, START
from ...formats.qwen3_coder import format_tool_result as _format_tool_result
from ...protocol.parsers import ToolSpec
from ._scan import (
    JSON_WS,
    MORE,
    BuiltinToolParser,
    BuiltinToolStream,
    find_markers,
    match_marker,
    safe_end,
)
from ._values import convert_value, schema_types

__all__ = ["Qwen3CoderToolParser", "convert_value", "schema_types"]

_IN_CALL = (PARAM, FN_END, END, START)
_VALUE_ENDS = (PARAM_END, PARAM, FN_END)
_TAIL_ENDS = (END, START)

_CONTENT, _WAIT_FN, _FN_NAME, _OPAQUE, _PARAMS, _PNAME, _PVALUE, _TAIL, _STRAY = range(9)
_HEAD_END = re.compile(r"[>\n<]")


class Qwen3CoderToolStream(BuiltinToolStream):
    """Incremental Qwen3-Coder machine; builds the arguments JSON as parameters arrive."""

    def __init__(self, parser: Qwen3CoderToolParser) -> None:
        super().__init__(parser)
        self._types_by_fn = parser.param_types
        self._state = _CONTENT
        self._head: list[str] = []
        self._tail: list[str] = []
        self._types: dict[str, frozenset[str]] = {}
        self._opened = False
        self._vtypes: frozenset[str] | None = None
        self._vstream = False
        self._vfirst = True
        self._vheld = ""
        self._vparts: list[str] = []

    def _close_object(self) -> None:
        self._args("}" if self._opened else "{}", hold_ws=False)
        self._opened = True

    def _flush_tail(self) -> None:
        """Text between ``</function>`` and ``</tool_call>``: shown as content unless only whitespace."""
        tail = "".join(self._tail)
        self._tail = []
        if tail.strip():
            self._inline_content(tail)

    def _end_block(self, marker: str, consumed: bool) -> None:
        """At END/START inside a call: close it (or reject an unnamed block)."""
        self._flush_tail()
        if marker == END and not consumed:
            self._pos += len(END)
        if self._in_call:
            if self._state != _TAIL:
                self._close_object()
            self._end_call(self._pos)
        else:
            self._reject(self._pos)
        self._state = _CONTENT

    def _value(self, piece: str) -> None:
        if not piece:
            return
        if self._vfirst:
            self._vfirst = False
            if piece.startswith("\n"):
                piece = piece[1:]
        piece = self._vheld + piece
        self._vheld = ""
        if piece.endswith("\n"):
            piece, self._vheld = piece[:-1], "\n"
        if not piece:
            return
        if self._vstream:
            self._args(json.dumps(piece, ensure_ascii=False)[1:-1], hold_ws=False)
        else:
            self._vparts.append(piece)

    def _finish_value(self) -> None:
        self._vheld = ""
        if self._vstream:
            self._args('"', hold_ws=False)
        else:
            value = convert_value("".join(self._vparts), self._vtypes)
            self._vparts = []
            self._args(json.dumps(value, ensure_ascii=False), hold_ws=False)
        self._state = _PARAMS

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _CONTENT:
            if self._outside((START,)) is None:
                return False
            self._begin_span(self._pos)
            self._pos += len(START)
            self._state = _WAIT_FN
            return True
        if state in (_WAIT_FN, _PARAMS):
            if not self._skip_ws():
                return False
            markers = (FN, END, START) if state == _WAIT_FN else _IN_CALL
            found = match_marker(buf, self._pos, markers, self._final)
            if found == MORE:
                return False
            if found in (END, START):
                self._end_block(found, consumed=False)
            elif found == FN:
                self._pos += len(FN)
                self._head = []
                self._state = _FN_NAME
            elif found == PARAM:
                self._pos += len(PARAM)
                self._head = []
                self._state = _PNAME
            elif found == FN_END:
                self._pos += len(FN_END)
                self._close_object()
                self._state = _TAIL
            elif state == _WAIT_FN:
                self._state = _OPAQUE
            else:  # stray text between parameters: shown as content, up to the next tag
                self._inline_content(buf[self._pos])
                self._pos += 1
                self._state = _STRAY
            return True
        if state == _STRAY:
            j = buf.find("<", self._pos)
            end = len(buf) if j < 0 else j
            self._inline_content(buf[self._pos : end])
            self._pos = end
            if j < 0:
                return False
            self._state = _PARAMS
            return True
        if state in (_FN_NAME, _PNAME):
            m = _HEAD_END.search(buf, self._pos)
            if m is None:
                self._head.append(buf[self._pos :])
                self._pos = len(buf)
                return False
            j = m.start()
            self._head.append(buf[self._pos : j])
            head = "".join(self._head).strip(JSON_WS)
            self._head = []
            if buf[j] != ">" or not head:
                self._pos = j
                self._state = _OPAQUE if state == _FN_NAME else _PARAMS
                return True
            self._pos = j + 1
            if state == _FN_NAME:
                self._commit(head)
                self._types = self._types_by_fn.get(head, {})
                self._opened = False
            else:
                self._open_value(head)
            self._state = _PARAMS if state == _FN_NAME else _PVALUE
            return True
        if state == _PVALUE:
            j, which = find_markers(buf, self._pos, _VALUE_ENDS)
            if which is None:
                end = safe_end(buf, self._pos, _VALUE_ENDS, self._final)
                self._value(buf[self._pos : end])
                self._pos = end
                return False
            self._value(buf[self._pos : j])
            self._pos = j + (len(PARAM_END) if which == PARAM_END else 0)
            self._finish_value()
            return True
        # _OPAQUE / _TAIL: look for the block's end; the text in between is kept (span / tail)
        j, which = find_markers(buf, self._pos, _TAIL_ENDS)
        stop = j if which is not None else safe_end(buf, self._pos, _TAIL_ENDS, self._final)
        if state == _TAIL:
            self._tail.append(buf[self._pos : stop])
        self._pos = stop
        if which is None:
            return False
        self._end_block(which, consumed=False)
        return True

    def _open_value(self, pname: str) -> None:
        self._args(
            ("{" if not self._opened else ", ") + json.dumps(pname, ensure_ascii=False) + ": ", hold_ws=False
        )
        self._opened = True
        self._vtypes = self._types.get(pname)
        self._vstream = bool(self._vtypes) and "string" in (self._vtypes or ())
        if self._vstream:
            self._args('"', hold_ws=False)
        self._vfirst = True
        self._vheld = ""
        self._vparts = []

    def _at_end(self) -> None:
        if self._state == _PVALUE and self._in_call:
            self._finish_value()
        self._flush_tail()


class Qwen3CoderToolParser(BuiltinToolParser):
    """Qwen3-Coder ``<function=…><parameter=…>`` calls (builtin, incremental)."""

    name = "qwen3_coder"
    markers: ClassVar[tuple[str, ...]] = (START, END, FN, FN_END, PARAM, PARAM_END)
    stream_class = Qwen3CoderToolStream

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.param_types = schema_types(self.tools)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``<tool_response>\\n…\\n</tool_response>`` as the Qwen3-Coder template renders it."""
        return _format_tool_result(tool_call_id, result)

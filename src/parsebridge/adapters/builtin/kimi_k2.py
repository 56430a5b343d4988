"""Kimi K2 tool calls: a section of ``functions.NAME:IDX`` calls with raw JSON arguments.

::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>
    <|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>
    <|tool_calls_section_end|>

The call id is ``functions.NAME:IDX``; the name is the id without the
``functions.`` prefix and the ``:IDX`` suffix (``NAME:IDX`` and a bare
``NAME`` are read too). The name is announced at
``<|tool_call_argument_begin|>``; arguments stream raw up to their closing
brace. A ``<|tool_call_begin|>`` without the section marker is accepted.

Malformed output (builtin policy, see `_scan`):

* section and call markers with whitespace between them are structure; other text between
  calls inside a section is content;
* a call whose id yields no name (empty, or a bare counter such as ``3`` — SGLang guesses
  the name from the tools' parameter keys; we do not guess) stays in the content verbatim,
  markers included; a section without any named call is content too;
* arguments that are not a JSON object → call kept, ``invalid_arguments`` = the raw text;
  text after the arguments' closing brace up to ``<|tool_call_end|>`` is ignored;
* a new call/section marker inside a call ends it (as if truncated);
* end of output inside a call: named → kept, arguments flagged unless complete; unnamed →
  content.

`format_tool_result`: the Kimi K2 chat template renders a tool message as
``## Return of {tool_call_id}\\n{result}`` inside the tool turn.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats.kimi_k2 import ARG_BEGIN, CALL_BEGIN, CALL_END, SECTION_BEGIN, SECTION_END
from ...formats.kimi_k2 import format_tool_result as _format_tool_result
from ._scan import (
    CLOSED,
    MARKER,
    MORE,
    BuiltinToolParser,
    BuiltinToolStream,
    JsonRaw,
    find_markers,
    match_marker,
    safe_end,
)

_BREAKERS = (CALL_END, CALL_BEGIN, SECTION_END, SECTION_BEGIN)
_HEAD_ENDS = (ARG_BEGIN, *_BREAKERS)
_INDEX = re.compile(r":\s*\d+\s*$")

_OUTSIDE, _HEAD, _ARGS_WAIT, _ARGS, _TAIL = range(5)


def name_from_id(call_id: str) -> str | None:
    """``functions.NAME:IDX`` → NAME (None when nothing name-like is left)."""
    head = _INDEX.sub("", call_id.strip()).strip()
    if head.startswith("functions."):
        head = head[len("functions.") :]
    if not head or head.isdigit() or any(c.isspace() for c in head):
        return None
    return head


class KimiK2ToolStream(BuiltinToolStream):
    """Incremental Kimi K2 machine."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _OUTSIDE
        self._in_section = False
        self._section_named = False
        self._head: list[str] = []
        self._raw = JsonRaw(_BREAKERS)

    def _outside_markers(self) -> tuple[str, ...]:
        if self._in_section:
            return (SECTION_BEGIN, CALL_BEGIN, SECTION_END)
        return (SECTION_BEGIN, CALL_BEGIN)

    def _stop_call(self, marker: str) -> None:
        """At a breaker marker inside a call (cursor on it)."""
        if marker == CALL_END:
            self._pos += len(CALL_END)
        if self._in_call:
            self._end_call(self._pos)
        else:
            self._reject(self._pos)
        self._state = _OUTSIDE

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _OUTSIDE:
            markers = self._outside_markers()
            if self._span is not None:  # a section whose first call is not decided yet
                j, which = find_markers(buf, self._pos, markers)
                stop = j if which is not None else safe_end(buf, self._pos, markers, self._final)
                if buf[self._pos : stop].strip():
                    self._reject(self._pos)
                    return True
                self._pos = stop
            else:
                which = self._outside(markers)
            if which is None:
                return False
            if which == SECTION_END:
                self._pos += len(SECTION_END)
                self._in_section = False
                if self._section_named:
                    self._structure()
                elif self._span is not None:
                    self._reject(self._pos)
                else:
                    self._content(SECTION_END)
                return True
            self._begin_span(self._pos)
            self._pos += len(which)
            if which == SECTION_BEGIN:
                if not self._in_section or not self._section_named:
                    self._in_section = True
                    self._section_named = False
            else:
                self._head = []
                self._state = _HEAD
            return True
        if state == _HEAD:
            j, which = find_markers(buf, self._pos, _HEAD_ENDS)
            stop = j if which is not None else safe_end(buf, self._pos, _HEAD_ENDS, self._final)
            self._head.append(buf[self._pos : stop])
            self._pos = stop
            if which is None:
                return False
            if which != ARG_BEGIN:
                self._stop_call(which)
                return True
            self._pos += len(ARG_BEGIN)
            name = name_from_id("".join(self._head))
            if name is None:
                self._state = _TAIL
            else:
                self._commit(name)
                self._section_named = self._section_named or self._in_section
                self._state = _ARGS_WAIT
            return True
        if state == _ARGS_WAIT:
            if not self._skip_ws():
                return False
            found = match_marker(buf, self._pos, _BREAKERS, self._final)
            if found == MORE:
                return False
            if found is not None:
                self._stop_call(found)
                return True
            self._raw = JsonRaw(_BREAKERS)
            self._state = _ARGS
            return True
        if state == _ARGS:
            start = self._pos
            end, why = self._raw.scan(buf, start, _BREAKERS, self._final, stop_at_close=True)
            self._args(buf[start:end])
            self._pos = end
            if why == CLOSED:
                self._state = _TAIL
                return True
            if why == MARKER:
                assert self._raw.marker is not None
                self._stop_call(self._raw.marker)
                return True
            return False
        # _TAIL: named → ignore up to the call end; unnamed → content at the call end
        j, which = find_markers(buf, self._pos, _BREAKERS)
        if which is None:
            self._pos = safe_end(buf, self._pos, _BREAKERS, self._final)
            return False
        self._pos = j
        self._stop_call(which)
        return True

    def _at_end(self) -> None:
        if self._state == _OUTSIDE and self._span is not None and self._section_named:
            self._drop_span()


class KimiK2ToolParser(BuiltinToolParser):
    """Kimi K2 ``functions.NAME:IDX`` tool-call sections (builtin, incremental)."""

    name = "kimi_k2"
    markers: ClassVar[tuple[str, ...]] = (SECTION_BEGIN, CALL_BEGIN, ARG_BEGIN, CALL_END, SECTION_END)
    stream_class = KimiK2ToolStream

    def has_tool_calls(self, text: str) -> bool:
        return SECTION_BEGIN in text or CALL_BEGIN in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``## Return of {id}\\n{result}`` as the Kimi K2 chat template renders a tool message."""
        return _format_tool_result(tool_call_id, result)

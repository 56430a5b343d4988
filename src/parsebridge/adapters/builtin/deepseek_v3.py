"""DeepSeek V3 / V3.1 tool calls (note the fullwidth ｜ and the ▁ characters).

V3::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {...}
    ```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>

V3.1 body: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``
(no "function" type, no code fence). A head of exactly ``function`` followed
by a JSON object right after the separator is read as V3.1 with a tool named
"function". A bare ``<｜tool▁call▁begin｜>`` without the section marker is
accepted too. The name is announced at the end of the name line (V3) or at
``<｜tool▁sep｜>`` (V3.1); arguments stream raw up to their closing brace.

Malformed output (builtin policy, see `_scan`):

* section and call markers with whitespace between them are structure; other text between
  calls inside a section is content;
* a call without a readable name (no separator, empty name) stays in the content verbatim,
  markers included; if the section holds no named call, its markers are content too;
* arguments that are not a JSON object → call kept, ``invalid_arguments`` = the raw text
  (fence and surrounding whitespace excluded); text after the arguments' closing brace up
  to ``<｜tool▁call▁end｜>`` (the closing fence, junk) is ignored;
* a new call/section-end marker inside a call ends it (as if truncated);
* end of output inside a call: named → kept, arguments flagged unless complete; unnamed →
  content (from the section marker, when no call of the section was named).

`format_tool_result`: ``<｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>`` — one tool
output as the DeepSeek V3 template renders it (it wraps consecutive outputs in
``<｜tool▁outputs▁begin｜>…<｜tool▁outputs▁end｜>``; no id in this format).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats.deepseek_v3 import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, SEP
from ...formats.deepseek_v3 import format_tool_result as _format_tool_result
from ._scan import (
    CLOSED,
    MARKER,
    MORE,
    ArgsScan,
    BuiltinToolParser,
    BuiltinToolStream,
    JsonRaw,
    content_mode,
    find_markers,
    match_marker,
    safe_end,
)

_BREAKERS = (CALL_END, CALL_BEGIN, CALLS_END, CALLS_BEGIN)
_HEAD_ENDS = (SEP, *_BREAKERS)
_NAME_END = re.compile(r"[\n`{<]")
_FENCE = re.compile(r"```[A-Za-z]*")
_NON_WS = re.compile(r"[^ \t\r\n]")
#: Every marker starts with it: text without it holds no marker and no marker prefix.
_LT = "<"
assert all(m.startswith(_LT) for m in (*_HEAD_ENDS, CALLS_BEGIN))
_CONTENT_MODE = content_mode(_LT)

_OUTSIDE, _HEAD, _NAME_LINE, _ARGS_WAIT, _ARGS, _TAIL, _OPAQUE = range(7)


class DeepSeekV3ToolStream(BuiltinToolStream):
    """Incremental DeepSeek V3/V3.1 machine."""

    _idle_when_empty = True  # every state's step on an empty rest: nothing, False

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _OUTSIDE
        self._in_section = False
        self._section_named = False
        self._head: list[str] = []
        self._typed = False
        self._raw = JsonRaw(_BREAKERS)
        self._args_mode: ArgsScan = (self._raw, _BREAKERS, "", True)

    def _outside_markers(self) -> tuple[str, ...]:
        return (CALLS_BEGIN, CALL_BEGIN, CALLS_END) if self._in_section else (CALLS_BEGIN, CALL_BEGIN)

    def _stop_call(self, marker: str) -> None:
        """At a breaker marker inside a call (cursor on it)."""
        if marker == CALL_END:
            self._pos += len(CALL_END)
        if self._in_call:
            self._end_call(self._pos)
        else:
            self._reject(self._pos)
        self._state = _OUTSIDE

    def _name_known(self, name: str) -> None:
        self._commit(name)
        self._section_named = self._section_named or self._in_section
        self._state = _ARGS_WAIT

    def _fast_mode(self) -> Any:
        state = self._state
        if state == _OUTSIDE:
            return _CONTENT_MODE  # both outside marker sets start with "<"
        return self._args_mode if state == _ARGS else None

    def _step(self) -> bool:
        state, buf, pos = self._state, self._buf, self._pos
        if state == _ARGS:
            end, why = self._raw.scan(buf, pos, _BREAKERS, self._final, stop_at_close=True)
            self._args(buf[pos:end])
            self._pos = end
            if why == CLOSED:
                self._state = _TAIL
                return True
            if why == MARKER:
                assert self._raw.marker is not None
                self._stop_call(self._raw.marker)
                return True
            return False
        if state == _NAME_LINE:
            m = _NAME_END.search(buf, pos)
            if m is None:
                self._head.append(buf[pos:])
                self._pos = len(buf)
                return False
            stop = m.start()
            self._head.append(buf[pos:stop])
            self._pos = stop
            name = "".join(self._head).strip()
            c = buf[stop]
            if c == "<":
                found = match_marker(buf, stop, _BREAKERS, self._final)
                if found == MORE:
                    return False
                if found is None:  # a '<' inside the name line: keep reading
                    self._head.append("<")
                    self._pos += 1
                    return True
            if name:
                self._name_known(name)
            elif self._typed and c == "{":
                self._name_known("function")
            else:
                self._state = _OPAQUE
            return True
        if state == _ARGS_WAIT:
            m = _NON_WS.search(buf, pos)
            if m is None:
                self._pos = len(buf)
                return False
            pos = self._pos = m.start()
            c = buf[pos]
            if c == "`":
                if len(buf) - pos < 3 and not self._final:
                    return False
                m = _FENCE.match(buf, pos)
                if m is not None:
                    if m.end() == len(buf) and not self._final:
                        return False  # the language tag may go on
                    self._pos = m.end()
                    return True
            elif c == _LT:
                found = match_marker(buf, pos, _BREAKERS, self._final)
                if found == MORE:
                    return False
                if found is not None:
                    self._stop_call(found)
                    return True
            self._raw.reset()  # `_args_mode` holds this scanner
            self._state = _ARGS
            return True
        if buf.find(_LT, pos) < 0:  # no marker and no marker prefix in the rest
            if state == _OUTSIDE:
                if self._span is None:
                    self._content(buf[pos:])
                elif buf[pos:].strip():
                    self._reject(pos)
                    return True
            elif state == _HEAD:
                self._head.append(buf[pos:])
            self._pos = len(buf)
            return False
        if state == _OUTSIDE:
            markers = self._outside_markers()
            if self._span is not None:  # a section whose first call is not decided yet
                j, which = find_markers(buf, pos, markers)
                stop = j if which is not None else safe_end(buf, pos, markers, self._final)
                gap = buf[pos:stop]
                if gap.strip():
                    self._reject(pos)
                    return True
                self._pos = stop
            else:
                which = self._outside(markers)
            if which is None:
                return False
            if which == CALLS_END:
                self._pos += len(CALLS_END)
                self._in_section = False
                if self._section_named:
                    self._structure()
                elif self._span is not None:
                    self._reject(self._pos)
                else:
                    self._content(CALLS_END)
                return True
            self._begin_span(self._pos)
            self._pos += len(which)
            if which == CALLS_BEGIN:
                if not self._in_section or not self._section_named:
                    self._in_section = True
                    self._section_named = False
            else:
                self._head = []
                self._state = _HEAD
            return True
        if state == _HEAD:
            j, which = find_markers(buf, pos, _HEAD_ENDS)
            stop = j if which is not None else safe_end(buf, pos, _HEAD_ENDS, self._final)
            self._head.append(buf[pos:stop])
            self._pos = stop
            if which is None:
                return False
            if which != SEP:
                self._stop_call(which)
                return True
            self._pos += len(SEP)
            head = "".join(self._head).strip()
            if head in ("", "function"):
                self._head = []
                self._typed = head == "function"
                self._state = _NAME_LINE
            else:
                self._name_known(head)
            return True
        # _TAIL (named: ignore up to the call end) / _OPAQUE (unnamed: content at the call end)
        j, which = find_markers(buf, pos, _BREAKERS)
        if which is None:
            self._pos = safe_end(buf, pos, _BREAKERS, self._final)
            return False
        self._pos = j
        self._stop_call(which)
        return True

    def _at_end(self) -> None:
        if self._state == _OUTSIDE and self._span is not None and self._section_named:
            self._drop_span()


class DeepSeekV3ToolParser(BuiltinToolParser):
    """DeepSeek V3 / V3.1 tool calls (builtin, incremental)."""

    name = "deepseek_v3"
    markers: ClassVar[tuple[str, ...]] = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)
    stream_class = DeepSeekV3ToolStream

    def has_tool_calls(self, text: str) -> bool:
        return CALLS_BEGIN in text or CALL_BEGIN in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``<｜tool▁output▁begin｜>…<｜tool▁output▁end｜>`` as the DeepSeek V3 template renders one output."""
        return _format_tool_result(tool_call_id, result)


class DeepSeekV31ToolParser(DeepSeekV3ToolParser):
    """DeepSeek V3.1 ``NAME<｜tool▁sep｜>{json}`` calls: the V3 machine, which reads both bodies."""

    name = "deepseek_v31"

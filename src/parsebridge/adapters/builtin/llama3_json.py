"""Llama 3.x JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": {...}}; {...}``.

An optional leading ``<|python_tag|>``, then one or more JSON objects with a
string "name" and "parameters" (or "arguments"), separated by ``;`` and/or
whitespace (another ``<|python_tag|>`` between objects is accepted too).
The calls may also stand in a JSON array (``[{…}, {…}]``, as Llama 3.2 writes parallel
calls; vLLM reads them, SGLang shows the text): its brackets and commas are structure.
Calls may follow prose: ``Sure. <|python_tag|>{…}`` (vLLM and SGLang both
read the call), and a bare call object after text (``{call}\nAnd the time:\n
{call}``: both read the second call too). The first thing that is not a call
object ends a run of calls; the rest is content verbatim up to the next
``<|python_tag|>`` or ``{``, and a ``{`` that does not open a named call
object is content.

Malformed output (builtin policy, see `scan`):

* separators (whitespace and ``;``) between calls, and after the last call at end of output,
  are structure; when content follows the last call they stay in the content verbatim;
* an object with no string "name" (e.g. a plain JSON answer) is content verbatim, and so is
  one with a "name", no arguments and other keys (``{"name": "Alice", "age": 30}``: a JSON
  answer about something named, as both servers read it; ``{"name": "f"}`` alone is a call);
  ``<|python_tag|>`` followed by non-JSON (code) is content;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`);
* an object that breaks after its name (there is no end marker to resync on): no call
  (`whole_calls`), and the rest of the output is content;
* end of output inside an object: no call, its text is text (`whole_calls`); unnamed → content.

`format_tool_result`: the tool result as the content of an ``ipython`` message, as the
Llama 3.1 template renders it: a string result verbatim, anything else as JSON (no id:
the format has none).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats._base import result_text
from ...formats.llama3_json import TAG
from .engines.scan import (
    BROKEN,
    DONE,
    MORE,
    BuiltinToolStream,
    ObjectReader,
    content_mode,
    match_marker,
)
from .engines.tool_parser import BuiltinToolParser

_CONTENT_MODE = content_mode(TAG[0] + "{")
_NAMED_OBJECT = re.compile(r'\{\s*"name"\s*:')
_START, _TAG_WAIT, _OBJECT, _SEP, _CONTENT = range(5)


class Llama3JsonToolStream(BuiltinToolStream):
    """Incremental llama3_json machine: leading call objects, then content."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _START
        self._reader = ObjectReader(())
        self._array = False  # inside a ``[`` that opened a list of calls

    def _open_object(self) -> None:
        self._begin_span(self._pos)
        self._pos += 1
        self._reader = ObjectReader(())
        self._state = _OBJECT

    def _fast_mode(self) -> Any:
        state = self._state
        if state == _CONTENT:
            return _CONTENT_MODE  # content up to a possible ``<|python_tag|>`` or ``{``
        return self._reader.fast_mode() if state == _OBJECT else None

    def _step(self) -> bool:
        state = self._state
        if state == _CONTENT:
            # prose: content up to a ``<|python_tag|>`` or a ``{`` that may open a call object
            found = self._outside((TAG, "{"))
            if found is None:
                return False
            if found == "{":
                self._open_object()
                return True
            self._begin_span(self._pos)
            self._pos += len(TAG)
            self._state = _TAG_WAIT
            return True
        if state in (_START, _SEP, _TAG_WAIT):
            return self._between_calls(state)
        return self._object_step()

    def _between_calls(self, state: int) -> bool:
        """At the start, after a tag or a call: a call object, a list of them, a separator or a
        tag follows; anything else makes the undecided text content."""
        buf = self._buf
        if state == _SEP:
            self._begin_span(self._pos)
        start = self._pos
        more = self._skip_ws()
        if state == _START:
            self._content(buf[start : self._pos])
        if not more:
            return False
        c = buf[self._pos]
        if c == "{":
            self._open_object()
            return True
        if state == _SEP and (c == ";" or (c == "," and self._array)):
            self._pos += 1
            return True
        if state == _SEP and c == "]" and self._array:  # the list's end: structure
            self._pos += 1
            self._drop_span()
            self._array = False
            return True
        if c == "[" and state != _SEP and not self._array:  # a list of calls (or a JSON answer)
            self._begin_span(self._pos)
            self._pos += 1
            self._array = True
            self._state = _TAG_WAIT  # (a call object must follow: else it is all content)
            return True
        if state != _TAG_WAIT:
            found = match_marker(buf, self._pos, (TAG,), self._final)
            if found == MORE:
                return False
            if found == TAG:
                self._begin_span(self._pos)
                self._pos += len(TAG)
                self._state = _TAG_WAIT
                return True
        self._reject(self._pos)
        self._state = _CONTENT
        self._array = False
        return True

    def _object_step(self) -> bool:
        r = self._reader.step(self)
        if r == DONE and self._in_call and not self._reader.answer_like:
            self._end_call(self._pos)
            self._state = _SEP
        elif r in (DONE, BROKEN):
            if self._in_call:
                self._call_broken = True  # (the object broke, or is a JSON answer: no call, `whole_calls`)
                self._end_call(self._pos)
            else:
                self._reject(self._pos)
            self._state = _CONTENT
            self._array = False
        else:
            return False
        return True

    def _at_end(self) -> None:
        if self._state == _SEP:
            self._drop_span()  # trailing separators after the last call are structure


class Llama3JsonToolParser(BuiltinToolParser):
    """Llama 3.x JSON tool calls (builtin, incremental)."""

    name = "llama3_json"
    markers: ClassVar[tuple[str, ...]] = (TAG,)
    stream_class = Llama3JsonToolStream

    def has_tool_calls(self, text: str) -> bool:
        """A ``<|python_tag|>``, or an object opening with ``"name"``, anywhere (calls may follow prose)."""
        return TAG in text or _NAMED_OBJECT.search(text) is not None

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The ``ipython`` message content: a string verbatim, anything else as JSON."""
        return result_text(result)

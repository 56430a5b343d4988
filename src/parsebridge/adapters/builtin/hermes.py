"""Hermes / Qwen2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

One or more blocks; "parameters" is accepted as a synonym of "arguments".
Streaming announces the call when its "name" string closes and streams the
raw text of the arguments value as it arrives (JSON string state is tracked,
so ``</tool_call>`` inside an argument string does not end the call).

Malformed output (builtin policy, see `_scan`):

* whitespace between/around calls is structure; other text outside blocks is content;
* a block whose JSON yields no string "name" (not JSON, no name) stays in the content verbatim,
  markers included;
* arguments that are not a JSON object → call kept, ``invalid_arguments`` = the raw value text;
* a body that breaks after the name was read: if the arguments had not started, the raw
  rest of the body (up to ``</tool_call>``) is the flagged arguments text; if they were
  complete, the rest is ignored. Text between the object's closing brace and
  ``</tool_call>`` is ignored too (a stray extra ``}`` is common);
* an arguments value cut by ``</tool_call>`` (missing braces) or by the end of output is
  kept as flagged text, unless it already is a complete object;
* a ``<tool_call>`` outside strings inside a block ends that block (as if truncated).

`format_tool_result`: ``<tool_response>\\n{result}\\n</tool_response>`` — what the Qwen2.5 /
Hermes chat templates render for a tool message (no id: the format has none; a non-string
result is JSON-encoded).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...formats.hermes import END, START
from ...formats.hermes import format_tool_result as _format_tool_result
from ._scan import (
    BROKEN,
    DONE,
    MARKER,
    BuiltinToolParser,
    BuiltinToolStream,
    JsonRaw,
    ObjectReader,
    content_mode,
    find_markers,
    first_chars,
    match_marker,
    safe_end,
)

_MARKERS = (START, END)
_CONTENT_MODE = content_mode(first_chars((START,)))

_CONTENT, _BODY_WAIT, _OBJECT, _OPAQUE_LIT, _OPAQUE_JSON, _RAW_ARGS, _SKIP = range(7)


class HermesToolStream(BuiltinToolStream):
    """Incremental hermes machine: content ↔ block, with an `ObjectReader` for the body."""

    _idle_when_empty = True  # every state's step (and the reader's) on an empty rest: nothing, False
    _start_mode = _CONTENT_MODE

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _CONTENT
        self._reader: ObjectReader | None = None
        self._raw: JsonRaw | None = None

    def _close_block(self, marker: str) -> None:
        """At a marker inside a block: end (named) or reject (unnamed) the block."""
        if marker == END:
            self._pos += len(END)
        if self._in_call:
            self._end_call(self._pos)
        else:
            self._reject(self._pos)
        self._state = _CONTENT

    def _at_rest(self) -> bool:
        return self._state == _CONTENT

    def _fast_mode(self) -> Any:
        state = self._state
        if state == _CONTENT:
            return _CONTENT_MODE
        reader = self._reader
        return reader.fast_mode() if state == _OBJECT and reader is not None else None

    def _step(self) -> bool:
        state = self._state
        if state == _CONTENT:
            if self._outside((START,)) is None:
                return False
            self._begin_span(self._pos)
            self._pos += len(START)
            self._state = _BODY_WAIT
            return True
        if state == _BODY_WAIT:
            if not self._skip_ws():
                return False
            found = match_marker(self._buf, self._pos, _MARKERS, self._final)
            if found in (START, END):
                self._close_block(found)
            elif found is not None:
                return False
            elif self._buf[self._pos] == "{":
                self._pos += 1
                self._reader = ObjectReader(_MARKERS)
                self._state = _OBJECT
            else:
                self._state = _OPAQUE_LIT
            return True
        if state == _OBJECT:
            reader = self._reader
            assert reader is not None
            r = reader.step(self)
            if r == MARKER:
                assert reader.marker is not None
                self._close_block(reader.marker)
            elif r == DONE:
                self._state = _SKIP if self._in_call else _OPAQUE_LIT
            elif r == BROKEN:
                if not self._in_call:
                    self._state = _OPAQUE_JSON
                elif reader.args_state == 0:
                    self._state = _RAW_ARGS
                else:
                    self._state = _SKIP
                self._raw = JsonRaw(_MARKERS)
            else:
                return False
            return True
        if state in (_OPAQUE_LIT, _SKIP):
            j, which = find_markers(self._buf, self._pos, _MARKERS)
            if which is None:
                self._pos = safe_end(self._buf, self._pos, _MARKERS, self._final)
                return False
            self._pos = j
            self._close_block(which)
            return True
        # _OPAQUE_JSON / _RAW_ARGS: raw JSON-ish text up to a marker outside strings
        raw = self._raw
        assert raw is not None
        start = self._pos
        end, why = raw.scan(self._buf, start, _MARKERS, self._final)
        self._pos = end
        if state == _RAW_ARGS:
            self._args(self._buf[start:end])
        if why == MARKER:
            assert raw.marker is not None
            self._close_block(raw.marker)
            return True
        return False


class HermesToolParser(BuiltinToolParser):
    """Hermes / Qwen2.5 ``<tool_call>`` JSON blocks (builtin, incremental)."""

    name = "hermes"
    markers: ClassVar[tuple[str, ...]] = _MARKERS
    stream_class = HermesToolStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``<tool_response>\\n…\\n</tool_response>`` as the Hermes/Qwen2.5 templates render it."""
        return _format_tool_result(tool_call_id, result)

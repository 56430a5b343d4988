"""Inkling tool calls: typed content blocks, calls in ``<|content_invoke_tool_json|>`` blocks.

::

    <|message_model|><|content_thinking|>Need the weather.<|end_message|>
    <|message_model|><|content_text|>Checking.<|end_message|>
    <|message_model|><|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"SF"}}<|end_message|>

A block is ``<|message_model|>`` (optional), optional metadata (e.g. the
function's name), a kind marker, the body, and ``<|end_message|>`` or
``<|content_model_end_sampling|>`` (a missing end is tolerated: the next block
or the end of output ends it). All markers are special tokens.

* ``content_invoke_tool_json`` → a call: the body is ``{"name": …, "args": {…}}``
  ("arguments"/"parameters" are accepted for "args"); the call is announced
  when the name's string closes, the args value streams raw;
* ``content_text``, ``content_invoke_tool_text``, ``content_tool_error`` → content
  (the body; the raw-text and error blocks are shown as text, as vLLM does);
* ``content_thinking`` → reasoning: dropped by this tool parser (SGLang's
  detector does the same; chain an inkling reasoning parser to keep it);
* text outside blocks → content; block metadata → dropped; stray end markers → dropped.

Malformed output (builtin policy, see `scan`): an invoke block whose JSON has
no string "name" stays in the content verbatim (markers included); args that
are not an object → no call (`whole_calls`); text after the object up to the
block end is ignored; metadata not followed by a kind marker is content;
truncated → no call (`whole_calls`). Under
conventions="servers" the markers of such a span go to `dropped` (both servers read
every Inkling marker as structure; `ToolFormat.servers_markup`), its text stays content.

`format_tool_result`: the result text (no Inkling tool-block wrapper could be verified).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...formats import inkling as fmt
from ...formats._base import result_text
from .engines.call_blocks import BLOCK_OBJECT, BLOCK_WAIT, CallBlockStream
from .engines.markers import find_or_safe
from .engines.scan import JsonRaw, ObjectReader
from .engines.tool_parser import BuiltinToolParser

_BLOCK_ENDS = fmt.BLOCK_ENDS
_OPENERS = (fmt.MESSAGE_MODEL, *fmt.KINDS)
_OUTSIDE_MARKERS = (*_OPENERS, *_BLOCK_ENDS)
_BODY_ENDS = (*_BLOCK_ENDS, *_OPENERS)  # a new block ends an unterminated one
_CONTENT_KINDS = (fmt.TEXT, fmt.INVOKE_TEXT, fmt.TOOL_ERROR)

_OUTSIDE, _HEADER, _BODY = range(3)  # then the call block's states (`call_blocks`)


class _ArgsReader(ObjectReader):
    ARG_KEYS: ClassVar[tuple[str, ...]] = ("args", "arguments", "parameters")


class InklingToolStream(CallBlockStream):
    """Incremental Inkling block machine; an invoke block's body is a call block (`call_blocks`)."""

    scan_unnamed_body = False

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _OUTSIDE
        self._kind = ""
        self._header: list[str] = []
        self._reader: _ArgsReader | None = None
        self._raw = JsonRaw(_BODY_ENDS)

    def _fast_mode(self) -> Any:
        reader = self._reader
        return reader.fast_mode() if self._state == BLOCK_OBJECT and reader is not None else None

    def _close_block(self, marker: str) -> None:
        """At a block end or a new opener (cursor on it)."""
        if marker in _BLOCK_ENDS:
            self._pos += len(marker)
        if self._in_call:
            self._end_call(self._pos)
        elif self._span is not None:
            self._reject(self._pos)
        else:
            self._structure()
        self._state = _OUTSIDE

    def _open(self, kind: str) -> None:
        self._kind = kind
        if kind == fmt.INVOKE_JSON:
            self._state = BLOCK_WAIT
            return
        self._drop_span()
        self._structure()
        self._state = _BODY

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _OUTSIDE:
            which = self._outside(_OUTSIDE_MARKERS)
            if which is None:
                return False
            if which in _BLOCK_ENDS:
                self._pos += len(which)
                self._structure()
                return True
            self._begin_span(self._pos)
            self._pos += len(which)
            if which == fmt.MESSAGE_MODEL:
                self._header = []
                self._state = _HEADER
            else:
                self._open(which)
            return True
        if state == _HEADER:
            ends = (*fmt.KINDS, *_BLOCK_ENDS, fmt.MESSAGE_MODEL)
            stop, which = find_or_safe(buf, self._pos, ends, self._final)
            self._header.append(buf[self._pos : stop])
            self._pos = stop
            if which is None:
                return False
            if which in fmt.KINDS:
                self._pos += len(which)
                self._open(which)
            else:  # metadata that opens no block: text, verbatim
                self._reject(self._pos)
                self._state = _OUTSIDE
            return True
        if state == _BODY:
            stop, which = find_or_safe(buf, self._pos, _BODY_ENDS, self._final)
            if self._kind in _CONTENT_KINDS:
                self._content(buf[self._pos : stop])
            self._pos = stop
            if which is None:
                return False
            self._close_block(which)
            return True
        return self._call_block_step(_BODY_ENDS, _ArgsReader)


class InklingToolParser(BuiltinToolParser):
    """Inkling ``content_invoke_tool_json`` blocks (builtin, incremental)."""

    name = "inkling"
    markers: ClassVar[tuple[str, ...]] = fmt.TOOL.markers
    stream_class = InklingToolStream

    def has_tool_calls(self, text: str) -> bool:
        return fmt.INVOKE_JSON in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text (a non-string result JSON-encoded)."""
        return result_text(result)

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
accepted too (not under conventions="servers": both servers show it as text). The name is announced at the end of the name line (V3) or at
``<｜tool▁sep｜>`` (V3.1); arguments stream raw up to their closing brace.

Malformed output (builtin policy, see `scan`):

* section and call markers with whitespace between them are structure; other text between
  calls inside a section is content;
* a call without a readable name (no separator, empty name) stays in the content verbatim,
  markers included; if the section holds no named call, its markers are content too;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`; the
  arguments text read is without the fence and surrounding whitespace); text after the
  arguments' closing brace up to ``<｜tool▁call▁end｜>`` (the closing fence, junk) is ignored;
* a new call/section-end marker inside a call ends it (as if truncated);
* end of output inside a call: named → a call only when its arguments are already a complete
  object, else its text is text (`whole_calls`: content, or on `dropped` under "servers");
  unnamed → content (from the section marker, when no call of the section was named).

`format_tool_result`: ``<｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>`` — one tool
output as the DeepSeek V3 template renders it (it wraps consecutive outputs in
``<｜tool▁outputs▁begin｜>…<｜tool▁outputs▁end｜>``; no id in this format).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats.deepseek_v3 import CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, SEP
from ...formats.deepseek_v3 import format_tool_result as _format_tool_result
from ...protocol import StreamDelta
from ...protocol.models import empty_delta
from .engines.conventions import SERVERS
from .engines.markers import find_or_safe
from .engines.scan import (
    MORE,
    ArgsScan,
    JsonRaw,
    Quiet,
    content_mode,
    match_marker,
)
from .engines.sections import REJECTED, SectionStream
from .engines.tool_parser import BuiltinToolParser

_BREAKERS = (CALL_END, CALL_BEGIN, CALLS_END, CALLS_BEGIN)
_HEAD_ENDS = (SEP, *_BREAKERS)
_NAME_END = re.compile(r"[\n`{<]")
_FENCE = "```"
_TAG = re.compile(r"[A-Za-z]*")
_NON_WS = re.compile(r"[^ \t\r\n]")
#: Every marker starts with it: text without it holds no marker and no marker prefix.
_LT = "<"
assert all(m.startswith(_LT) for m in (*_HEAD_ENDS, CALLS_BEGIN))
_CONTENT_MODE = content_mode(_LT)
#: States whose step only skips text that holds no "<" (no marker can start in it).
_QUIET_LT = Quiet(_CONTENT_MODE)
_QUIET_WS = Quiet(_NON_WS.search)
_QUIET_TAG = Quiet(re.compile(r"[^A-Za-z]").search)

_OUTSIDE, _HEAD, _NAME_LINE, _ARGS_WAIT, _FENCE_TAG, _ARGS, _TAIL, _OPAQUE = range(8)
#: The modes by state before a stream's first call: a call's states are not reached yet.
_START_MODES: tuple[Any, ...] = (_CONTENT_MODE, None, None, None, None, None, None, None)


# --- whole tokens (`BuiltinToolStream._exact`) --------------------------------------------------
# Each act is what the steps do with a chunk that is exactly that marker (or that newline,
# fence or brace), taken whole with nothing held: the same transitions, without searching.
# An act that shows nothing and knows the state it leaves sets that state's modes itself.


_nothing = empty_delta  # the delta of most acts, once per token


def _fragment(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    """One argument fragment when nothing else is pending and no whitespace is held: `_args(text)`
    (held until the call is whole: `WholeCalls`), then the chunk's delta."""
    st._args(text)
    return st._release()


def _take_named(st: DeepSeekV3ToolStream, text: str) -> None:
    """`_take_whole` in a state after the name (no undecided span), or when the act drops it."""
    st._base += st._pos
    st._buf = text
    st._pos = len(text)


def _act_section(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    st._take_whole(text)
    st._begin_span(0)
    st._open_section()
    return _nothing()  # still outside a call: the same modes


def _act_call(st: DeepSeekV3ToolStream, text: str) -> StreamDelta | None:
    if not st._bare and not st._in_section:
        return None  # (under "servers": a call marker outside a section is text)
    st._take_whole(text)
    st._begin_span(0)
    st._open_call()
    st._mode = st._modes[_HEAD]
    st._exact = _EXACT[_HEAD]
    return _nothing()


def _act_section_end(st: DeepSeekV3ToolStream, text: str) -> StreamDelta | None:
    if not st._in_section:
        return None  # not a marker outside a section: content
    st._take_whole(text)
    st._close_section(CALLS_END)
    return st._settle()


def _act_sep(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    st._take_whole(text)
    st._head_done()
    return st._settle()


def _act_name_line_end(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    name = "".join(st._head).strip()
    if not name:
        st._take_whole(text)
        st._name_line_done(text)  # unnamed: the span goes on (as content, at the call's end)
        return st._settle()
    _take_named(st, text)  # the span ends here: the call is named (`_commit` drops it)
    st._name_known(name)
    return st._settle()


def _act_fence(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    _take_named(st, text)
    st._state = _FENCE_TAG
    st._mode = _QUIET_TAG
    st._exact = _EXACT[_FENCE_TAG]
    return _nothing()


def _act_tag_end(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    _take_named(st, text)  # the newline: whitespace before the arguments
    st._state = _ARGS_WAIT
    st._mode = _QUIET_WS
    st._exact = _EXACT[_ARGS_WAIT]
    return _nothing()


def _act_open(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    """``{`` or ``{"``: the arguments' object opens (and its first key's string)."""
    _take_named(st, text)
    raw = st._raw
    raw.reset(in_str=len(text) == 2)
    raw.depth = 1
    st._state = _ARGS
    st._mode = st._modes[_ARGS]
    st._exact = _CLOSERS
    # The call was announced by an earlier chunk; no whitespace is held before its arguments.
    return _fragment(st, text)


def _act_close(st: DeepSeekV3ToolStream, text: str) -> StreamDelta | None:
    """``}`` or ``"}`` closing the arguments' object one level in, then nothing or whitespace."""
    raw = st._raw
    if raw.esc or raw.depth != 1 or raw.in_str != (text[0] == '"'):
        return None
    _take_named(st, text)
    raw.in_str = False
    raw.depth = 0
    last = text[: text.index("}") + 1]
    st._state = _TAIL  # the whitespace after it: skipped there
    if st._args_held:
        st._args(last)  # the whitespace held before it goes first
        return st._settle()
    st._mode = _QUIET_LT
    st._exact = _EXACT[_TAIL]
    return _fragment(st, last)


def _act_named_call_end(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    """The end of a named call after its arguments (`_stop_call` in `_TAIL`: nothing to show, but
    a held call, shown now)."""
    held = st._holding
    _take_named(st, text)
    st._end_call(len(text))
    st._state = _OUTSIDE
    st._mode = _CONTENT_MODE
    st._exact = _EXACT[_OUTSIDE]
    return st._release() if held else _nothing()


def _act_call_end(st: DeepSeekV3ToolStream, text: str) -> StreamDelta:
    st._take_whole(text)
    st._pos = 0
    st._stop_call(CALL_END)
    return st._settle()


_CLOSERS = dict.fromkeys(("}", '"}', "}\n", '"}\n'), _act_close)
_EXACT: tuple[dict[str, Any], ...] = (
    {CALLS_BEGIN: _act_section, CALL_BEGIN: _act_call, CALLS_END: _act_section_end},  # _OUTSIDE
    {SEP: _act_sep, CALL_END: _act_call_end},  # _HEAD
    {"\n": _act_name_line_end},  # _NAME_LINE
    {_FENCE: _act_fence, CALL_END: _act_call_end, "{": _act_open, '{"': _act_open},  # _ARGS_WAIT
    {"\n": _act_tag_end},  # _FENCE_TAG
    _CLOSERS,  # _ARGS
    {CALL_END: _act_named_call_end},  # _TAIL
    {CALL_END: _act_call_end},  # _OPAQUE
)


class DeepSeekV3ToolStream(SectionStream):
    """Incremental DeepSeek V3/V3.1 machine. A token fed whole that its state decides by
    itself (a special token, the name line's newline, the fence, the arguments' first and
    last braces) takes one act (`_EXACT`); the steps handle everything else."""

    __slots__ = ("_bare", "_head", "_modes", "_raw", "_state", "_typed")
    _idle_when_empty = True  # every state's step on an empty rest: nothing, False
    _start_mode = _CONTENT_MODE
    _start_exact = _EXACT[_OUTSIDE]

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _OUTSIDE
        self._call_end = CALL_END
        self._head: list[str] = []
        self._typed = False
        self._raw = JsonRaw(_BREAKERS)
        #: Each state's `_mode`; the states of a call get theirs at the first call
        #: (`_call_modes`), so a reply without calls never builds them.
        self._modes = _START_MODES
        #: Whether a call marker outside a section opens a call (not under "servers").
        self._bare = parser.conventions != SERVERS or parser.servers_bare_calls

    def _call_modes(self) -> None:
        """The modes of a call's states, which hold this stream's head and scanner."""
        # `_head` is cleared, never replaced: its `append` is the sink of the head and name line.
        head = Quiet(_CONTENT_MODE, self._head.append)
        name = Quiet(_NAME_END.search, self._head.append)
        args = ArgsScan(self._raw, _BREAKERS, "", True)
        self._modes = (_CONTENT_MODE, head, name, _QUIET_WS, _QUIET_TAG, args, _QUIET_LT, _QUIET_LT)

    def _outside_markers(self) -> tuple[str, ...]:
        if self._in_section:
            return (CALLS_BEGIN, CALL_BEGIN, CALLS_END)
        return (CALLS_BEGIN, CALL_BEGIN) if self._bare else (CALLS_BEGIN,)

    def _name_known(self, name: str) -> None:
        self._commit(name)
        self._section_named = self._section_named or self._in_section  # (`_named_in_section`, inline)
        self._state = _ARGS_WAIT

    def _open_call(self) -> None:
        self._head.clear()
        self._state = _HEAD
        if self._modes is _START_MODES:
            self._call_modes()

    def _head_done(self) -> None:
        """At the separator, consumed: the head is a name (V3.1) or a type (V3, name line next)."""
        head = "".join(self._head).strip()
        if head in ("", "function"):
            self._head.clear()
            self._typed = head == "function"
            self._state = _NAME_LINE
        else:
            self._name_known(head)

    def _name_line_done(self, c: str) -> None:
        """The name line ends at a character `c` (not a marker)."""
        name = "".join(self._head).strip()
        if name:
            self._name_known(name)
        elif self._typed and c == "{":
            self._name_known("function")
        else:
            self._state = _OPAQUE

    def _fast_mode(self) -> Any:
        state = self._state
        self._exact = _EXACT[state]
        return self._modes[state]

    def _settle(self) -> StreamDelta:
        """After an act: the modes of the state it left, and its delta, recorded."""
        state = self._state  # (`_fast_mode`, inline: once per structural token)
        self._mode = self._modes[state]
        self._exact = _EXACT[state]
        return self._release()

    def _step(self) -> bool:
        state, buf, pos = self._state, self._buf, self._pos
        if state == _ARGS:
            closed = self._json_args(self._raw, _BREAKERS)
            if closed:
                self._state = _TAIL
            return closed is not False
        if state == _NAME_LINE:
            return self._name_line_step(buf, pos)
        if state == _FENCE_TAG:
            end = _TAG.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
            self._pos = end
            if end == len(buf) and not self._final:
                return False  # the language tag may go on
            self._state = _ARGS_WAIT
            return True
        if state == _ARGS_WAIT:
            return self._args_wait_step(buf, pos)
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
            return self._outside_step()
        if state == _HEAD:
            stop, which = find_or_safe(buf, pos, _HEAD_ENDS, self._final)
            self._head.append(buf[pos:stop])
            self._pos = stop
            if which is None:
                return False
            if which != SEP:
                self._stop_call(which)
                return True
            self._pos += len(SEP)
            self._head_done()
            return True
        # _TAIL (named: ignore up to the call end) / _OPAQUE (unnamed: content at the call end)
        return self._to_call_end(_BREAKERS)

    def _outside_step(self) -> bool:
        """Between calls, a marker ahead: the section or a call opens, or the section ends."""
        which = self._between_calls(self._outside_markers())
        if which is None or which is REJECTED:  # (more text needed / the section was content)
            return which is REJECTED
        if which == CALLS_END:
            self._pos += len(CALLS_END)
            self._close_section(CALLS_END)
            return True
        self._begin_span(self._pos)
        self._pos += len(which)
        if which == CALLS_BEGIN:
            self._open_section()
        else:
            self._open_call()
        return True

    def _args_wait_step(self, buf: str, pos: int) -> bool:
        """Before the arguments: a code fence opens, a marker stops the call, or the JSON starts."""
        m = _NON_WS.search(buf, pos)
        if m is None:
            self._pos = len(buf)
            return False
        pos = self._pos = m.start()
        c = buf[pos]
        if c == "`":
            if len(buf) - pos < 3 and not self._final:
                return False
            if buf.startswith(_FENCE, pos):
                self._pos = pos + len(_FENCE)
                self._state = _FENCE_TAG
                return True
        elif c == _LT:
            found = match_marker(buf, pos, _BREAKERS, self._final)
            if found == MORE:
                return False
            if found is not None:
                self._stop_call(found)
                return True
        self._raw.reset()  # the arguments' mode holds this scanner
        self._state = _ARGS
        return True

    def _name_line_step(self, buf: str, pos: int) -> bool:
        """The name line (up to a newline, a fence or a marker): read on, or done."""
        m = _NAME_END.search(buf, pos)
        if m is None:
            self._head.append(buf[pos:])
            self._pos = len(buf)
            return False
        stop = m.start()
        self._head.append(buf[pos:stop])
        self._pos = stop
        c = buf[stop]
        if c == "<":
            found = match_marker(buf, stop, _BREAKERS, self._final)
            if found == MORE:
                return False
            if found is None:  # a '<' inside the name line: keep reading
                self._head.append("<")
                self._pos += 1
                return True
        self._name_line_done(c)
        return True

    def _at_rest(self) -> bool:
        return self._state == _OUTSIDE

    def _at_end(self) -> None:
        if self._state == _OUTSIDE:
            self._drop_named_section()


class DeepSeekV3ToolParser(BuiltinToolParser):
    """DeepSeek V3 / V3.1 tool calls (builtin, incremental)."""

    name = "deepseek_v3"
    markers: ClassVar[tuple[str, ...]] = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)
    stream_class: ClassVar[type[DeepSeekV3ToolStream]] = DeepSeekV3ToolStream
    servers_bare_calls = False  # (both servers show a call outside a section as text)

    def has_tool_calls(self, text: str) -> bool:
        return CALLS_BEGIN in text or CALL_BEGIN in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``<｜tool▁output▁begin｜>…<｜tool▁output▁end｜>`` as the DeepSeek V3 template renders one output."""
        return _format_tool_result(tool_call_id, result)


class DeepSeekV31ToolParser(DeepSeekV3ToolParser):
    """DeepSeek V3.1 ``NAME<｜tool▁sep｜>{json}`` calls: the V3 machine, which reads both bodies."""

    name = "deepseek_v31"

"""Gemma 4 and FunctionGemma tool calls: Gemma's own argument syntax, converted to JSON as it streams.

Format (Gemma 4 chat template)::

    <|tool_call>call:NAME{key:<|"|>text<|"|>,count:5,flag:true,opt:null,obj:{k:<|"|>v<|"|>},list:[1,<|"|>a<|"|>]}<tool_call|>

FunctionGemma writes the same syntax as
``<start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>``.

Arguments are an object with bare keys; a value is a string between the
string delimiters (verbatim: no escapes exist, so quotes and backslashes are
text), an object ``{…}``, a list ``[…]`` or a bare scalar (a JSON number,
``true``/``false``/``null``; any other bare text is a string, stripped).
Each call has its own block; text outside blocks is content. The arguments
JSON is built incrementally: keys, punctuation and string fragments are
emitted as they arrive, a bare scalar when its terminator arrives.

Malformed output (builtin policy, see `scan`): a block that does not start
with ``call:NAME{`` (NAME a plain name) stays content verbatim up to its end
marker; a syntax error inside the arguments (a key without ``:``, a stray
character) switches to passing the rest of the block's text through
verbatim, and the call is no call, its text is text (`whole_calls`; vLLM and SGLang
both close the arguments read before the error and return the call: a reviewed
divergence); an end marker (or a new block) before the arguments close ends the
call there, no call either; inside a string too under
conventions="servers" (the markers are special tokens, and both frameworks end
the block wherever they appear), while under "lossless" only where no closing
delimiter follows before the next block starts: a model writing about its own
format puts the block's markers inside a string argument as text (the next block: its start
marker and ``call:``); ``key:`` with no value is an empty string; text between the
closing ``}`` and the end marker is content, in place.

Where the frameworks differ: vLLM's gemma4 also accepts ``<turn|>`` as the
end marker and, without any block, a bare ``call:NAME{…}`` in the text;
SGLang takes only the block. We read only the block: a bare ``call:`` in
prose is more likely text than a call, and the template always writes the
markers. Both frameworks keep unknown bare values as strings, as we do.

`format_tool_result`: ``<|tool_response>response:NAME{…}<tool_response|>``
(FunctionGemma: ``<start_function_response>…<end_function_response>``); these
formats have no call ids, so the function name is passed as `tool_call_id`.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from ...formats import ToolFormat
from ...formats import functiongemma as _fg
from ...formats import gemma4 as _g4
from .engines.call_steps import clean_name
from .engines.conventions import SERVERS
from .engines.markers import close_ahead, find_or_safe
from .engines.scan import (
    MORE,
    BuiltinToolStream,
    find_markers,
    is_invalid,
    loads_or_none,
    match_marker,
    safe_end,
)
from .engines.tool_parser import BuiltinToolParser

(
    _CONTENT,
    _HEAD,
    _NAME,
    _KEYWAIT,
    _KEY,
    _VALWAIT,
    _ARRWAIT,
    _STR,
    _BARE,
    _AFTER,
    _TAIL,
    _RAW,
    _OPAQUE,
    _TAILTEXT,
) = range(14)
_NAME_END = re.compile(r"[{<\n]")
_KEY_STOP = re.compile(r"[:{}\[\],<\n]")
_BARE_STOP = re.compile(r"[,}\]<\n]")


def bare_json(text: str) -> str:
    """A bare scalar's text → JSON: numbers and true/false/null as such, anything else a string."""
    stripped = text.strip()
    value = loads_or_none(stripped)
    if is_invalid(value) or isinstance(value, str | dict | list):
        value = stripped
    return json.dumps(value, ensure_ascii=False)


class GemmaCallStream(BuiltinToolStream):
    """Incremental machine for ``START call:NAME{args} END`` blocks (see the module docstring)."""

    start: ClassVar[str] = _g4.START
    end: ClassVar[str] = _g4.END
    delim: ClassVar[str] = _g4.STRING
    #: Under conventions="servers", as both servers read it: the block's markers end a string
    #: wherever they stand (`conventions.SERVERS_CALLS`).
    servers_tag_ends_value: ClassVar[bool] = True

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _CONTENT
        self._tok: list[str] = []
        self._key_delims: list[int] = []  # where string delimiters stood in the key being read
        self._stack: list[str] = []
        self._need_comma = False
        self._blocks = (self.start, self.end)
        #: conventions="servers": a syntax error closes the arguments read so far (both servers read
        #: what parses, `{}` at the least) and the rest of the block goes to `dropped` (`_malformed`).
        self._drop_malformed = parser.conventions == SERVERS
        #: What ends a string: its delimiter, or the block's markers (under "lossless", only where no
        #: delimiter follows: a model writing about its format puts them in a string as text).
        self._str_ends = (self.delim, self.start, self.end)
        self._tag_ends = self._drop_malformed and self.servers_tag_ends_value
        #: ... the offset (in the fed text) where the search for a string's closing delimiter goes on
        #: (-1: none held).
        self._look = -1

    # -- helpers ------------------------------------------------------------------------------
    def _emit(self, text: str) -> None:
        self._args(text, hold_ws=False)

    def _comma(self) -> None:
        if self._need_comma:
            self._need_comma = False
            self._emit(", ")

    def _stop_at(self, marker: str) -> None:
        """An end marker or a new block inside the call: the call ends here."""
        if marker == self.end:
            self._pos += len(marker)
            self._call_closed = True  # (at its end marker, even one decided only at the end of output)
        self._end_call(self._pos)
        self._state = _CONTENT

    def _close(self, c: str) -> None:
        self._stack.pop()
        self._emit(c)
        self._pos += 1
        self._state = _AFTER if self._stack else _TAIL

    def _block_marker(self) -> str | None:
        """MORE, END/START at the cursor, or None."""
        return match_marker(self._buf, self._pos, self._blocks, self._final)

    # -- the machine ----------------------------------------------------------------------------
    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _CONTENT:
            if self._outside((self.start,)) is None:
                return False
            self._begin_span(self._pos)
            self._pos += len(self.start)
            self._tok = []
            self._state = _HEAD
            return True
        if state == _HEAD:
            found = self._marker_past_ws((_g4.CALL,))
            if found == MORE:
                return False
            if found is None:
                self._state = _OPAQUE
            else:
                self._pos += len(found)
                self._state = _NAME
            return True
        if state == _NAME:
            return self._name_step(buf)
        if state in (_KEYWAIT, _VALWAIT, _ARRWAIT, _AFTER, _TAIL):
            return self._between_tokens_step(state, buf)
        if state == _KEY:
            return self._read_key()
        if state == _STR:
            return self._string_step(buf)
        if state == _BARE:
            return self._bare_step(buf)
        if state == _TAILTEXT:
            return self._tail_text_step(buf)
        if state == _RAW:  # a syntax error: the rest of the block's text goes into the arguments verbatim
            end, which = find_or_safe(buf, self._pos, self._blocks, self._final)
            if end > self._pos:
                self._malformed_text(buf[self._pos : end])
            self._pos = end
            if which is None:
                return False
            self._stop_at(which)
            return True
        # _OPAQUE: not a call; the block is content, verbatim, up to and including its end marker
        j, which = find_markers(buf, self._pos, self._blocks)
        if which is None:
            self._pos = safe_end(buf, self._pos, self._blocks, self._final)
            return False
        self._pos = j + (len(which) if which == self.end else 0)
        self._reject(self._pos)
        self._state = _CONTENT
        return True

    def _bare_step(self, buf: str) -> bool:
        """A bare (unquoted) value up to what ends it, as its JSON."""
        read = self._whole_token(_BARE_STOP, buf)
        if read is None:
            return False
        self._emit(bare_json(read[0]))
        self._state = _AFTER
        return True

    def _tail_text_step(self, buf: str) -> bool:
        """Text after the arguments closed, before the end marker: content."""
        end, which = find_or_safe(buf, self._pos, self._blocks, self._final)
        self._inline_content(buf[self._pos : end])
        self._pos = end
        if which is None:
            return False
        if which == self.end:
            self._pos += len(which)
            self._structure()
        self._state = _CONTENT
        return True

    def _string_step(self, buf: str) -> bool:
        """Inside a delimited string value, up to its closing delimiter (or the block's end: under
        "lossless", only where no closing delimiter follows before the next block's ``<|tool_call>call:``,
        `close_ahead`)."""
        j, which = find_markers(buf, self._pos, self._str_ends)
        end = j if which is not None else safe_end(buf, self._pos, self._str_ends, self._final)
        if which is not None and which != self.delim and not self._tag_ends:
            look = self._look - self._base if self._look >= 0 else -1
            k = close_ahead(buf, j, self.delim, self.start + _g4.CALL, look, self._final)
            if k is None:  # (held from the marker on until the delimiter or the next block decides)
                end, which = j, None
                self._look = self._base + len(buf)
            elif k >= 0:
                end, which = k, self.delim
        if end > self._pos:
            self._emit(json.dumps(buf[self._pos : end], ensure_ascii=False)[1:-1])
        self._pos = end
        if which is None:
            return False
        if which != self.delim:  # the block ends inside the string: the call ends (no call: `whole_calls`)
            self._stop_at(which)
            return True
        self._look = -1
        self._pos += len(self.delim)
        self._emit('"')
        self._state = _AFTER
        return True

    def _between_tokens_step(self, state: int, buf: str) -> bool:
        """Between the arguments' tokens: a key, a value, a separator or a close, or the block's end."""
        if not self._skip_ws():
            return False
        found = self._block_marker()
        if found == MORE:
            return False
        if found is not None:
            self._stop_at(found)
            return True
        c = buf[self._pos]
        if state == _TAIL:  # text after the arguments closed, before the end marker: content
            self._call_closed = True
            self._end_call(self._pos)
            self._state = _TAILTEXT
            return True
        if state == _AFTER:
            if c == ",":
                self._pos += 1
                self._need_comma = True
                self._state = _KEYWAIT if self._stack[-1] == "}" else _VALWAIT
            elif c == self._stack[-1]:
                self._close(c)
            else:
                self._malformed()
            return True
        if (state == _KEYWAIT and c == "}") or (state == _ARRWAIT and c == "]"):
            self._close(c)
        elif state == _KEYWAIT:
            self._tok, self._key_delims = [], []
            self._state = _KEY
        else:
            return self._value_start()
        return True

    def _token_until(self, stop: re.Pattern[str], buf: str) -> re.Match[str] | None:
        """The token (`_tok`) takes the text up to `stop`, and the cursor moves there: the match,
        or None at the buffer's end (all of it taken; more text needed)."""
        m = stop.search(buf, self._pos)
        end = len(buf) if m is None else m.start()
        self._tok.append(buf[self._pos : end])
        self._pos = end
        return m

    def _whole_token(self, stop: re.Pattern[str], buf: str) -> tuple[str, re.Match[str]] | None:
        """`_token_until`, once the token is whole: its text (`_tok` emptied) and the match of
        `stop` that ends it; None when more text is needed."""
        m = self._token_until(stop, buf)
        if m is None:
            return None
        token = "".join(self._tok)
        self._tok = []
        return token, m

    def _name_step(self, buf: str) -> bool:
        """The call's name up to its arguments' opening brace (anything else: opaque)."""
        read = self._whole_token(_NAME_END, buf)
        if read is None:
            return False
        token, m = read
        name = clean_name(token)
        if m.group() != "{" or name is None:
            self._state = _OPAQUE
            return True
        self._pos += 1
        self._commit(name)
        self._stack = ["}"]
        self._need_comma = False
        self._emit("{")
        self._state = _KEYWAIT
        return True

    def _value_start(self) -> bool:
        buf = self._buf
        if buf[self._pos] == "<" and match_marker(buf, self._pos, (self.delim,), self._final) == MORE:
            return False  # maybe a string delimiter: wait for more text
        in_value = self._stack[-1] == "}" and self._state == _VALWAIT  # (right after `key:`)
        if buf[self._pos] in ("]" if in_value else ",}]"):
            self._malformed()
            return True
        self._comma()
        if buf.startswith(self.delim, self._pos):
            self._pos += len(self.delim)
            self._emit('"')
            self._state = _STR
        elif buf[self._pos] == "{":
            self._open("}", _KEYWAIT)
        elif buf[self._pos] == "[":
            self._open("]", _ARRWAIT)
        elif buf[self._pos] in ",}":  # (in an object's value: `key:` with nothing after it)
            self._emit('""')  # an empty string
            self._state = _AFTER
        else:
            self._tok = []
            self._state = _BARE
        return True

    def _malformed(self, raw: str = "") -> None:
        """A syntax error in the arguments: the rest of the block (from `raw`, text already read) is
        passed through verbatim into the arguments (the call is no call: `whole_calls`); under conventions="servers" the
        arguments read so far are closed (a value opened by `key:` is an empty string) and the
        rest goes to `dropped`."""
        self._call_broken = True  # (a call whose arguments do not parse is no call: `whole_calls`)
        if self._drop_malformed:
            if self._state == _VALWAIT and self._stack[-1] == "}":
                self._emit('""')
            self._emit("".join(reversed(self._stack)))
            self._stack = []
        else:
            self._comma()
        self._malformed_text(raw)
        self._state = _RAW

    def _malformed_text(self, text: str) -> None:
        """Block text after a syntax error: the (discarded) arguments' (`dropped` under "servers")."""
        if not self._drop_malformed:
            self._emit(text)
        elif text:
            self._acc.dropped_parts.append(text)

    def _open(self, closer: str, state: int) -> None:
        self._stack.append(closer)
        self._emit("{" if closer == "}" else "[")
        self._pos += 1
        self._need_comma = False
        self._state = state

    def _read_key(self) -> bool:
        buf = self._buf
        while True:
            m = self._token_until(_KEY_STOP, buf)
            if m is None:
                return False
            c = m.group()
            if c == "<":
                found = match_marker(buf, self._pos, (self.delim, *self._blocks), self._final)
                if found == MORE:
                    return False
                if found == self.delim:  # a quoted key: the delimiters are not part of it
                    self._pos += len(found)
                    self._key_delims.append(len(self._tok))
                    self._tok.append("")
                    continue
                if found is not None:
                    self._flush_key()
                    self._stop_at(found)
                    return True
                self._tok.append("<")
                self._pos += 1
                continue
            key = "".join(self._tok).strip()
            for at in self._key_delims:
                self._tok[at] = self.delim
            raw = "".join(self._tok)
            self._tok, self._key_delims = [], []
            if c != ":" or not key:
                self._malformed(raw)  # not a key: verbatim, and the rest of the block with it
                return True
            self._pos += 1
            self._comma()
            self._emit(json.dumps(key, ensure_ascii=False) + ": ")
            self._state = _VALWAIT
            return True

    def _at_end(self) -> None:
        if not (self._in_call and self._tok):
            return
        if self._state == _BARE:
            self._emit(bare_json("".join(self._tok)))
        elif self._state == _KEY:
            self._flush_key()
        self._tok = []

    def _flush_key(self) -> None:
        """A key cut off (end of output, end marker): kept verbatim in the arguments (of a call that is then no call)."""
        for at in self._key_delims:
            self._tok[at] = self.delim
        self._comma()
        self._emit("".join(self._tok))
        self._tok, self._key_delims = [], []


class Gemma4ToolParser(BuiltinToolParser):
    """Gemma 4 ``<|tool_call>call:NAME{…}<tool_call|>`` calls (builtin, incremental)."""

    name = "gemma4"
    #: The format read: its markers and its tool-result message are the parser's.
    fmt: ClassVar[ToolFormat] = _g4.TOOL
    markers = _g4.TOOL.markers
    stream_class = GemmaCallStream

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``<|tool_response>response:NAME{…}<tool_response|>`` (FunctionGemma:
        ``<start_function_response>…<end_function_response>``); pass the function name as `tool_call_id`."""
        return self.fmt.format_tool_result(tool_call_id, result)


class FunctionGemmaToolStream(GemmaCallStream):
    start, end, delim = _fg.START, _fg.END, _fg.STRING


class FunctionGemmaToolParser(Gemma4ToolParser):
    """FunctionGemma ``<start_function_call>call:NAME{…}<end_function_call>`` calls (builtin, incremental)."""

    name = "functiongemma"
    fmt = _fg.TOOL
    markers = _fg.TOOL.markers
    stream_class = FunctionGemmaToolStream

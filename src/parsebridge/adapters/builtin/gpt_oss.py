"""OpenAI gpt-oss "harmony": tool calls (`GptOssToolParser`) and reasoning (`GptOssReasoningParser`).

A harmony output is a sequence of messages::

    <|channel|>analysis<|message|>Need the weather.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}<|call|>
    <|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>

Each message: a header (``<|start|>ROLE`` and/or ``<|channel|>CHANNEL``, an
optional ``to=RECIPIENT`` in either part, an optional ``<|constrain|>TYPE``)
up to ``<|message|>``, then a body up to ``<|end|>``, ``<|call|>`` or
``<|return|>`` — or up to the next ``<|start|>``/``<|channel|>`` or the end of
output (a missing end marker is tolerated). The markers are special tokens,
so they end a body wherever they appear, but for a call's body: a model writing about its
own format puts their text inside a JSON string argument, where it is text. The output may
start inside the first message's role part (the prompt ended with ``<|start|>assistant``):
`` to=functions.NAME<|channel|>commentary json<|message|>…`` is that message's header.

What each message means (both parsers):

* a recipient ``to=functions.NAME`` → a call to NAME whose arguments are the body (raw
  JSON, streamed as it arrives; the body's end markers inside a JSON string are text);
* another recipient, a built-in tool (``to=python``, ``browser.search``) → no function call:
  the message is the model's own action, left out like a reasoning body (on `dropped`, its
  header with it: the recipient names the tool);
* channel ``analysis`` without a recipient → reasoning;
* anything else (``final``, ``commentary`` without a recipient — a preamble —, an
  unknown channel) → content, the body only;
* text outside any message → content, verbatim; stray end markers → dropped;
* a header that is not harmony's (``[<|start|>assistant][ to=R]<|channel|>WORD[ to=R][ [<|constrain|>]TYPE]``)
  or that never reaches ``<|message|>`` is text: content verbatim, markers included.

The tool parser leaves reasoning bodies out of the content, on the result's `dropped`
(SGLang's gpt-oss detector drops them; vLLM routes them to reasoning): chain the gpt_oss reasoning parser to
keep them. The reasoning parser takes out analysis bodies as reasoning,
unwraps content messages, and passes call messages through verbatim (headers
included) as content, so the tool parser after it still sees them; alone, a
call stays visible as text. Several analysis messages are joined with "\\n".

Malformed output (builtin policy): a call body that is not a JSON object →
no call, its text is text (`whole_calls`); a header cut off by the end of output is
content (its recipient may be cut too); a body cut off inside its object → no call, its
text is text. A body whose object closed is a whole call even where ``<|call|>`` never
comes: that is gpt-oss's stop token, which a server stopping on it leaves out of the text
(as Hermes's object closed is its call closed; Dynamo's parser tests keep such outputs).
vLLM parses harmony by token ids (openai-harmony); SGLang's detector only
recognises a call after ``<|start|>assistant<|channel|>commentary`` and so
misses a call in the output's first message.

`format_tool_result`: ``<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>…<|end|>``
(the harmony tool message; pass the function name as the id).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from ...formats.gpt_oss import (
    BODY_ENDS,
    CALL,
    CHANNEL,
    END,
    HEADER_OPENS,
    LEAD,
    MESSAGE,
    RETURN,
    START,
    call_name,
    format_tool_result,
    is_function,
    read_header,
)
from ...protocol import (
    ReasoningBlock,
    ReasoningParserBase,
    ReasoningParseResult,
    ReasoningStreamBase,
    StreamDelta,
)
from ...protocol.errors import InvalidInputError
from ...protocol.models import delta_of
from ...protocol.streams import Discarded
from .engines.json_text import MARKER, JsonRaw
from .engines.markers import JSON_WS, find_or_safe, first_chars
from .engines.scan import BuiltinToolStream
from .engines.tool_parser import BuiltinToolParser

_STRAY_ENDS = (END, CALL, RETURN)
#: A body's chunk holding no marker's first character (see `GptOssToolStream.feed`).
_BODY_PLAIN = re.compile("[^" + re.escape(first_chars(BODY_ENDS)) + "]+").fullmatch
_OUTSIDE_MARKERS = (*HEADER_OPENS, *_STRAY_ENDS)
_HEADER_ENDS = (MESSAGE, *_STRAY_ENDS, START)
_MARKERS = (START, CHANNEL, MESSAGE, END, CALL, RETURN)

_CALL, _TOOL, _REASON, _CONTENT = "call", "tool", "reason", "content"


def message_kind(channel: str | None, recipient: str | None) -> str:
    """A message's kind: a function call, a built-in tool's action, reasoning or content."""
    if recipient:
        return _CALL if is_function(recipient) else _TOOL
    return _REASON if channel == "analysis" else _CONTENT


def leads_with_header(text: str, final: bool) -> bool | None:
    """Whether the output `text` opens inside its first header's role part (`` to=R…``); None
    while too little of it is known."""
    rest = text.lstrip(JSON_WS)
    if rest.startswith(LEAD):
        return True
    if not final and LEAD.startswith(rest):
        return None
    return False


# --- tool calls ----------------------------------------------------------------------------

_OUTSIDE, _HEADER, _BODY, _LEAD = range(4)


class GptOssToolStream(BuiltinToolStream):
    """Incremental harmony machine for calls and content."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _LEAD
        self._header: list[str] = []
        self._header_at = 0
        self._kind = _CONTENT
        #: A call's body: JSON string state, so that an end marker inside a string is text.
        self._raw = JsonRaw(BODY_ENDS)
        #: Whether the open call's body has shown more than whitespace (`_at_end`).
        self._body_seen = False

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """`BuiltinToolStream.feed`, with one shortcut: in a call's body with nothing held or
        open, a chunk with no marker's first character that does not end in whitespace is what
        `_step` would hand `_args` whole, and `_args` would stream it as is."""
        if not isinstance(text, str):
            raise InvalidInputError("stream.feed", text)
        if (
            self._state == _BODY
            and self._kind == _CALL
            and self._pos == len(self._buf)
            and _BODY_PLAIN(text) is not None
            and text[-1] not in JSON_WS
            and not self._args_held
            and not self._flushed
        ):
            self._raw_kept.append(text)  # (in a call: nothing to trim, see `CallSteps._keep_raw`)
            self._base += self._pos
            self._buf = text
            self._pos = len(text)
            self._raw.scan(text, 0, BODY_ENDS, False)  # (no marker's first character: consumed whole)
            self._body_seen = True  # (the chunk ends in a character that is not whitespace)
            self._args(text)  # (held until the call is whole: `WholeCalls`)
            return self._release()
        return super().feed(text, token_ids)

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _LEAD:
            return self._lead_step(buf)
        if state == _OUTSIDE:
            which = self._outside(_OUTSIDE_MARKERS)
            if which is None:
                return False
            if which in _STRAY_ENDS:
                self._pos += len(which)
                self._structure()
                return True
            self._header = [which]
            self._header_at = self._base + self._pos  # absolute
            self._pos += len(which)
            self._state = _HEADER
            return True
        if state == _HEADER:
            return self._header_step(buf)
        # _BODY
        if self._kind == _CALL:  # (an end marker inside a JSON string is the argument's text)
            stop, why = self._raw.scan(buf, self._pos, BODY_ENDS, self._final)
            which = self._raw.marker if why == MARKER else None
        else:
            stop, which = find_or_safe(buf, self._pos, BODY_ENDS, self._final)
        piece = buf[self._pos : stop]
        self._body(piece)
        self._pos = stop
        if which is None:
            return False
        if which in _STRAY_ENDS:
            self._pos += len(which)
        if self._kind == _CALL:
            self._end_call(self._pos)
        else:
            self._structure()
        self._state = _OUTSIDE
        return True

    def _lead_step(self, buf: str) -> bool:
        """The output's start: its first header's role part (`leads_with_header`), or not."""
        leads = leads_with_header(buf[self._pos :], self._final)
        if leads is None:
            return False
        self._state = _OUTSIDE
        if leads:
            self._header = []
            self._header_at = self._base + self._pos
            self._state = _HEADER
        return True

    def _header_step(self, buf: str) -> bool:
        """A message header up to ``<|message|>``: what it opens (a call, reasoning, content), or text."""
        stop, which = find_or_safe(buf, self._pos, _HEADER_ENDS, self._final)
        self._header.append(buf[self._pos : stop])
        self._pos = stop
        if which is None:
            return False
        if which != MESSAGE:  # a header that never reached its body: text, verbatim
            self._content("".join(self._header))
            self._state = _OUTSIDE
            return True
        self._pos += len(MESSAGE)
        info = read_header("".join(self._header), first=self._index < 0)
        if info is None:  # not a harmony header: text, and its body too
            self._content("".join(self._header) + MESSAGE)
            self._kind = _CONTENT
            self._state = _BODY
            return True
        channel, recipient = info
        self._kind = message_kind(channel, recipient)
        self._structure()
        if self._kind == _TOOL:  # (the recipient says which tool acted: left out with the body)
            self._acc.dropped_parts.append("".join(self._header) + MESSAGE)
        if self._kind == _CALL:
            assert recipient is not None
            self._commit(call_name(recipient), self._header_at - self._base)
            self._raw.reset()
            self._body_seen = False
        self._state = _BODY
        return True

    def _body(self, piece: str) -> None:
        """A message body's text: arguments, content, or (reasoning, a built-in tool's action: not this
        parser's to show) `dropped`."""
        if self._kind == _CALL:
            self._body_seen = self._body_seen or (piece != "" and not piece.isspace())
            self._args(piece)
        elif self._kind == _CONTENT:
            self._content(piece)
        elif piece:
            self._acc.dropped_parts.append(piece)

    def open_from(self) -> int:
        """A header read so far may open a call: it starts at `_header_at`."""
        start = super().open_from()
        return min(start, self._header_at) if self._state == _HEADER else start

    def _at_end(self) -> None:
        if self._state == _HEADER:  # cut off before its body: text (a recipient may be cut too)
            self._content("".join(self._header))
        elif self._state == _BODY and self._kind == _CALL:
            # A body whose JSON closed (outside any string) before the end of output: the call is
            # closed, `<|call|>` (the stop token) left out (`whole_calls` still checks its object).
            raw = self._raw
            self._call_closed = self._body_seen and raw.depth == 0 and not raw.in_str and not raw.esc


class GptOssToolParser(BuiltinToolParser):
    """Harmony ``commentary to=functions.NAME`` calls (builtin, incremental)."""

    name = "gpt_oss"
    markers: ClassVar[tuple[str, ...]] = _MARKERS
    stream_class = GptOssToolStream

    def has_tool_calls(self, text: str) -> bool:
        return " to=" in text and MESSAGE in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The harmony tool message (pass the function name as the id)."""
        return format_tool_result(tool_call_id, result)


# --- reasoning -------------------------------------------------------------------------------


class GptOssReasoningStream(ReasoningStreamBase):
    """Incremental harmony machine for reasoning and content; call messages pass through verbatim."""

    def __init__(self) -> None:
        super().__init__()
        self._held = ""
        self._consumed = 0  # absolute offset of _held[0]
        self._state = _OUTSIDE
        self._header: list[str] = []
        self._header_at = 0
        self._kind = _CONTENT
        # (the block's text; made `without_history`, only whether there was any)
        self._reasoning_parts: list[str] = [] if self._acc.keeps_history else Discarded()
        self._analysis_count = 0
        self._block_start: int | None = None
        self._block_end: int | None = None
        #: The output's start: it may open inside its first header's role part (`leads_with_header`).
        self._lead = True
        #: A call's body: JSON string state (an end marker inside a string is the body's text).
        self._raw = JsonRaw(BODY_ENDS)

    def pending_text(self) -> str:
        return ("".join(self._header) if self._state == _HEADER else "") + self._held

    def _take(self, size: int) -> str:
        out, self._held = self._held[:size], self._held[size:]
        self._consumed += size
        return out

    def _run(self, final: bool) -> StreamDelta:
        reasoning: list[str] = []
        content: list[str] = []
        while True:
            held = self._held
            if self._lead and not self._read_lead(held, final):
                break
            if self._state == _OUTSIDE:
                stop, which = find_or_safe(held, 0, _OUTSIDE_MARKERS, final)
                content.append(self._take(stop))
                if which is None:
                    break
                if which in _STRAY_ENDS:
                    self._take(len(which))
                    continue
                self._header_at = self._consumed
                self._header = [self._take(len(which))]
                self._state = _HEADER
            elif self._state == _HEADER:
                stop, which = find_or_safe(held, 0, _HEADER_ENDS, final)
                self._header.append(self._take(stop))
                if which is None:
                    if final:
                        content.append("".join(self._header))
                    break
                if which != MESSAGE:
                    content.append("".join(self._header))
                    self._state = _OUTSIDE
                    continue
                self._open_body(reasoning, content)
            else:
                stop, which = self._body_end(held, final)
                piece = self._take(stop)
                if self._kind == _REASON:
                    if piece:
                        reasoning.append(piece)
                        self._reasoning_parts.append(piece)
                else:
                    content.append(piece)
                if which is None:
                    if final and self._kind == _REASON:
                        self._block_end = self._consumed
                    break
                if which in _STRAY_ENDS:
                    end = self._take(len(which))
                    if self._kind in (_CALL, _TOOL):
                        content.append(end)
                if self._kind == _REASON:
                    self._block_end = self._consumed
                self._state = _OUTSIDE
        return delta_of("".join(content), "".join(reasoning), [])

    def _read_lead(self, held: str, final: bool) -> bool:
        """At the output's start: whether it opens inside its first header's role part (then the
        header is being read); False while too little is known."""
        leads = leads_with_header(held, final)
        if leads is None:
            return False
        self._lead = False
        if leads:
            self._header_at = self._consumed
            self._header = []
            self._state = _HEADER
        return True

    def _body_end(self, held: str, final: bool) -> tuple[int, str | None]:
        """Where the open body's text stops, and the marker there (a call's: outside JSON strings)."""
        if self._kind == _CALL:
            stop, why = self._raw.scan(held, 0, BODY_ENDS, final)
            return stop, self._raw.marker if why == MARKER else None
        return find_or_safe(held, 0, BODY_ENDS, final)

    def _open_body(self, reasoning: list[str], content: list[str]) -> None:
        """The header is read up to `<|message|>`: its kind says where the body goes (a call's or
        a non-harmony header stays content; analysis bodies after the first are joined by a newline)."""
        self._header.append(self._take(len(MESSAGE)))
        header = "".join(self._header)
        info = read_header(header[: -len(MESSAGE)], first=self._header_at == 0)
        self._kind = _CONTENT if info is None else message_kind(*info)
        if self._kind == _CALL:
            self._raw.reset()
        if self._kind in (_CALL, _TOOL) or info is None:
            content.append(header)
        elif self._kind == _REASON:
            if self._analysis_count:
                reasoning.append("\n")
                self._reasoning_parts.append("\n")
            self._analysis_count += 1
            if self._block_start is None:
                self._block_start = self._header_at
        self._state = _BODY

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._held += text
        return self._run(final=False)

    def _flush(self) -> StreamDelta:
        delta = self._run(final=True)
        if self._reasoning_parts and self._block_start is not None:
            self.block = ReasoningBlock(
                content="".join(self._reasoning_parts),
                start_marker=None,
                end_marker=None,
                start_index=self._block_start,
                end_index=self._block_end if self._block_end is not None else self._consumed,
                located=False,  # the block's markers are a whole header, not one marker
            )
        return delta


class GptOssReasoningParser(ReasoningParserBase):
    """Harmony analysis channel = reasoning, final channel = content (builtin, incremental)."""

    backend = "builtin"
    name = "gpt_oss"
    markers: ClassVar[tuple[str, ...]] = _MARKERS

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        """One shot = the stream fed once (harmony needs no start state: channels say it)."""
        s = self.stream()
        s.feed(text if isinstance(text, str) else str(text))
        return s.finish()

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> GptOssReasoningStream:
        return GptOssReasoningStream()

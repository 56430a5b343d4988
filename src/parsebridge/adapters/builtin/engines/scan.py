"""Shared machinery of the builtin tool-call parsers: one incremental driver, small scanners.

Every builtin format is a state machine over a cursor into a short buffer.
`BuiltinToolStream` is the driver: it owns the buffer (only the unconsumed
tail plus, while a call's name is still unknown, the span of that call), the
content/whitespace policy and the OpenAI delta bookkeeping. Formats implement
`_step` (consume what can be decided, return False when more text is needed)
and `_at_end` (truncation). `BuiltinToolParser.parse` (`tool_parser`) runs the
very same machine over the whole text, so a one-shot parse and a stream at any chunking
agree by construction; the tests check the machine is chunking-invariant.

Policy shared by every format (the builtin malformed-output contract):

1. Content is the text outside call spans, verbatim, but for whitespace that
   belongs to the call structure (`content_policy`).
2. A call span whose name cannot be recovered stays in the content verbatim
   (under conventions="servers", but for the markup the format's servers leave
   out: `CallSteps._unnamed`).
3. A named call whose arguments are not a complete JSON object is no call: every
   stream holds a call until it is whole (`whole_calls.WholeCalls`), and gives the
   text of one that is not back as text (content, or `dropped` under "servers").
4. At end of output inside a call: an unnamed one is content; a named one is a call only
   when its arguments are already a complete object (`whole_calls`).
5. Calls are never filtered against ``tools``; missing arguments → ``{}``.
6. Marker text inside a JSON string never ends a call.
7. Nothing raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ....protocol import BackendError, ParsebridgeError, StreamDelta, ToolCallDelta, ToolParseResult
from ....protocol.errors import StreamStateError, call_typed, not_text
from ....protocol.models import (
    delta_of,
    empty_delta,
    make_delta,
    make_tool_result,
    set_raw_text,
)
from ....protocol.streams import Discarded, ToolStreamBase
from .call_objects import BROKEN, DONE, ObjectReader
from .call_steps import RAW_TRIM_EVERY, CallSteps
from .content_policy import ContentPolicy
from .json_text import (
    CLOSED,
    EOB,
    MARKER,
    NEED,
    STOP,
    ArgsScan,
    JsonRaw,
    Quiet,
    is_invalid,
    loads_or_none,
    string_body,
    string_or_value,
)
from .markers import JSON_WS, MORE, content_mode, find_markers, first_chars, match_marker, safe_end

#: The driver, and (re-exported, for the formats) the scanners and readers it drives.
__all__ = [
    "BROKEN",
    "CLOSED",
    "DONE",
    "EOB",
    "JSON_WS",
    "MARKER",
    "MORE",
    "NEED",
    "STOP",
    "ArgsScan",
    "BuiltinToolStream",
    "JsonRaw",
    "ObjectReader",
    "Quiet",
    "content_mode",
    "find_markers",
    "first_chars",
    "is_invalid",
    "loads_or_none",
    "match_marker",
    "safe_end",
    "string_body",
    "string_or_value",
]


class BuiltinToolStream(CallSteps, ContentPolicy, ToolStreamBase):
    """Incremental driver shared by every builtin format (see the module docstring).

    Buffer discipline: `_buf[_pos:]` is unconsumed text, and everything before
    `_pos` is dropped at the next feed, so the buffer only ever holds a
    possible marker prefix. While a call's name is unknown (`_span` set), its
    raw text so far — `_span_parts` plus `_buf[_span:_pos]` — is kept so it can
    become content verbatim (rule 2/4); it is stored as a list of pieces, never
    re-concatenated per chunk, so total work stays linear.
    """

    #: Under on_error="raise" with no `max_held` the guard hands this stream out as is: its
    #: `feed` records, it refuses feed after flush, and what its machine raises arrives typed
    #: as the guard would type it (`BackendError`, call "stream.feed"/"stream.flush").
    guard_complete = True
    broken = False
    #: True when the format's step does nothing and returns False on an empty rest of the
    #: buffer (before the end of output): `_feed` then stops stepping once the chunk is
    #: consumed instead of calling the step once more to hear that (tests/builtin/test_fast_paths.py
    #: compares both ways delta by delta).
    _idle_when_empty = False
    #: Whole chunks the machine's state decides in one act (a format sets it in `_fast_mode`,
    #: beside `_mode`): a chunk equal to a key, fed with nothing held, goes first to
    #: `act(stream, chunk)`, which returns None having changed nothing, or takes the chunk
    #: (`_take_whole`), makes the transitions the steps would make on it, sets `_mode` and
    #: `_exact` for the state it leaves the machine in, and returns the delta, recorded
    #: (`_release`). Special tokens arrive as whole chunks when a server streams a token at a
    #: time: this is their path, and that of the few tokens that open or close a value.
    _exact: dict[str, Callable[[Any, str], StreamDelta | None]] | None
    #: `_mode` and `_exact` of the format's start state, when known before the first chunk.
    _start_mode: Any = None
    _start_exact: dict[str, Callable[[Any, str], StreamDelta | None]] | None = None
    #: A call's output is held (`whole_calls.WholeCalls`): argument chunks go through `_args`.
    _holding = False
    #: ... and the format saw the open call's structure break off (`WholeCalls._end_call`: not whole),
    #: or close where only what may follow it was still looked for (whole at the end of output too).
    _call_broken = False
    _call_closed = False
    #: Text the format took as structure right before the open call (a joining marker), given back
    #: with the call's text when it is not whole (`WholeCalls._not_a_call`).
    _call_lead = ""
    #: The text `parse` feeds in one piece (`WholeCalls._raw_text`); None in a stream.
    _whole_text: str | None = None

    # Slots: the state is read and written on every chunk, and with a format's own
    # attributes an instance would outgrow the interpreter's shared-key dictionaries (30
    # keys), which makes every attribute access slower. Formats may declare theirs too.
    __slots__ = (
        "_add_calls",
        "_arg_parts",
        "_args_held",
        "_base",
        "_buf",
        "_call_start",
        "_content_append",
        "_cut",
        "_doubled",
        "_dropping",
        "_exact",
        "_final",
        "_held_markup",
        "_in_call",
        "_index",
        "_markup",
        "_mode",
        "_out_calls",
        "_out_content",
        "_pending_ws",
        "_pos",
        "_raw_at",
        "_raw_kept",
        "_seen_structure",
        "_servers",
        "_span",
        "_span_abs",
        "_span_parts",
        "_ws_mode",
        "call_spans",
        "parser",
        "raw_texts",
    )

    def __init__(self, parser: Any) -> None:  # (a `tool_parser.BuiltinToolParser`: it imports this module)
        super().__init__()
        self.parser = parser
        # Every slot is set here: none is read from the class first and from the instance
        # later (the interpreter's attribute caches would not hold).
        #: What `feed` may do in place now (`_fast_mode`); None until the first full step, or the start's.
        self._mode: Any = self._start_mode
        self._exact = self._start_exact
        self._content_append = self._acc.content_parts.append
        self._add_calls = self._acc.add_calls
        self._buf = ""
        self._pos = 0
        self._base = 0  # absolute offset of _buf[0]
        self._final = False
        self._span: int | None = None
        self._span_parts: list[str] = []
        self._span_abs = 0
        self._out_content: list[str] = []
        self._out_calls: list[ToolCallDelta] = []
        self._pending_ws: list[str] = []
        self._ws_mode = True  # after a call/structure or at start: whitespace is held
        self._seen_structure = False
        self._index = -1
        self._in_call = False
        self._args_held: list[str] = []
        self._arg_parts: list[str] = []  # fragments for _out_calls[-1], joined once per chunk
        self._call_start = 0
        #: absolute (start, end) of each named call's span, for `ToolCall.raw_text`.
        self.call_spans: list[tuple[int, int]] = []
        #: ... and each ended call's raw text, cut from the fed text kept from `open_from()` on
        #: (`_raw_kept`, starting at offset `_raw_at`; nothing is kept by a stream without history).
        self.raw_texts: list[str] = []
        self._raw_kept: list[str] = [] if self._acc.keeps_history else Discarded()
        self._raw_at = 0
        #: conventions="servers": content ends where the first call begins (`_dropping` from
        #: then on: what `_content` is given goes to the accumulator's `dropped_parts`).
        self._servers = parser.cuts_content
        #: ... and content ends at the format's start marker, whatever follows it.
        self._cut = parser.cut_marker
        self._dropping = False
        #: ... and the markup that opens no call both servers leave out (see `_unnamed`).
        self._markup: tuple[str, ...] = parser.markup_markers
        self._doubled = parser.doubled_start
        self._held_markup: list[str] = []

    # -- life cycle ---------------------------------------------------------------------------
    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """Feed the next chunk (kept for the calls' raw text); the delta is recorded here.
        Nothing held and the machine in a state `_mode` names: a chunk its state decides in
        one act goes to that act (`_exact`); else the chunk is handled in place when the
        format's step would do nothing but hand it whole to `_content` (no marker's first
        character in it), to `_args` (its raw scanner consumes it whole) or to a `Quiet`
        sink; else `_feed`, the machine itself."""
        if self._flushed:
            raise StreamStateError.fed_after_flush()
        self._raw_kept.append(text)  # (trimmed below, not on the arguments path: see `_keep_raw`)
        try:
            mode = self._mode
            if mode is not None and text:  # (a mode is set only while nothing is held)
                exact = self._exact
                if exact is not None:
                    act = exact.get(text)
                    if act is not None:
                        delta = act(self, text)
                        if delta is not None:
                            return delta
                cls = mode.__class__
                if cls is ArgsScan:  # (arguments first: the most common chunk; never with a span)
                    raw = mode.raw
                    # Consumed whole without a change of the scanner's state (no string opens
                    # or closes), else scanned for real: whole when it ends at the chunk's end.
                    if raw.in_str and not raw.esc and '"' not in text and "\\" not in text:
                        whole = True
                    elif raw.depth:
                        # Inside a container, a chunk of strings, escapes, commas and colons
                        # (no bracket or marker character) only opens and closes strings:
                        # `scan` would consume it whole. Its effect is known per text.
                        effect = raw.effects.get(text)
                        if effect is None:
                            effect = raw.effect_of(text)
                        whole = bool(effect)
                        if whole:
                            # (effects are indexed by the state before: 2 * in_str + esc)
                            raw.in_str, raw.esc = effect[2 * raw.in_str + raw.esc]
                    else:
                        whole = not raw.in_str and not raw.esc and raw.plain.fullmatch(text) is not None
                    if not whole and not (mode.at_close and raw.depth == 1 and "}" in text):
                        # (A "}" one level in, where the value ends at its close, nearly
                        # always closes it: the step scans that chunk, no trial scan first.)
                        saved = raw.in_str, raw.esc, raw.depth
                        whole = raw.scan(text, 0, mode.markers, False, mode.stops, mode.at_close)[1] == EOB
                        if not whole:
                            raw.in_str, raw.esc, raw.depth = saved
                    if whole:
                        self._base += self._pos
                        self._buf = text
                        self._pos = len(text)
                        # Held until the call is whole (`WholeCalls`), whitespace held or released:
                        # `_args` decides. The chunk is consumed; by the `ArgsScan` contract a step
                        # on the empty rest does nothing: what is left is the delta.
                        self._args(text)
                        return self._release()
                elif len(self._raw_kept) >= RAW_TRIM_EVERY:
                    pass  # (this chunk takes `_feed`'s path, which trims the kept text first)
                elif cls is Quiet:
                    if mode.stop(text) is None:
                        # The step's only act: the chunk to the sink. Nothing to show.
                        # (`_take_whole`, inline: names and keys come a piece at a time.)
                        keep = self._pos
                        span = self._span
                        if span is not None:
                            if span < keep:
                                self._span_parts.append(self._buf[span:keep])
                            self._span = 0
                        self._base += keep
                        self._buf = text
                        self._pos = len(text)
                        if mode.sink is not None:
                            mode.sink(text)
                        return empty_delta()
                elif self._span is None and mode(text) is None:  # (a span: the step keeps it)
                    self._base += self._pos
                    self._buf = text
                    self._pos = len(text)
                    if self._ws_mode:
                        self._content(text)
                        text = "".join(self._out_content)
                        self._out_content = []
                    if text:
                        self._content_append(text)
                    return delta_of(text, "", [])
            self._keep_raw() if len(self._raw_kept) >= RAW_TRIM_EVERY else None
            delta = self._feed(text, token_ids)
            # The state may have changed; a mode only while nothing is held.
            self._mode = self._fast_mode() if self._pos == len(self._buf) else None
        except ParsebridgeError:
            raise
        except Exception as exc:
            raise self._typed(exc, "stream.feed", text) from exc
        return delta

    def flush(self) -> StreamDelta:
        """End of output (see `_StreamBase.flush`), with failures typed as the guard would."""
        if self._flushed:
            return make_delta()
        self._flushed = True
        parser = self.parser
        return call_typed(parser.backend, parser.name, "stream.flush", self._end)

    def finish(self) -> ToolParseResult:
        """Flush and assemble (see `ToolStreamBase.finish`), with failures typed as the guard would."""
        parser = self.parser
        return call_typed(parser.backend, parser.name, "stream.flush", self._flushed_result)

    def _flushed_result(self) -> ToolParseResult:
        self.flush()
        acc = self._acc
        calls = acc.tool_calls()
        self._keep_raw()
        for call, raw in zip(calls, self.raw_texts, strict=False):
            set_raw_text(call, raw)  # fresh calls built by the accumulator
        return make_tool_result(acc.content, calls, acc.dropped, acc.reasoning)

    def _typed(self, exc: Exception, call: str, text: object = "") -> BackendError | TypeError:
        """What the guard would raise for `exc` under on_error="raise" (it is not around this stream);
        for a chunk that is not text, the caller's mistake, not the parser's (`not_text`)."""
        if not isinstance(text, str):
            return not_text(text, "feed()")
        parser = self.parser
        return BackendError.wrapping(parser.backend, parser.name, call, exc)

    def _fast_mode(self) -> Any:
        """What `feed` may do in place, with nothing held, in the machine's state now.

        A format returns `content_mode(firsts)` only in a state whose step, on a chunk
        holding none of the characters `firsts` with nothing held, does nothing but
        `_content(chunk)`; an `ArgsScan` only in a state whose step, on a chunk that
        scan consumes whole (EOB), does nothing but that scan and `_args(chunk)`; a
        `Quiet` only in a state whose step, on a chunk its `stop` finds nothing in, does
        nothing but hand it to the sink; else None. The state only changes in `_feed`
        and in `_exact` acts, so `feed` asks after each full step that leaves nothing
        held (`_mode` is None while something is: `feed` tests one attribute per chunk);
        a format that has acts sets `_exact` for the state here too (they are tried
        only while a mode is set).
        """
        return None

    def _feed(self, text: str, token_ids: Sequence[int] | None, final: bool = False) -> StreamDelta:
        """The machine itself on the buffer, and the delta it makes, recorded in the accumulator.

        `feed`'s shortcuts agree with it. With `final`, the end of output: the machine
        runs without waiting for more, then settles a truncated call (`_at_end`, rules
        2 and 4) and the held whitespace. It records its delta itself (this is the path
        of every chunk that needs a step, so the recording is not a frame of its own):
        it is called only by this class's `feed`, `flush` and `parse`, never by the base
        class's `feed`/`flush`, which would record it again.
        """
        keep = self._pos
        buf = self._buf
        span = self._span
        if span is not None:
            if span < keep:
                self._span_parts.append(buf[span:keep])
            self._span = span - keep if span > keep else 0
            self._buf = buf[keep:] + text
        elif keep == len(buf):
            self._buf = text
        else:
            self._buf = buf[keep:] + text
        self._base += keep
        self._pos = 0
        step = self._step
        if final:
            self._final = True
            while step():
                pass
            self._at_end()
            if self._span is not None:
                self._reject(len(self._buf))
            if self._in_call:
                self._end_call(len(self._buf))
            if self._held_markup:  # (a doubled start marker whose span was never decided)
                self._content("".join(self._held_markup))
                self._held_markup = []
            self._settle_held_ws()
        elif self._idle_when_empty:
            while step() and self._pos < len(self._buf):
                pass
        else:
            while step():
                pass
        return self._release()

    def _end(self) -> StreamDelta:
        """End of output: `_feed("", final=True)`, recorded. With nothing held, no call open
        and the machine in a state whose final steps do nothing (`_at_rest`), only the held
        whitespace is left to settle: no step runs."""
        if (
            self._pos == len(self._buf)
            and self._span is None
            and not self._in_call
            and not self._held_markup
            and self._at_rest()
        ):
            self._final = True
            self._settle_held_ws()
            return self._release()
        return self._feed("", None, final=True)

    def _at_rest(self) -> bool:
        """True in a state whose steps, at the end of output with nothing left in the buffer,
        do nothing and whose `_at_end` does nothing when no call is open or undecided."""
        return False

    def _release(self) -> StreamDelta:
        """The delta of what the machine released since the last one, recorded."""
        if self._arg_parts:
            self._seal()
        out = self._out_content
        if out:
            content = "".join(out)
            self._out_content = []
            self._content_append(content)
        else:
            content = ""
        calls = self._out_calls
        if calls:
            self._out_calls = []
            self._add_calls(calls)
        else:
            calls = []  # never the list the machine appends to next
        return delta_of(content, "", calls)

    def _take_whole(self, text: str) -> None:
        """`_feed`'s buffer shift for a chunk taken whole with nothing held: the buffer is
        the chunk, consumed (an undecided span keeps the text it had)."""
        keep = self._pos
        span = self._span
        if span is not None:
            if span < keep:
                self._span_parts.append(self._buf[span:keep])
            self._span = 0
        self._base += keep
        self._buf = text
        self._pos = len(text)

    # -- format hooks ---------------------------------------------------------------------------
    def _step(self) -> bool:
        """Consume what can be decided; False when more text is needed (or none is left)."""
        raise NotImplementedError

    def _at_end(self) -> None:
        """End of output after the final steps: settle a truncated call (the driver does the rest)."""

"""Reasoning sections with more than one marker: alternatives, implicit closers, answer wrappers.

`ThinkTagReasoningParser` reads one start/end pair. Many families need a
little more, and all of it is data on their `ReasoningFormat`:

* ``alt_starts`` / ``alt_ends`` — other spellings of the markers (Granite's
  "Here's my thought process:", K2 Horizon's per-effort think tokens);
* ``closers`` — a tool-call section opened straight from reasoning ends the
  reasoning without an end marker; the closer stays in the content, where the
  tool parser reads it (Kimi-K2's ``<|tool_calls_section_begin|>``, GLM's and
  Nemotron's ``<tool_call>``, DeepSeek-V4's DSML block); ``closer_follows``
  says, per closer, what follows one that opens a call (else it is text);
* ``content_wrappers`` — markers around the answer that are not content
  (Hunyuan's ``<answer>``, ERNIE's ``<response>``, Cohere's ``<|START_TEXT|>``);
  with ``json_calls``, one inside a JSON string of a tool call (after a closer)
  is the call's text (`CallStrings`);
* ``drop_stray_end`` — a reply that did not think may open with a bare end
  marker the template left behind (MiniMax-M3): it is dropped;
* ``drop_later_ends`` — end markers after the one that closed reasoning are
  dropped from the content (vLLM's reading for Qwen3, GLM, Kimi-K2 and others),
  up to the first tool call (a closer, or a ``call_starts`` marker: Mistral's
  ``[TOOL_CALLS]``, Gemma's ``<|tool_call>``, Qwen3-Coder's bare ``<function=``):
  in a call one is a value's text.

Rules (shared with the think-tag parser, so both read a plain pair alike):
leading whitespace and one start marker are consumed when the output opens
with one, and so are start markers repeated right after it (``<think><think>``:
vLLM and SGLang both drop them; Kimi K3's servers keep them as reasoning, and so does
"servers": ``servers_keep_repeated_start``); otherwise reasoning has started only when the
prompt opened it (the family's default, `reasoning_started=`, or a `prompt=`
whose last start marker is not closed). Reasoning runs to the first end marker
or closer — earliest wins, the longest marker at a tie — or to the end of
output (truncated). Content is the rest, verbatim, minus wrapper markers and,
with ``drop_later_ends`` once an end marker closed reasoning, minus later
(stray) end markers, as vLLM reads them. Empty reasoning or content is None.

Where the frameworks differ on the implicit closer: SGLang ends reasoning at
the tool section only when no end marker follows anywhere; vLLM's grammar
ends it at the first tool section. We follow vLLM — a stream cannot know
whether an end marker will come, and stream ≡ one-shot is our contract —
but for a closer written as text: where the format says what follows a
closer that opens a call (``closer_follows``: ``<tool_call>`` then a JSON
object, ``<function=`` or a GLM name; a DSML block then its invoke), a closer
followed by other text (``I will emit a <tool_call> block``) is reasoning's
text, and one followed by nothing but whitespace, or by the end of output with
no end marker between (cut off while writing the call), still ends it. A stream holds
the text from such a closer until `CLOSER_WINDOW` characters (or the end of
output) decide.

Streams hold back only a suffix that could still become a marker, and never
rescan emitted text: linear in the output length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ....formats._base import CLOSER_WINDOW
from ....protocol import (
    ReasoningBlock,
    ReasoningParseResult,
    ReasoningStreamBase,
    StreamDelta,
)
from ....protocol.models import delta_of, make_block, make_reasoning_result
from ....protocol.streams import Discarded
from .conventions import SERVERS, check_conventions
from .reasoning_start import FormatReasoningParser
from .section_markers import CallStrings, CallValues, Markers, unwrap


class SectionReasoningParser(FormatReasoningParser):
    """Reasoning described by a `ReasoningFormat` (subclasses set `format` and `name`)."""

    name = "sections"

    def __init__(self, *, started: bool | None = None, prompt: str | None = None, **options: Any) -> None:
        super().__init__(started=started, prompt=prompt, **options)
        fmt = self.format
        servers = check_conventions(options.get("conventions")) == SERVERS
        #: the markers read: every spelling, or under "servers" for a format whose servers read only
        #: its own markers, those (`servers_canonical_markers`)
        canonical = servers and fmt.servers_canonical_markers
        starts, ends = ((fmt.start,), (fmt.end,)) if canonical else (fmt.starts, fmt.ends)
        self.starts = Markers(starts)
        self.ends = Markers(ends)
        self.end_set = frozenset(ends)
        self.stops = Markers((*ends, *fmt.closers))
        self.wrappers = Markers(fmt.content_wrappers)
        #: start markers repeated right after the opener are consumed (not under "servers" for a
        #: format whose servers keep them as reasoning: `servers_keep_repeated_start`)
        self.skips_repeats = not (servers and fmt.servers_keep_repeated_start)
        #: once an end marker closed reasoning, later (stray) end markers leave the content too, up to
        #: the tool section a closer (or another call start: `call_starts`) opens (`drops_to`): an end
        #: marker in it is a call's text
        self.drops = Markers((*fmt.content_wrappers, *ends)) if fmt.drop_later_ends else self.wrappers
        #: ... and, where the calls are JSON (`json_calls`), a wrapper inside one of their strings is
        #: their text: wrappers leave a tool section only outside its strings (`CallStrings`)
        self.json_calls = bool(fmt.json_calls or fmt.value_spans) and bool(self.wrappers.texts)
        sections = fmt.drop_later_ends or self.json_calls
        calls = [m for m in (*fmt.closers, *fmt.call_starts) if m not in self.wrappers.texts]
        self.closer_set = frozenset(calls) if sections else frozenset()
        #: closers that end reasoning only where a call's start follows them (`closer_follows`)
        self.follows = {closer: re.compile(pattern) for closer, pattern in fmt.closer_follows}
        self.drops_to = Markers((*self.drops.texts, *self.closer_set)) if self.closer_set else self.drops
        #: ... and with no end marker before the content, only wrappers leave it (up to a tool section)
        self.wraps_to = (
            Markers((*self.wrappers.texts, *self.closer_set)) if self.json_calls else self.wrappers
        )

    def parse(
        self, text: str, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> ReasoningParseResult:
        started = self.is_started(reasoning_started, prompt)
        lead = len(text) - len(text.lstrip())
        opener = self.starts.opens(text, lead)
        if not opener:
            stray = self.ends.opens(text, lead) if self.format.drop_stray_end and not started else ""
            if stray or not started:
                rest = text[lead + len(stray) :] if stray else text
                return make_reasoning_result(None, self._unwrapped(rest, self.wraps_to) or None, None)
        begin = lead + len(opener) if opener else 0
        while opener and self.skips_repeats and (again := self.starts.opens(text, begin)):
            begin += len(again)  # a start marker repeated right after the opener
        at, stop = self.stops.find(text, begin)
        while at != -1 and stop not in self.end_set and not self.closes(text, at, stop, final=True):
            at, stop = self.stops.find(text, at + len(stop))  # (a closer written as reasoning's text)
        closed_by_end = at != -1 and stop in self.end_set
        if at == -1:
            reasoning, rest, end = text[begin:], "", len(text)
        else:
            end = at + len(stop) if closed_by_end else at
            reasoning, rest = text[begin:at], text[end:]
        content = self._unwrapped(rest, self.drops_to if closed_by_end else self.wraps_to) or None
        if not reasoning:
            return make_reasoning_result(None, content, None)
        end_marker = stop if closed_by_end else None
        block = make_block(reasoning, opener or None, end_marker, lead if opener else 0, end, True)
        return make_reasoning_result(reasoning, content, block)

    def closes(self, text: str, at: int, closer: str, final: bool) -> bool | None:
        """Whether `closer` at `at` ends reasoning: where the format has no `closer_follows` for it,
        or a call's start (its pattern) or only whitespace follows it (in the `CLOSER_WINDOW`
        characters after it), or the output ends in that window with no end marker (cut off
        while writing the call, as both servers read it); False where other text does:
        reasoning's text; None while a stream has too little text after it to tell."""
        pattern = self.follows.get(closer)
        if pattern is None:
            return True
        after = at + len(closer)
        window = text[after : after + CLOSER_WINDOW]
        if pattern.match(window):
            return True
        if len(window) < CLOSER_WINDOW:
            return None if not final else self.ends.find(window)[0] == -1
        return not window.strip()

    def _unwrapped(self, rest: str, markers: Markers) -> str:
        """The content `rest` without the `markers` (wrappers, and later end markers after the one
        that closed reasoning: `drops_to`) up to the first tool call (a closer), and from there on
        without the wrappers (outside its JSON strings, where the format's calls are JSON)."""
        at, closer = markers.find(rest, 0)
        while at != -1 and closer not in self.closer_set:
            at, closer = markers.find(rest, at + len(closer))
        if at == -1:
            return unwrap(rest, markers)
        if not self.json_calls:
            return unwrap(rest[:at], markers) + unwrap(rest[at:], self.wrappers)
        body = rest[at + len(closer) :]
        return unwrap(rest[:at], markers) + closer + self.call_reader().unwrap(body, self.wrappers, True)[0]

    def call_reader(self) -> CallStrings | CallValues:
        """What tells a tool section's values from its wrappers (`json_calls`, `value_spans`)."""
        spans = self.format.value_spans
        return CallValues(spans) if spans else CallStrings()

    def stream(self, *, reasoning_started: bool | None = None, prompt: str | None = None) -> SectionStream:
        return SectionStream(self, self.is_started(reasoning_started, prompt))


class SectionStream(ReasoningStreamBase):
    """Incremental twin of `SectionReasoningParser.parse` (same result at any chunking)."""

    def __init__(self, parser: SectionReasoningParser, started: bool) -> None:
        super().__init__()
        self._p = parser
        self._started = started
        self._stray = parser.format.drop_stray_end and not started
        self._phase = "lead"  # lead → reasoning → content
        self._held = ""
        self._pos = 0  # output characters consumed before `_held`
        self._lead_ws = 0
        self._opener = ""
        self._block_start = 0
        self._end_marker: str | None = None
        self._block_end = -1
        #: The block's text, for `finish()`; made `without_history`, only whether there was any
        #: (a list of every reasoning chunk would grow with the output).
        self._reasoning: list[str] = [] if self._acc.keeps_history else Discarded()
        self._fresh = False  # right after the opener: a repeated start marker is consumed
        self._in_section = False  # a closer came after the end marker: no later end marker is dropped
        #: In the section, where its calls' JSON strings are (`json_calls`).
        self._strings = parser.call_reader() if parser.json_calls else None

    def pending_text(self) -> str:
        return self._held

    def _take(self, size: int) -> str:
        out, self._held = self._held[:size], self._held[size:]
        self._pos += size
        return out

    def _step(self, final: bool) -> StreamDelta:
        reasoning = content = ""
        if self._phase == "lead":
            self._lead(final)
        if self._phase == "reasoning":
            reasoning = self._scan_reasoning(final)
        if self._phase == "content":
            content = self._scan_content(final)
        return delta_of(content, reasoning, [])

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if not self._held and text:  # a chunk no marker can start in is what the step would give whole
            if self._phase == "reasoning" and not self._fresh and self._p.stops.absent(text):
                self._pos += len(text)
                self._reasoning.append(text)
                return delta_of("", text, [])
            if self._phase == "content" and self._content_markers().absent(text) and not self._tracks(text):
                self._pos += len(text)
                return delta_of(text, "", [])
        self._held += text
        return self._step(final=False)

    def _content_markers(self) -> Markers:
        """What leaves the content: wrapper markers, and later end markers once one closed reasoning
        (up to a closer: `drops_to` and `wraps_to` find those too, and `_scan_content` keeps them)."""
        if self._in_section:
            return self._p.wrappers
        return self._p.drops_to if self._end_marker is not None else self._p.wraps_to

    def _tracks(self, text: str) -> bool:
        """In a tool section whose strings are tracked, `text` may open or close one (the step reads it)."""
        return self._in_section and self._strings is not None and bool(text)

    def _flush(self) -> StreamDelta:
        delta = self._step(final=True)
        if self._reasoning:
            self.block = ReasoningBlock(
                content="".join(self._reasoning),
                start_marker=self._opener or None,
                end_marker=self._end_marker,
                start_index=self._block_start,
                end_index=self._block_end if self._block_end != -1 else self._pos,
            )
        return delta

    def _lead(self, final: bool) -> None:
        """Decide how the output opens: a start marker, a stray end marker, or text."""
        tail = self._held[self._lead_ws :]
        self._lead_ws += len(tail) - len(tail.lstrip())
        lead = self._lead_ws
        opener = self._p.starts.opens(self._held, lead)
        if opener and not final and self._p.starts.could_open(self._held[lead:]):
            return  # a longer start marker may still follow (``<|channel>`` / ``<|channel>thought\n``)
        if opener:
            self._opener = opener
            self._block_start = self._pos + lead
            self._take(lead + len(opener))
            self._phase = "reasoning"
            self._fresh = self._p.skips_repeats
            return
        stray = self._p.ends.opens(self._held, lead) if self._stray else ""
        if stray:
            self._take(lead + len(stray))
            self._phase = "content"
            return
        rest = self._held[lead:]
        if not final and (self._p.starts.could_open(rest) or (self._stray and self._p.ends.could_open(rest))):
            return  # whitespace, or a prefix of a marker: wait
        self._phase = "reasoning" if self._started else "content"

    def _skip_repeats(self, final: bool) -> bool:
        """Consume start markers repeated right after the opener; False while that is undecided."""
        starts = self._p.starts
        while True:
            if not final and starts.could_open(self._held):
                return False  # nothing yet, or what may still become a (longer) start marker
            again = starts.opens(self._held, 0)
            if not again:
                break
            self._take(len(again))
        self._fresh = False
        return True

    def _scan_reasoning(self, final: bool) -> str:
        if self._fresh and not self._skip_repeats(final):
            return ""
        held = self._held
        at, stop = self._p.stops.find(held)
        hold = len(held) if final else self._p.stops.hold_from(held)
        while at != -1 and at < hold and stop not in self._p.end_set:
            closes = self._p.closes(held, at, stop, final)
            if closes:
                break
            if closes is None:  # (held from the closer until the text after it decides)
                hold, at = at, -1
                break
            at, stop = self._p.stops.find(held, at + len(stop))  # (reasoning's text)
        if at != -1 and at < hold:
            part = self._take(at)
            if stop in self._p.end_set:
                self._take(len(stop))
                self._end_marker = stop
            self._block_end = self._pos
            self._phase = "content"
        else:
            part = self._take(hold)
        if part:
            self._reasoning.append(part)
        return part

    def _scan_content(self, final: bool) -> str:
        wrappers = self._content_markers()
        if not wrappers.texts:
            return self._take(len(self._held))
        out: list[str] = []
        while True:
            if self._in_section and self._strings is not None:  # (wrappers outside its strings)
                kept, used = self._strings.unwrap(self._held, wrappers, final)
                self._take(used)
                out.append(kept)
                return "".join(out)
            held = self._held
            at, marker = wrappers.find(held)
            hold = len(held) if final else wrappers.hold_from(held)
            if at != -1 and at < hold:
                out.append(self._take(at))
                if marker in self._p.closer_set:  # (a tool section: its text stays, from here on)
                    out.append(self._take(len(marker)))
                    self._in_section = True
                    wrappers = self._p.wrappers
                    if not wrappers.texts:
                        out.append(self._take(len(self._held)))
                        return "".join(out)
                    continue
                self._take(len(marker))
                continue
            out.append(self._take(hold))
            return "".join(out)

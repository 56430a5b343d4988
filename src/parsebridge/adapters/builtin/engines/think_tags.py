"""Think-tag reasoning: `deepseek_r1`, and `think` (any start/end markers).

(``qwen3`` is a preset of `reasoning_presets`: a tool call opened straight
from its reasoning ends it.) The two differ only in where reasoning may start:

* ``deepseek_r1`` — R1's chat template ends the prompt with ``<think>``, so
  the output starts inside reasoning unless told otherwise
  (`reasoning_started=False`, e.g. thinking disabled).
* ``think`` — configurable: ``start``, ``end`` and ``started`` options.

Rules shared by both (and checked by the conformance fixtures): when
reasoning has started, one leading start marker (after optional whitespace)
is consumed, as models often repeat the marker the template already wrote,
and so are start markers repeated right after it (``<think><think>``);
reasoning runs to the first end marker, or to the end of output when it is
never closed; everything after the end marker is content, verbatim (families
whose later, stray end markers are dropped are served by `reasoning_sections`). Empty
reasoning or content is None. A prompt may be given instead of
`reasoning_started` (see `reasoning_start`): reasoning has started when its
last start marker comes after its last end marker (a template that wrote
``<think></think>`` to disable thinking has not started it).

Streams hold back only a suffix that could still become a marker, so they
cost time linear in the output and never delay more than a marker's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....formats import think
from ....protocol import (
    InvalidSpecError,
    ReasoningParserBase,
    ReasoningParseResult,
    ReasoningStreamBase,
    StreamDelta,
)
from ....protocol.models import make_block, make_delta, make_reasoning_result
from ....protocol.streams import Discarded
from .reasoning_start import default_start, resolve_started


def held_prefix(buffer: str, marker: str) -> int:
    """Length of the longest suffix of `buffer` that is a proper prefix of `marker`."""
    for size in range(min(len(buffer), len(marker) - 1), 0, -1):
        if marker.startswith(buffer[-size:]):
            return size
    return 0


class ThinkTagReasoningParser(ReasoningParserBase):
    """Reasoning between configurable markers (``think``: ``<think>``/``</think>`` by default)."""

    backend = "builtin"
    name = "think"
    start_marker = think.START
    end_marker = think.END
    started_by_default = False

    def __init__(
        self,
        *,
        start: str | None = None,
        end: str | None = None,
        started: bool | None = None,
        prompt: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.start_marker = self.start_marker if start is None else start
        self.end_marker = self.end_marker if end is None else end
        if not self.start_marker or not self.end_marker:
            raise InvalidSpecError(f"builtin:{self.name}: reasoning markers must be non-empty strings")
        self.started_by_default = default_start(self.name, started, self.started_by_default, options)
        self.prompt = prompt
        self.markers = (self.start_marker, self.end_marker)

    def is_started(self, reasoning_started: bool | None = None, prompt: str | None = None) -> bool:
        """The start state (`reasoning_start`): explicit flag, then a prompt, then the default."""
        return resolve_started(
            reasoning_started,
            self.prompt if prompt is None else prompt,
            self.started_by_default,
            (self.start_marker,),
            (self.end_marker,),
        )

    def parse(
        self, text: str, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> ReasoningParseResult:
        started = self.is_started(reasoning_started, prompt)
        lead = len(text) - len(text.lstrip())
        has_start = text.startswith(self.start_marker, lead)
        if not (started or has_start):
            return make_reasoning_result(None, text or None, None)
        begin = lead + len(self.start_marker) if has_start else 0
        while has_start and text.startswith(self.start_marker, begin):
            begin += len(self.start_marker)  # a start marker repeated right after the opener
        stop = text.find(self.end_marker, begin)
        if stop == -1:
            reasoning, content, end = text[begin:], "", len(text)
        else:
            end = stop + len(self.end_marker)
            reasoning, content = text[begin:stop], text[end:]
        if not reasoning:
            return make_reasoning_result(None, content or None, None)
        block = make_block(
            reasoning,
            self.start_marker if has_start else None,
            self.end_marker if stop != -1 else None,
            lead if has_start else 0,
            end,
            True,
        )
        return make_reasoning_result(reasoning, content or None, block)

    def stream(self, *, reasoning_started: bool | None = None, prompt: str | None = None) -> ThinkTagStream:
        return ThinkTagStream(self, self.is_started(reasoning_started, prompt))


class ThinkTagStream(ReasoningStreamBase):
    """Incremental twin of `ThinkTagReasoningParser.parse` (same results at any chunking)."""

    # Phases: "lead" (whitespace and a possible start marker at the very beginning),
    # "reasoning" (scanning for the end marker), "content" (everything passes through).
    def __init__(self, parser: ThinkTagReasoningParser, started: bool) -> None:
        super().__init__()
        self._start = parser.start_marker
        self._end = parser.end_marker
        self._started = started
        self._phase = "lead"
        self._held = ""
        self._pos = 0  # characters of output consumed before `_held`
        self._block_start = 0
        self._start_seen = False
        # (the block's text; made `without_history`, only whether there was any)
        self._reasoning_parts: list[str] = [] if self._acc.keeps_history else Discarded()
        self._closed = False
        self._block_end = 0
        self._lead_ws = 0  # leading whitespace seen while deciding the start
        self._fresh = False  # right after the opener: a repeated start marker is consumed

    def pending_text(self) -> str:
        return self._held

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        # Fast paths (most chunks): nothing held, and the chunk cannot hold or end a marker.
        # They record into the accumulator themselves (the base's `feed` would call `add`).
        if not self._held and not self._flushed:
            phase = self._phase
            if phase == "content":
                self._pos += len(text)
                if text:
                    self._acc.content_parts.append(text)
                return make_delta(text)
            if phase == "reasoning" and not self._fresh and self._end[0] not in text:
                # No first character of the end marker: no marker, no marker prefix to hold back.
                self._pos += len(text)
                if text:
                    self._reasoning_parts.append(text)
                    self._acc.reasoning_parts.append(text)
                return make_delta("", text)
        return super().feed(text, token_ids)

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._held += text
        reasoning: list[str] = []
        content: list[str] = []
        if self._phase == "lead":
            self._lead(final=False)
        if self._phase == "reasoning":
            reasoning.append(self._scan_reasoning(final=False))
        if self._phase == "content" and self._held:
            content.append(self._take(len(self._held)))
        return make_delta("".join(content), "".join(reasoning))

    def _flush(self) -> StreamDelta:
        if self._phase == "lead":
            self._lead(final=True)
        reasoning = self._scan_reasoning(final=True) if self._phase == "reasoning" else ""
        content = self._take(len(self._held)) if self._phase == "content" else ""
        if self._reasoning_parts:
            whole = "".join(self._reasoning_parts)
            self.block = make_block(
                whole,
                self._start if self._start_seen else None,
                self._end if self._phase == "content" and self._closed else None,
                self._block_start,
                self._block_end if self._closed else self._pos,
                True,
            )
        return make_delta(content, reasoning)

    def _take(self, size: int) -> str:
        out, self._held = self._held[:size], self._held[size:]
        self._pos += size
        return out

    def _lead(self, final: bool) -> None:
        """Decide whether the output opens with a start marker (consumed with its leading whitespace)."""
        # Only text after the known leading whitespace is scanned: whitespace-only
        # output streamed char by char stays linear.
        tail = self._held[self._lead_ws :]
        self._lead_ws += len(tail) - len(tail.lstrip())
        lead = self._lead_ws
        stripped = self._held[lead:]
        if stripped.startswith(self._start):
            self._start_seen = True
            self._block_start = self._pos + lead
            self._take(lead + len(self._start))
            self._phase = "reasoning"
            self._fresh = True
            return
        if not final and self._start.startswith(stripped):
            return  # still whitespace, or a prefix of the start marker: wait
        self._phase = "reasoning" if self._started else "content"

    def _skip_repeats(self, final: bool) -> bool:
        """Consume start markers repeated right after the opener; False while that is undecided."""
        while self._held.startswith(self._start):
            self._take(len(self._start))
        if not final and (not self._held or self._start.startswith(self._held)):
            return False
        self._fresh = False
        return True

    def _scan_reasoning(self, final: bool) -> str:
        if self._fresh and not self._skip_repeats(final):
            return ""
        stop = self._held.find(self._end)
        if stop != -1:
            part = self._take(stop)
            self._take(len(self._end))
            self._closed = True
            self._block_end = self._pos
            self._phase = "content"
        else:
            keep = 0 if final else held_prefix(self._held, self._end)
            part = self._take(len(self._held) - keep)
        if part:
            self._reasoning_parts.append(part)
        return part


class DeepSeekR1ReasoningParser(ThinkTagReasoningParser):
    """DeepSeek-R1: the template opens ``<think>``, so output starts inside reasoning."""

    name = "deepseek_r1"
    started_by_default = think.DEEPSEEK_R1.starts_in_prompt

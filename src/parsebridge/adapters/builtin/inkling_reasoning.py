"""Inkling reasoning: typed content blocks, ``<|message_model|>[META]<|content_KIND|>BODY<|end_message|>``.

Reasoning is the bodies of the ``content_thinking`` blocks, joined; content is
the bodies of the ``content_text`` blocks, text outside any block, and every
other block (tool invocations, tool errors) verbatim with its markers, for
the tool parser to read. The block markers of thinking and text blocks, and
``<|content_model_end_sampling|>``, are structure. A block cut off by the end
of output keeps what it has (a thinking block: reasoning). vLLM 0.33 and
SGLang 0.5.23 read thinking and text blocks alike; before a tool block SGLang
keeps ``<|message_model|>`` (so do we: the tool parser reads the whole block)
where vLLM drops it.

The start state is ignored: the output says which block is which.
One-shot is the stream fed once, so both agree exactly; streams hold back
only a suffix that could still become a marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...formats.inkling import BLOCK_ENDS, KINDS, MESSAGE_MODEL, TEXT, THINKING
from ...formats.inkling import REASONING as FORMAT
from ...protocol import ReasoningParserBase, ReasoningParseResult, ReasoningStreamBase, StreamDelta
from ...protocol.models import delta_of
from .engines.section_markers import Markers

_MARKERS = Markers((MESSAGE_MODEL, *KINDS, *BLOCK_ENDS))
_OUTSIDE, _HEADER, _THINKING, _TEXT, _OTHER = range(5)


class InklingReasoningParser(ReasoningParserBase):
    """Inkling thinking blocks (builtin, incremental)."""

    backend = "builtin"
    name = "inkling"
    format = FORMAT

    def __init__(self, *, started: bool | None = None, prompt: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.markers = FORMAT.markers

    def parse(
        self, text: str, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> ReasoningParseResult:
        s = InklingReasoningStream()
        s.feed(text)
        return s.finish()

    def stream(
        self, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> InklingReasoningStream:
        return InklingReasoningStream()


class InklingReasoningStream(ReasoningStreamBase):
    """Blocks read as they come: text between markers goes where the current block says."""

    def __init__(self) -> None:
        super().__init__()
        self._held = ""
        self._mode = _OUTSIDE
        self._header: list[str] = []  # ``<|message_model|>`` and meta text until the kind is known

    def pending_text(self) -> str:
        return "".join(self._header) + self._held

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._held += text
        return self._scan(final=False)

    def _flush(self) -> StreamDelta:
        delta = self._scan(final=True)
        if self._header:  # a header no kind followed: text, verbatim
            delta.content += "".join(self._header)
            self._header = []
        return delta

    def _scan(self, final: bool) -> StreamDelta:
        reasoning: list[str] = []
        content: list[str] = []
        while True:
            held = self._held
            at, marker = _MARKERS.find(held)
            hold = len(held) if final else _MARKERS.hold_from(held)
            if at == -1 or at >= hold:
                self._text(held[:hold], reasoning, content)
                self._held = held[hold:]
                return delta_of("".join(content), "".join(reasoning), [])
            self._text(held[:at], reasoning, content)
            self._held = held[at + len(marker) :]
            self._marker(marker, content)

    def _text(self, text: str, reasoning: list[str], content: list[str]) -> None:
        if not text:
            return
        if self._mode == _THINKING:
            reasoning.append(text)
        elif self._mode == _HEADER:
            self._header.append(text)
        else:
            content.append(text)

    def _marker(self, marker: str, content: list[str]) -> None:
        mode = self._mode
        if marker == MESSAGE_MODEL:
            if mode == _HEADER:
                content.extend(self._header)  # a header no kind followed: verbatim
            self._header = [marker]
            self._mode = _HEADER
        elif marker in KINDS:
            if marker in (THINKING, TEXT):
                self._mode = _THINKING if marker == THINKING else _TEXT
            else:
                content.extend(self._header)
                content.append(marker)
                self._mode = _OTHER
            self._header = []
        else:  # a block end
            if mode in (_OTHER, _HEADER):
                content.extend(self._header)
                content.append(marker)
            self._header = []
            self._mode = _OUTSIDE

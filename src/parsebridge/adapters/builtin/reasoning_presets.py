"""Builtin reasoning parsers built from each family's `ReasoningFormat` (data, not a class per family).

A family whose format is one start/end pair is served by the think-tag
parser (`ThinkTagReasoningParser`) with its markers and start state; a
family that also has alternative spellings, tool sections that close
reasoning, answer wrappers or a stray leading end marker is served by
`SectionReasoningParser`. `presets()` (also `PRESETS`) names each builtin
parser and its format, derived from `families.toml`; `parser_class(name)`
builds the class once (module attribute access works too, which is how the
backend's name table loads them).

`minimax_m2_append_think` is the one format that is not a split: the
reasoning stays in the message, with the ``<think>`` the template wrote put
back in front (`AppendThinkReasoningParser`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ...formats import ReasoningFormat, reasoning_format
from ...protocol import ReasoningParserBase, ReasoningParseResult, ReasoningStreamBase, StreamDelta
from ...protocol.models import delta_of
from .engines.reasoning_sections import SectionReasoningParser
from .engines.reasoning_start import FormatReasoningParser
from .engines.think_tags import ThinkTagReasoningParser


@functools.cache
def presets() -> dict[str, str]:
    """Builtin preset parser name → the reasoning family whose format it reads.

    Derived from `families.toml`: every name in the `builtin` column that has no
    class of its own (`REASONING_CLASSES`), with the format its family writes
    (``ling3`` reads ``mimo``'s).
    """
    from . import REASONING_CLASSES, builtin_names  # a circle: the builtin package imports this module

    return {n: reasoning_format(n).family for n in builtin_names("reasoning") if n not in REASONING_CLASSES}


#: parsers that keep the reasoning in the message instead of splitting it off.
KEEPS_REASONING = frozenset({"minimax_m2_append_think"})


def is_plain_pair(fmt: ReasoningFormat) -> bool:
    """Whether one start/end pair and a start state say everything about the format."""
    return not (
        fmt.alt_starts
        or fmt.alt_ends
        or fmt.closers
        or fmt.content_wrappers
        or fmt.drop_stray_end
        or fmt.drop_later_ends
    )


class AppendThinkReasoningParser(FormatReasoningParser):
    """Keeps reasoning in the content: the start marker the template wrote is put back in front.

    Both frameworks prepend ``<think>`` unconditionally; we do so when reasoning
    has started (the default: the template opened it) and leave the output
    verbatim when told it has not (``reasoning_started=False``, or a prompt
    that closed the block), since then there is no marker to restore.
    """

    def parse(
        self, text: str, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> ReasoningParseResult:
        prefix = self.format.start if self.is_started(reasoning_started, prompt) else ""
        return ReasoningParseResult(content=(prefix + text) or None)

    def stream(
        self, *, reasoning_started: bool | None = None, prompt: str | None = None
    ) -> ReasoningStreamBase:
        return _AppendThinkStream(self.format.start if self.is_started(reasoning_started, prompt) else "")


class _AppendThinkStream(ReasoningStreamBase):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        prefix, self._prefix = self._prefix, ""
        return delta_of(prefix + text, "", [])

    def _flush(self) -> StreamDelta:
        prefix, self._prefix = self._prefix, ""
        return delta_of(prefix, "", [])


@functools.cache
def parser_class(name: str) -> type[ReasoningParserBase]:
    """The builtin parser class called `name`, built from its family's format."""
    fmt = reasoning_format(presets()[name])
    doc = f"{fmt.family}: {fmt.summary}."
    if name in KEEPS_REASONING:
        return type(
            _class_name(name), (AppendThinkReasoningParser,), {"name": name, "format": fmt, "__doc__": doc}
        )
    if is_plain_pair(fmt):
        attrs = {
            "name": name,
            "format": fmt,
            "start_marker": fmt.start,
            "end_marker": fmt.end,
            "started_by_default": fmt.starts_in_prompt,
            "__doc__": doc,
        }
        return type(_class_name(name), (ThinkTagReasoningParser,), attrs)
    return type(_class_name(name), (SectionReasoningParser,), {"name": name, "format": fmt, "__doc__": doc})


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "ReasoningParser"


def __getattr__(name: str) -> Any:
    if name == "PRESETS":  # derived from the family table: read on first use
        return presets()
    if name in presets():
        return parser_class(name)
    raise AttributeError(name)

"""The shape of what the project knows about one model output format.

A *tool format* knows its marker texts, how to render calls as the model
writes them (the inverse of parsing: fixtures, the round-trip property
suite, the adversarial corpus and the benchmarks all build model output with
it) and how a tool result goes back to the model (`format_tool_result`). A
*reasoning format* knows its start/end markers and how to render reasoning
and content. Builtin parsers import their markers from here, so a format is
written down once.

Depends on the standard library only: `protocol` and everything above may
import it, and it imports nothing of ours.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: One call to render: (function name, arguments object).
Call = tuple[str, dict[str, Any]]


def dump_json(obj: Any, ascii_only: bool = False) -> str:
    """JSON as models write it: ``", "`` / ``": "`` separators, unicode kept unless asked."""
    return json.dumps(obj, ensure_ascii=ascii_only)


def xml_value(value: Any) -> str:
    """A parameter value in the XML-ish formats: strings verbatim, anything else as JSON."""
    return value if isinstance(value, str) else dump_json(value)


def result_text(result: Any) -> str:
    """A tool result as text: a string verbatim, anything else as JSON (unicode kept)."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


@dataclass(frozen=True)
class ToolFormat:
    """A tool-call format: markers, renderer and the tool-result message."""

    family: str
    #: One line for the README's builtin table.
    summary: str
    #: Every marker text of the format (what must never leak into content).
    markers: tuple[str, ...]
    #: calls → the model's text for them (one call region holding every call).
    render: Callable[..., str]
    #: (tool_call_id, result) → the text the chat template gives the model back.
    format_tool_result: Callable[[str, Any], str] = lambda _id, result: result_text(result)
    #: Other family names that write exactly this format (e.g. qwen3_xml for qwen3_coder).
    aliases: tuple[str, ...] = ()
    notes: str = ""


@dataclass(frozen=True)
class ReasoningFormat:
    """A reasoning format: where reasoning starts and ends, and how the model writes it."""

    family: str
    summary: str
    start: str
    end: str
    #: True when the chat template opens reasoning in the prompt (output starts inside it).
    starts_in_prompt: bool = False
    #: Other marker texts that must never leak (e.g. harmony's channel headers).
    extra_markers: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    notes: str = ""
    render: Callable[..., str] | None = field(default=None)
    #: Other spellings that also open / close reasoning (granite's "Here's", effort variants).
    alt_starts: tuple[str, ...] = ()
    alt_ends: tuple[str, ...] = ()
    #: Markers that end reasoning without an end marker and stay in the content
    #: (a tool-call section opened straight from reasoning).
    closers: tuple[str, ...] = ()
    #: Markers wrapping the answer that are dropped from the content (``<answer>``, ``<|START_TEXT|>``).
    content_wrappers: tuple[str, ...] = ()
    #: A reply that did not think may open with a bare end marker (left over from the template): drop it.
    drop_stray_end: bool = False

    @property
    def markers(self) -> tuple[str, ...]:
        every = (
            self.start,
            self.end,
            *self.alt_starts,
            *self.alt_ends,
            *self.content_wrappers,
            *self.extra_markers,
        )
        return tuple(m for m in every if m)

    @property
    def starts(self) -> tuple[str, ...]:
        """Every text that opens reasoning (the canonical start marker first)."""
        return (self.start, *self.alt_starts)

    @property
    def ends(self) -> tuple[str, ...]:
        """Every text that closes reasoning (the canonical end marker first)."""
        return (self.end, *self.alt_ends)

    def render_text(self, reasoning: str | None, content: str, *, started: bool | None = None) -> str:
        """Model output holding `reasoning` then `content` (start marker omitted when the prompt opened it)."""
        if self.render is not None:
            return self.render(reasoning, content, started=started)
        if reasoning is None:
            return content
        opened = self.starts_in_prompt if started is None else started
        return ("" if opened else self.start) + reasoning + self.end + content


def join_calls(render_one: Callable[[str, dict[str, Any]], str], sep: str = "\n") -> Callable[..., str]:
    """A renderer for formats that wrap each call on its own: calls joined by `sep`."""

    def render(calls: Sequence[Call], **options: Any) -> str:
        return sep.join(render_one(name, args, **options) for name, args in calls)

    return render

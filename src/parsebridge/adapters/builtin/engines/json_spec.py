"""What a JSON-payload format is, as data: where its calls live (`Region`) and its `JsonCallsSpec`.

`json_payload.JsonCallsStream` is the machine that reads any such format; a format module
writes only its spec (with the format's details in its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .call_objects import ObjectReader
from .markers import MORE

ARRAY, OBJECT, ANY = "array", "object", "any"


@dataclass(frozen=True)
class Region:
    """Where calls live: `start` marker (``""`` = a bare value at the start of the output)."""

    start: str
    #: closing marker; None when the JSON value's own end closes the region.
    end: str | None = None
    #: what the value may be: a call array, one call object, or either.
    shape: str = ARRAY
    #: optional text right after `start` (after whitespace), e.g. ``json`` after a ``` fence.
    openers: tuple[str, ...] = ()
    #: one call object per block, decided as a block (see the module docstring; Hermes).
    whole_block: bool = False


@dataclass(frozen=True)
class JsonCallsSpec:
    """A JSON-payload format: its regions, wrapper markers dropped from content, its call reader."""

    regions: tuple[Region, ...]
    #: a bare JSON value at the very start of the output (after whitespace) is a region too.
    leading: Region | None = None
    #: wrapper markers that are structure, not content (e.g. Cohere's response tags).
    drop: tuple[str, ...] = ()
    #: markers after which a bare value may lead again (kept in the content), e.g. ``</think>``
    #: when no reasoning parser ran first.
    relead: tuple[str, ...] = ()
    #: markers that are structure only where a region start follows them (after whitespace),
    #: content anywhere else (GigaChat 3's ``<|message_sep|>`` before its call header).
    joins: tuple[str, ...] = ()
    #: under "servers": both servers read one call per output, the first; what follows it is text.
    servers_one_call: bool = False
    #: under "servers": region starts both servers show as content too (the call is still read) where
    #: no `joins` marker came before them (GigaChat 3's header written without ``<|message_sep|>``).
    servers_shown_starts: tuple[str, ...] = ()
    #: calls stand bare, with no marker of the format around them: an object `answer_like` (a
    #: "name" and other keys, no arguments) is a JSON answer, content, not a call.
    bare_calls: bool = False
    reader: type[Any] = ObjectReader

    @property
    def markers(self) -> tuple[str, ...]:
        found: list[str] = []
        for r in self.regions:
            found += [m for m in (r.start, r.end) if m and m not in found]
        return tuple(found) + tuple(m for m in (*self.joins, *self.drop) if m not in found)


def match_option(buf: str, i: int, options: tuple[str, ...], final: bool) -> str | None:
    """The longest option starting at `buf[i]`; MORE while a longer one may still complete."""
    rest = buf[i:]
    if not final and any(len(rest) < len(o) and o.startswith(rest) for o in options):
        return MORE
    best = None
    for o in options:
        if rest.startswith(o) and (best is None or len(o) > len(best)):
            best = o
    return best

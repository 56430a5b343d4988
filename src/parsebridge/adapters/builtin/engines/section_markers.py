"""Marker sets, and where a wrapper marker in content is the text of a tool call.

`Markers` searches several marker texts at once (earliest first, the longest at
a tie) and says how much of a stream's tail could still become one. The section
reasoning parser removes answer wrappers (``<answer>``, ``<response>``) from
content; inside a tool call's value one is the value's text (a model documenting
its own format), so `CallStrings` (a call's JSON strings) and `CallValues` (values
between open and close markers) say where a call's values are while the text
arrives in order.
"""

from __future__ import annotations

from collections.abc import Sequence


class Markers:
    """A set of marker texts searched together: earliest match first, the longest at a tie."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = tuple(sorted({t for t in texts if t}, key=len, reverse=True))
        self.longest = max((len(t) for t in self.texts), default=0)
        self._firsts = frozenset(t[0] for t in self.texts)
        #: The one first character all markers share, if they do (`<think>`/`</think>`: "<").
        self._first = next(iter(self._firsts)) if len(self._firsts) == 1 else None

    def find(self, text: str, begin: int = 0) -> tuple[int, str]:
        """(index, marker) of the first marker at or after `begin`, or (-1, "")."""
        best, found = -1, ""
        for marker in self.texts:  # longest first: a later equal index never replaces it
            at = text.find(marker, begin, best + len(marker) if best != -1 else len(text))
            if at != -1 and (best == -1 or at < best):
                best, found = at, marker
        return best, found

    def hold_from(self, text: str) -> int:
        """Start of the longest suffix of `text` that is a proper prefix of some marker (len(text) if none)."""
        size = len(text)
        for at in range(max(0, size - self.longest + 1), size):
            if text[at] in self._firsts:
                tail = text[at:]
                if any(len(m) > len(tail) and m.startswith(tail) for m in self.texts):
                    return at
        return size

    def opens(self, text: str, at: int) -> str:
        """The marker `text` has at index `at` (longest), or ""."""
        for marker in self.texts:
            if text.startswith(marker, at):
                return marker
        return ""

    def absent(self, text: str) -> bool:
        """No marker can start in `text` (none of their first characters is in it)."""
        first = self._first
        if first is not None:
            return first not in text
        return not any(first in text for first in self._firsts)

    def could_open(self, text: str) -> bool:
        """Whether `text` is a proper prefix of some marker."""
        return any(len(m) > len(text) and m.startswith(text) for m in self.texts)


def unwrap(text: str, wrappers: Markers) -> str:
    """`text` without its wrapper markers."""
    if not wrappers.texts:
        return text
    out, pos = [], 0
    while True:
        at, marker = wrappers.find(text, pos)
        if at == -1:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:at])
        pos = at + len(marker)


class CallStrings:
    """Where the JSON strings of a tool section's calls are, fed its text in order: a wrapper marker
    inside one is the call's text (a model documenting its format), one outside them a wrapper.
    A string counts only inside brackets (a call's object or list), so prose after the section,
    with a stray quote, still loses its wrappers."""

    def __init__(self) -> None:
        self.in_str = False
        self.esc = False
        self.depth = 0

    def unwrap(self, text: str, wrappers: Markers, final: bool) -> tuple[str, int]:
        """(`text` without the wrappers outside strings, how much of it was read): not final, the
        reading stops where a wrapper may still begin, and goes on from there next time."""
        out: list[str] = []
        start = i = 0
        n = len(text)
        firsts = wrappers._firsts
        while i < n:
            c = text[i]
            if self.in_str:
                if self.esc:
                    self.esc = False
                elif c == "\\":
                    self.esc = True
                elif c == '"':
                    self.in_str = False
            elif c in firsts and (marker := wrappers.opens(text, i)):
                out.append(text[start:i])
                i = start = i + len(marker)
                continue
            elif c in firsts and not final and wrappers.could_open(text[i:]):
                break  # (held: a wrapper may begin here)
            elif c == '"':
                self.in_str = self.depth > 0
            elif c in "[{":
                self.depth += 1
            elif c in "]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        out.append(text[start:i])
        return "".join(out), i


class CallValues:
    """Where a tool section's values are, where they lie between an open and a close marker
    (`value_spans`: Kimi K3's ``<|open|>argument…<|close|>argument<|sep|>``), fed its text in
    order: a wrapper marker inside one is the value's text, one outside them a wrapper."""

    def __init__(self, spans: Sequence[tuple[str, str]]) -> None:
        self.closes = dict(spans)
        self.opens = Markers(tuple(self.closes))
        self.awaited: str | None = None  # in a value: its close marker

    def unwrap(self, text: str, wrappers: Markers, final: bool) -> tuple[str, int]:
        """As `CallStrings.unwrap`."""
        out: list[str] = []
        i = 0
        both = Markers((*wrappers.texts, *self.opens.texts))
        while True:
            if self.awaited is not None:
                end = text.find(self.awaited, i)
                if end == -1:
                    stop = len(text) if final else Markers((self.awaited,)).hold_from(text[i:]) + i
                    out.append(text[i:stop])
                    return "".join(out), stop
                out.append(text[i : end + len(self.awaited)])
                i, self.awaited = end + len(self.awaited), None
                continue
            at, marker = both.find(text, i)
            hold = len(text) if final else both.hold_from(text[i:]) + i
            if at == -1 or at >= hold:
                out.append(text[i:hold])
                return "".join(out), hold
            out.append(text[i:at])
            i = at + len(marker)
            if marker in self.closes:
                out.append(marker)
                self.awaited = self.closes[marker]

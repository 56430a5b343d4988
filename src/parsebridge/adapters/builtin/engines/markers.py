"""Marker search over the builtin drivers' buffer: where a marker is, and how much text is safe to release.

A stream's buffer may end in the first characters of a marker; these helpers find
whole markers, say `MORE` while the rest could still become one, and release text
only up to a possible marker prefix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

JSON_WS = " \t\r\n"
MORE = "\x00more"  # sentinel: a marker may start here, wait for more text


def match_marker(buf: str, i: int, markers: Sequence[str], final: bool) -> str | None:
    """The marker starting at `buf[i]`, `MORE` when the rest could still become one, else None."""
    rest_len = len(buf) - i
    partial = False
    for m in markers:
        if buf.startswith(m, i):
            return m
        if not final and rest_len < len(m) and m.startswith(buf[i:]):
            partial = True
    return MORE if partial else None


_FIRSTS: dict[tuple[str, ...], str] = {}


def first_chars(markers: tuple[str, ...]) -> str:
    """The distinct first characters of `markers` (cached per marker set)."""
    got = _FIRSTS.get(markers)
    if got is None:
        got = _FIRSTS[markers] = "".join(sorted({m[0] for m in markers}))
    return got


_SEARCHES: dict[str, Any] = {}


def content_mode(firsts: str) -> Any:
    """A `_fast_mode` for a state releasing content up to a marker starting with one of `firsts`:
    the `search` of a regex finding any of them (none: finds nothing), cached per set."""
    got = _SEARCHES.get(firsts)
    if got is None:
        got = _SEARCHES[firsts] = re.compile("[" + re.escape(firsts) + "]" if firsts else "(?!)").search
    return got


def find_markers(buf: str, start: int, markers: Sequence[str]) -> tuple[int, str | None]:
    """Earliest occurrence of any marker at or after `start`: (index, marker) or (-1, None)."""
    best, which = -1, None
    for m in markers:
        j = buf.find(m, start, best + len(m) if best >= 0 else len(buf))
        if j >= 0 and (best < 0 or j < best):
            best, which = j, m
    return best, which


_FINDERS: dict[tuple[str, ...], Any] = {}


def marker_finder(markers: tuple[str, ...]) -> Any:
    """`find_markers` for one marker set, as a function of (buf, start) (cached per set); a set of
    single characters is searched with one regex instead of one `find` per marker."""
    got = _FINDERS.get(markers)
    if got is None:
        if all(len(m) == 1 for m in markers):
            search = re.compile("[" + re.escape("".join(markers)) + "]").search

            def got(buf: str, start: int) -> tuple[int, str | None]:
                m = search(buf, start)
                return (m.start(), m.group()) if m is not None else (-1, None)

        else:

            def got(buf: str, start: int) -> tuple[int, str | None]:
                return find_markers(buf, start, markers)

        _FINDERS[markers] = got
    return got


def safe_end(buf: str, start: int, markers: Sequence[str], final: bool) -> int:
    """How far text from `start` can be released without cutting a possible marker prefix.

    Only a tail that starts with a marker's first character can be a prefix of it, so each
    marker costs one `find` in the last `len(marker) - 1` characters on the common path
    (a tail with no marker character in it), however long the marker.
    """
    end = len(buf)
    if final:
        return end
    hold = 0
    find = buf.find
    for m in markers:
        first = m[0]
        p = find(first, max(start, end - len(m) + 1))
        # The earliest tail that is a proper prefix of `m` is the longest one to hold back.
        while p != -1 and end - p > hold:
            if m.startswith(buf[p:]):
                hold = end - p
                break
            p = find(first, p + 1)
    return end - hold


#: A rest this short (a chunk's) is first searched for the markers' first characters.
_SHORT_REST = 64


def find_or_safe(buf: str, start: int, markers: tuple[str, ...], final: bool) -> tuple[int, str | None]:
    """`find_markers`, or with no marker found, (`safe_end`, None): where a state reading up
    to a marker stops. A rest holding no marker's first character (a chunk of text inside a
    value, the common case) is decided with one `find` per distinct first character."""
    find = buf.find
    if len(buf) - start <= _SHORT_REST:  # (a long rest, as in a one-shot parse, holds markers)
        firsts = _FIRSTS.get(markers)
        if firsts is None:
            firsts = first_chars(markers) if all(markers) else ""
        for c in firsts:
            if find(c, start) >= 0:
                break
        else:
            if firsts:
                return len(buf), None
    # (`find_markers`, inline: a one-shot parse comes here once per marker it finds)
    best, which = -1, None
    for m in markers:
        j = find(m, start, best + len(m) if best >= 0 else len(buf))
        if j >= 0 and (best < 0 or j < best):
            best, which = j, m
    if which is not None:
        return best, which
    return safe_end(buf, start, markers, final), None


#: (longer than any format's tag: where a search for tags goes on in text already searched)
_LONGEST_TAG = 64
_NOT_SPACE = re.compile(r"\S")


def own_close_ends(
    buf: str, at: int, close: str, head: str, bound: str | None, look: int, final: bool
) -> bool | None:
    """Whether a string value's own `close` at `at` ends it (the tagged and invoke engines' rule):
    not where text that is no tag follows it and another `close` follows before the next `bound`
    (a block's start) with no parameter `head` between (a model writing about its format puts it
    there); else it does. None while the text so far cannot tell; `look` as `close_ahead`'s."""
    after = at + len(close)
    i = _NOT_SPACE.search(buf, after)
    if i is None:
        return True if final else None
    if buf[i.start()] == "<":
        return True  # (a tag, maybe a damaged one: markup, not the value's text)
    k = close_ahead(buf, at, close, bound, look, final)
    if k is not None and k < 0:
        return True
    # (a parameter head between the two close tags: the value ended at the first)
    since = max(after, look - _LONGEST_TAG)
    if buf.find(head, since, len(buf) if k is None else k) >= 0:
        return True
    return None if k is None else False


def close_ahead(buf: str, at: int, close: str, bound: str | None, look: int, final: bool) -> int | None:
    """Whether a value's `close` follows a marker at `at` that may end the value (a model writing
    about its own format puts such markers inside a value, as text): the offset of that `close`
    when it comes before the next `bound` (a block's start) — the marker is text; -1 when `bound`
    comes first, or the end of output does — the marker ends the value; None while unknown.
    `look` is where the last search stopped (-1: none yet): each text is searched once."""
    look = max(at + 1, look - max(len(close), len(bound or "")) + 1)
    k = buf.find(close, look)
    if bound and buf.find(bound, look, k if k >= 0 else len(buf)) >= 0:
        return -1
    if k >= 0:
        return k
    return -1 if final else None


class NestedCloses:
    """Whether a string value's own close tag is its text while a whole call written inside the
    value as an example has opened values of its own (the tagged and invoke engines' rule): it is
    where, before the next `bound` (a block's start), the value's close tags after it outnumber
    its `opener` tags (one is left to close the value itself).

    Decided in linear time over a value however many close tags it holds: a search from a close
    goes on from where it stopped when the stream brings more text (`at`, `pos`, `need`), and
    where a search from one close balanced at a later close (`until`), every close before that one
    is text too without a search (the opens and closes between balance one another), so no text
    is searched twice. One per stream; positions are offsets in the fed text (`base` + index).
    """

    __slots__ = ("at", "need", "pos", "until")

    def __init__(self) -> None:
        self.until = self.at = self.pos = -1
        self.need = 0

    def decide(
        self, buf: str, base: int, at: int, close: str, opener: str, bound: str | None, final: bool
    ) -> int | None:
        """The close at `at`: the offset past it where it is the value's text; -1 where the bound
        or the end of output comes first; None while unknown (call again with more text)."""
        if base + at < self.until:
            return at + len(close)
        need, i = (self.need, self.pos - base) if base + at == self.at else (1, at + len(close))
        while need:
            k = buf.find(close, i)
            stop = len(buf) if k < 0 else k
            j = buf.find(opener, i, stop)
            b = buf.find(bound, i, stop if j < 0 else j) if bound else -1
            if b >= 0:
                self.at = -1
                return -1
            if j >= 0:
                need, i = need + 1, j + len(opener)
            elif k >= 0:
                need, i = need - 1, k + len(close)
            elif final:
                self.at = -1
                return -1
            else:  # (held: the search goes on here, a marker cut off by the chunk's end included)
                longest = max(len(close), len(opener), len(bound or ""))
                self.at, self.need, self.pos = base + at, need, base + max(i, len(buf) - longest + 1)
                return None
        self.until, self.at = base + i - len(close), -1
        return at + len(close)

"""JSON inside the builtin formats: decoding keys, names and values, and the raw scanner.

`JsonRaw` tracks string, escape and depth state over raw JSON text, so a
value's end (or a marker outside its strings) is found without parsing it;
`ArgsScan` and `Quiet` are the modes a state reading JSON hands to the driver's
`feed` (see `scan.BuiltinToolStream._fast_mode`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from .markers import MORE, match_marker


def _no_constant(name: str) -> Any:
    raise ValueError(name)


#: `json.loads(text, parse_constant=…)` builds a decoder per call (a third of a microsecond
#: of parsing behind 1.5 µs of set-up, per key and name of every JSON call object): one
#: decoder, built once, decodes the same way (a BOM is refused either way).
_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode

#: `json.dumps(value, ensure_ascii=False)`, without the encoder `dumps` builds per call (its
#: set-up is most of the cost of a chunk's worth of value): same encoder settings, same text.
dumps = json.JSONEncoder(ensure_ascii=False).encode
#: ... and of a `str`, straight to the string encoder `dumps` calls: `"` + escaped + `"`.
dumps_str: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


def loads_or_none(text: str) -> Any:
    """`json.loads` that never raises and refuses NaN/Infinity (they do not round-trip)."""
    try:
        return _DECODE(text)
    except (ValueError, RecursionError, TypeError):
        return _INVALID


#: The body of a JSON string that decodes to itself: no quote, escape or control character.
_VERBATIM_STR = re.compile(r'[^"\\\x00-\x1f]*')


def string_body(raw: str) -> Any:
    """The JSON string ``"raw"`` decoded (`raw` is its text between the quotes), or invalid.

    Keys and names are nearly always plain: then the text is the value, no decoder run.
    """
    if _VERBATIM_STR.fullmatch(raw) is not None:
        return raw
    return loads_or_none('"' + raw + '"')


def string_or_value(text: str) -> Any:
    """`loads_or_none(text)`, with a quoted plain string (the usual name) read without the decoder."""
    if (
        len(text) > 1
        and text[0] == '"'
        and text[-1] == '"'
        and _VERBATIM_STR.fullmatch(text, 1, len(text) - 1)
    ):
        return text[1:-1]
    return loads_or_none(text)


class _Invalid:
    def __repr__(self) -> str:
        return "<invalid JSON>"


_INVALID: Any = _Invalid()


def is_invalid(value: Any) -> bool:
    return value is _INVALID


# --- incremental JSON value scanner -------------------------------------------------------

#: scan results
EOB, STOP, CLOSED, MARKER, NEED = "eob", "stop", "closed", "marker", "need"

_STR_RUN = re.compile(r'[^"\\]+')
#: What `JsonRaw.effect_of` remembers: token texts (servers stream a token at a time) up to
#: this long, this many per marker set (then it starts over: a bound, not a cache policy).
_EFFECT_TEXT_MAX = 16
_EFFECTS_MAX = 2048
_Effects = tuple[tuple[bool, bool] | None, ...]
_Plain = tuple[frozenset[str], re.Pattern[str], re.Pattern[str], dict[str, _Effects]]
_PLAIN: dict[tuple[str, ...], _Plain] = {}


def _plain_for(markers: tuple[str, ...]) -> _Plain:
    """(marker first characters, regex of a run needing no attention, regex of a `flat` run,
    the effects of flat texts seen) — shared per marker set."""
    got = _PLAIN.get(markers)
    if got is None:
        firsts = "".join(sorted({m[0] for m in markers}))
        plain = re.compile("[^" + re.escape('"\\{}[],' + firsts) + "]+")
        flat = re.compile("[^" + re.escape("{}[]" + firsts) + "]*")
        got = _PLAIN[markers] = (frozenset(firsts), plain, flat, {})
    return got


def _flat_effects(text: str) -> _Effects:
    """(in_str, esc) after `scan` consumes a flat `text` (no bracket, no marker character)
    inside a container, for each (in_str, esc) before it, indexed ``2 * in_str + esc``; None
    where the text has a backslash outside a string (`scan` must see it: `JsonRaw.lost`)."""
    out: list[tuple[bool, bool] | None] = []
    for in_str0, esc0 in ((False, False), (False, True), (True, False), (True, True)):
        in_str, esc = in_str0, esc0 and in_str0  # (an escape exists only inside a string)
        lost = False
        for c in text:
            if esc:
                esc = False
            elif in_str:
                if c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "\\":
                lost = True
                break
        out.append(None if lost else (in_str, esc))
    return tuple(out)


class JsonRaw:
    """Tracks string/escape/depth over raw JSON text, so a value's end is found without parsing.

    `scan` stops at a structural character at depth 0 listed in `stops`
    (not consumed), after the close of a top-level container or string when
    `stop_at_close`, or at a marker outside strings (not consumed; kept in
    `.marker`). Markers inside strings are ignored: that is rule 6.

    A backslash outside a string cannot be JSON (``{\\"name\\": …}``, a model escaping its
    quotes once too often): from there the text's quotes say nothing of where strings are,
    so the scanner is `lost` until its next `reset` and stops tracking strings (depth and
    markers still count). Else a lone escaped quote would open a "string" that hides every
    later marker, and the block, its neighbours' calls and the stream's memory with it.
    """

    __slots__ = ("depth", "effects", "esc", "firsts", "flat", "in_str", "lost", "marker", "plain")

    def __init__(self, markers: Sequence[str] = ()) -> None:
        self.in_str = False
        self.esc = False
        self.lost = False
        self.depth = 0
        self.marker: str | None = None
        self.firsts, self.plain, self.flat, self.effects = _plain_for(tuple(markers))

    def effect_of(self, text: str) -> _Effects:
        """`_flat_effects(text)`, remembered for a short text; empty when `text` is not flat
        (or too long to remember: the caller scans it)."""
        effects = self.effects
        if len(text) > _EFFECT_TEXT_MAX:
            return ()
        got = _flat_effects(text) if self.flat.fullmatch(text) is not None else ()
        if len(effects) >= _EFFECTS_MAX:
            effects.clear()
        effects[text] = got
        return got

    def take_flat(self, text: str) -> bool:
        """Inside a container, consume a flat `text` by its remembered effect, as `scan` would;
        False (nothing changed) when it is not flat, or would make or find the scanner lost
        (once lost, quotes are plain text: `scan` reads it)."""
        effect = self.effects.get(text)
        if effect is None:
            effect = self.effect_of(text)
        # (effects are indexed by the state before: 2 * in_str + esc)
        after = effect[2 * self.in_str + self.esc] if effect and not self.lost else None
        if after is None:
            return False
        self.in_str, self.esc = after
        return True

    def reset(self, in_str: bool = False) -> None:
        """Ready for the next value (or, with `in_str`, a string's body): a reader's values
        and keys come one after another, so one scanner per reader serves them all."""
        self.in_str = in_str
        self.esc = False
        self.lost = False
        self.depth = 0
        self.marker = None

    def scan(
        self,
        buf: str,
        i: int,
        markers: Sequence[str],
        final: bool,
        stops: str = "",
        stop_at_close: bool = False,
    ) -> tuple[int, str]:
        n = len(buf)
        plain = self.plain
        while i < n:
            if self.in_str:
                if self.esc:
                    self.esc = False
                    i += 1
                    continue
                m = _STR_RUN.match(buf, i)
                if m:
                    i = m.end()
                    continue
                if buf[i] == "\\":
                    self.esc = True
                    i += 1
                    continue
                self.in_str = False
                i += 1
                if self.depth == 0 and stop_at_close:
                    return i, CLOSED
                continue
            m = plain.match(buf, i)
            if m:
                i = m.end()
                continue
            c = buf[i]
            if c in self.firsts:
                found = match_marker(buf, i, markers, final)
                if found == MORE:
                    return i, NEED
                if found is not None:
                    self.marker = found
                    return i, MARKER
            if c == '"':
                self.in_str = not self.lost
            elif c == "\\":
                self.lost = True
            elif c in "{[":
                self.depth += 1
            elif c in "}]":
                if self.depth == 0:
                    if c in stops:
                        return i, STOP
                else:
                    self.depth -= 1
                    if self.depth == 0 and stop_at_close:
                        return i + 1, CLOSED
            elif c == "," and self.depth == 0 and c in stops:
                return i, STOP
            i += 1
        return i, EOB


class ArgsScan:
    """A `_fast_mode` for a state reading a named call's arguments raw: the scanner, and what
    the state's step passes to its `scan` besides the text (markers, stops, stop_at_close)."""

    __slots__ = ("at_close", "markers", "raw", "stops")

    def __init__(self, raw: JsonRaw, markers: tuple[str, ...], stops: str, at_close: bool) -> None:
        self.raw = raw
        self.markers = markers
        self.stops = stops
        self.at_close = at_close


class Quiet:
    """A `_fast_mode` for a state that only collects text until something decides it: the
    string of a key or of a call's name being read, or text a format skips (whitespace
    before a value, a fence's language tag, what follows a call's arguments).

    The state's step, on a chunk in which `stop` finds nothing (with nothing held), does
    nothing but hand the chunk to `sink(text)` (None: nothing) and wait; the
    stream shows nothing. An undecided call's span may be open: the chunk stays in it.
    """

    __slots__ = ("sink", "stop")

    def __init__(self, stop: Any, sink: Any = None) -> None:
        self.stop = stop
        self.sink = sink

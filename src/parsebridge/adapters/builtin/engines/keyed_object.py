"""A call object keyed by its name: ``{"get_weather": {"city": "Paris"}}`` (Apertus).

`KeyedReader` is a reader for `json_payload`'s machine (a `JsonCallsSpec`'s ``reader``), with
`ObjectReader`'s step protocol in place of the ``{"name": …, "arguments": …}`` objects.
"""

from __future__ import annotations

from .scan import (
    BROKEN,
    CLOSED,
    DONE,
    MARKER,
    MORE,
    NEED,
    STOP,
    BuiltinToolStream,
    JsonRaw,
    match_marker,
    string_body,
)

_K_WAIT, _K_KEY, _K_COLON, _K_VALUE_WAIT, _K_VALUE, _K_AFTER = range(6)


class KeyedReader:
    """Reads ``{"NAME": arguments}`` after its ``{``, with `ObjectReader`'s step protocol.

    The single key is the function name (announced when its string closes),
    its value the arguments (streamed raw). A second key breaks the object.
    """

    def __init__(self, markers: tuple[str, ...]) -> None:
        self.markers = markers
        self._firsts = frozenset(m[0] for m in markers)
        self.phase = _K_WAIT
        self.name: str | None = None
        self.args_state = 0
        self.marker: str | None = None
        self._raw = JsonRaw(markers)
        self._tok: list[str] = []

    def step(self, st: BuiltinToolStream) -> str:
        while True:
            if self.phase == _K_KEY:
                start = st._pos
                end, why = self._raw.scan(st._buf, start, (), st._final, stop_at_close=True)
                st._pos = end
                if why != CLOSED:
                    self._tok.append(st._buf[start:end])
                    return NEED
                self._tok.append(st._buf[start : end - 1])
                name = string_body("".join(self._tok))
                if not isinstance(name, str):
                    return BROKEN
                self.name = name
                st._commit(name)
                self.phase = _K_COLON
                continue
            if self.phase == _K_VALUE:
                start = st._pos
                end, why = self._raw.scan(st._buf, start, self.markers, st._final, stops=",}")
                st._pos = end
                st._args(st._buf[start:end])
                if why == STOP:
                    self.args_state = 2
                    self.phase = _K_AFTER
                    continue
                if why == MARKER:
                    self.marker = self._raw.marker
                    return MARKER
                return NEED
            if not st._skip_ws():
                return NEED
            c = st._buf[st._pos]
            if c in self._firsts:
                found = match_marker(st._buf, st._pos, self.markers, st._final)
                if found == MORE:
                    return NEED
                if found is not None:
                    self.marker = found
                    return MARKER
            if self.phase == _K_WAIT and c == '"':
                self.phase = _K_KEY
                self._raw.reset(in_str=True)
                st._pos += 1
            elif self.phase == _K_COLON and c == ":":
                st._pos += 1
                self.phase = _K_VALUE_WAIT
            elif self.phase == _K_VALUE_WAIT:  # the value starts here (whitespace skipped)
                self.phase = _K_VALUE
                self.args_state = 1
                self._raw.reset()
            elif self.phase in (_K_WAIT, _K_AFTER) and c == "}":
                st._pos += 1
                return DONE
            else:
                return BROKEN

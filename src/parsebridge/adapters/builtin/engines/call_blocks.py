"""A block holding one JSON call object, read to the block's end: Hermes's ``<tool_call>``
(and the other `whole_block` regions of `json_payload`) and Inkling's invoke block.

After the block's start, `CallBlockStream._call_block_step` reads the body: an
object (an `ObjectReader`) whose name makes the call; a body that is no object
is held to the block's end and is then content whole (markers included); a body
broken after the name, before the arguments, gives the raw rest of the body as
the arguments, which are then no object; a call whose object never closes (its body
broken, the block's end or the end of output before its closing brace) is no call
(`whole_calls`). After a complete object, another object in the same block (after whitespace
and an optional comma) is another call: Qwen models write parallel calls that way, one
``<tool_call>`` around several objects, where both vLLM and SGLang show the whole block as
content. Any other text after a complete object up to the block's end is ignored; where the block
never ends (the end of output comes first), text other than whitespace after the object means the
model went on writing in the block: the object is no finished call (`whole_calls`), as vLLM and
SGLang read it (neither returns a call there). The format
says what ends a block (`markers`, cursor left on one) and what ending it does (`_close_block`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from .scan import (
    BROKEN,
    DONE,
    MARKER,
    MORE,
    NEED,
    BuiltinToolStream,
    JsonRaw,
    find_markers,
    safe_end,
)

#: The states of a call block (numbered apart from the formats' own states).
BLOCK_WAIT, BLOCK_OBJECT, BLOCK_OPAQUE, BLOCK_OPAQUE_JSON, BLOCK_RAW_ARGS, BLOCK_SKIP, BLOCK_NEXT = range(
    100, 107
)


class CallBlockStream(BuiltinToolStream):
    """The driver with the steps of a call block (see the module docstring)."""

    #: A body that broke before a name is held to the block's end by a string-aware scan
    #: (a marker inside a JSON string does not end it); else by a plain search.
    scan_unnamed_body: ClassVar[bool] = True
    _state: int
    _reader: Any
    _raw: JsonRaw | None
    _comma_seen = False  # (`_next_object`: the one comma between two objects is behind the cursor)
    _trailed = False  # (`BLOCK_SKIP` after a call's object: text other than whitespace passed)

    def _close_block(self, marker: str) -> None:
        """At `marker` inside a block (cursor on it): end the block."""
        raise NotImplementedError

    def _object_read(self, r: str) -> None:
        """What the reader's result `r` says of the call (`whole_calls`): its object closed (whole even if
        the block's end never comes), or never will (broken, or cut off by the end of output)."""
        if r == DONE:
            self._call_closed = self._in_call
        elif r != NEED or self._final:
            self._call_broken = True

    def _call_block_step(self, markers: tuple[str, ...], reader: type[Any]) -> bool:
        """The step in a call block's states; `markers` end the block, `reader` reads the object."""
        state, buf = self._state, self._buf
        if state == BLOCK_OBJECT:  # (the most common: first)
            reader = self._reader
            r = reader.step(self)
            self._object_read(r)
            if r == MARKER:
                self._close_block(reader.marker)
            elif r == DONE:
                self._state = BLOCK_NEXT if self._in_call else BLOCK_OPAQUE
            elif r == BROKEN:
                if not self._in_call:
                    self._state = BLOCK_OPAQUE_JSON if self.scan_unnamed_body else BLOCK_OPAQUE
                elif reader.args_state == 0:
                    self._state = BLOCK_RAW_ARGS
                else:
                    self._state = BLOCK_SKIP
                self._raw = JsonRaw(markers)
            else:
                return False
            return True
        if state == BLOCK_WAIT:
            found = self._marker_past_ws(markers)
            if found == MORE:
                return False
            if found is not None:
                self._close_block(found)
            elif buf[self._pos] == "{":
                self._pos += 1
                self._reader = reader(markers)
                self._state = BLOCK_OBJECT
            else:
                self._state = BLOCK_OPAQUE
            return True
        if state == BLOCK_NEXT:
            return self._next_object(markers, reader)
        if state in (BLOCK_OPAQUE, BLOCK_SKIP):
            return self._skip_block(state, markers)
        # BLOCK_OPAQUE_JSON / BLOCK_RAW_ARGS: raw JSON-ish text up to a marker outside strings
        raw = self._raw
        assert raw is not None
        start = self._pos
        end, why = raw.scan(buf, start, markers, self._final)
        self._pos = end
        if state == BLOCK_RAW_ARGS:
            self._args(buf[start:end])
        if why == MARKER:
            assert raw.marker is not None
            self._close_block(raw.marker)
            return True
        return False

    def _skip_block(self, state: int, markers: tuple[str, ...]) -> bool:
        """The rest of the block up to a marker that ends it (after a call's object: ignored, unless
        the end of output comes first after text other than whitespace: then no call)."""
        buf = self._buf
        j, which = find_markers(buf, self._pos, markers)
        if which is None:
            end = safe_end(buf, self._pos, markers, self._final)
            if state == BLOCK_SKIP and self._in_call:
                self._trailed = self._trailed or (end > self._pos and not buf[self._pos : end].isspace())
                self._call_broken = self._call_broken or (self._final and self._trailed)
            self._pos = end
            return False
        self._trailed = False
        self._pos = j
        self._close_block(which)
        return True

    def _next_object(self, markers: tuple[str, ...], reader: type[Any]) -> bool:
        """After a call's complete object: another object in the block (past whitespace and one
        comma) ends that call where it begins and opens the next; the block's end or anything
        else leaves the rest to `BLOCK_SKIP`."""
        found = self._marker_past_ws(markers)
        if found == MORE:
            return False
        c = self._buf[self._pos]
        if found is None and c == "," and not self._comma_seen:
            self._comma_seen = True
            self._pos += 1
            return True
        self._comma_seen = self._trailed = False
        if found is None and c == "{" and self._in_call:
            self._end_call(self._pos)
            self._begin_span(self._pos)
            self._pos += 1
            self._reader = reader(markers)
            self._state = BLOCK_OBJECT
            return True
        self._state = BLOCK_SKIP
        return True

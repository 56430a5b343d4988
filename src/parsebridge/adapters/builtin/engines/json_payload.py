"""One incremental machine for the JSON-payload tool formats: a marker, a JSON value, maybe an end marker.

Hermes/Qwen2.5, Granite, Jamba/Hunyuan-A13B, Phi-4-mini, xLAM, InternLM, Cohere,
LongCat, GigaChat 3, Apertus and the generic gateway ``json`` format all write their
calls the same way underneath: an opening marker (or nothing, at the start
of the output), then either a JSON array of call objects or one call object,
then an optional closing marker. They differ only in those markers, in the
keys of a call object and in a few wrapper tokens; each is a `JsonCallsSpec`
here and a thin subclass in its own module (with the format's details in its
docstring).

The machine (content → region → value → elements → after) streams: a call
is announced when its name string closes and its arguments are streamed raw
as they arrive (JSON string state is tracked, so markers inside strings do
not end anything). Policy for malformed regions, on top of `scan`'s:

* a region whose first element yields no name (not JSON, a plain JSON answer,
  an empty ``[]``-less body) is content verbatim, markers included;
  ``[]`` (an empty call list) is structure;
* in an array that already produced a call, a nameless element is content
  (verbatim, in place) and the array goes on; a character that cannot
  continue the array ends it: the rest of the region up to its end marker is
  content (left out, on `dropped`, under conventions="servers"), as for formats
  without an end marker;
* the end marker cutting an element (missing ``}``/``]``) ends the element:
  named → no call (its object never closed: `whole_calls`), its text is text;
* end of output inside an element: named → no call, its text is text; unnamed → content.

A region may be a `whole_block` (Hermes's ``<tool_call>`` … ``</tool_call>``): one call
object per block, decided as a block. A named call's span runs to the end marker, and
text between the object and the end marker is ignored; a block that yields no name is
held until its end marker (outside strings, once it looked like JSON) and is then content
whole, markers included; a body broken after the name, before the arguments, gives the
raw rest of the body as the arguments (no call: `whole_calls`); the start marker outside strings inside a
block ends it as if truncated.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ....formats import tool_format
from .call_blocks import BLOCK_OBJECT, BLOCK_WAIT, CallBlockStream
from .conventions import SERVERS
from .json_spec import ANY, ARRAY, OBJECT, JsonCallsSpec, Region, match_option
from .scan import (
    DONE,
    EOB,
    MARKER,
    MORE,
    NEED,
    JsonRaw,
    content_mode,
    find_markers,
    first_chars,
    match_marker,
    safe_end,
)
from .tool_parser import BuiltinToolParser

# (The spec of a format, as data: `json_spec`; re-exported here, where the formats import it from.)
__all__ = [
    "ANY",
    "ARRAY",
    "OBJECT",
    "JsonCallsParser",
    "JsonCallsSpec",
    "JsonCallsStream",
    "Region",
    "match_option",
]


# --- the machine -------------------------------------------------------------------------------

_START, _CONTENT, _OPENER, _BODY_WAIT, _ELEM_WAIT, _OBJECT, _ELEM_SEP, _AFTER, _SKIP = range(9)


class JsonCallsStream(CallBlockStream):
    """Incremental machine for one `JsonCallsSpec` (set by the subclass)."""

    spec: ClassVar[JsonCallsSpec]
    #: What the spec implies, worked out once per spec (`_derived`).
    _from_spec: ClassVar[tuple[Any, ...] | None] = None

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        derived = type(self)._from_spec
        if derived is None or derived[0] is not self.spec:
            derived = self._derived()
        (_, self._by_start, self._starts, self._content_firsts, self._block_reader, self._reader_modes,
         self._blocks) = derived  # fmt: skip
        spec = self.spec
        self._state = _START if spec.leading is not None else _CONTENT
        self._region = spec.leading or spec.regions[0]
        self._reader: Any = None
        self._array = False
        self._first_index = -1
        self._raw: JsonRaw | None = None
        #: The open region's markers when it is a `whole_block`, else empty.
        self._block: tuple[str, ...] = ()
        #: A `joins` marker (and the whitespace after it) before the open region: content again
        #: if the region is no call (`_reject`).
        self._joined = ""
        self._one_call = spec.servers_one_call and parser.conventions == SERVERS
        #: `servers_shown_starts` while no `joins` marker has come (under "servers").
        self._shown: tuple[str, ...] = spec.servers_shown_starts if parser.conventions == SERVERS else ()
        self._shown_start = ""

    @classmethod
    def _derived(cls) -> tuple[Any, ...]:
        spec = cls.spec
        by_start = {r.start: r for r in spec.regions}
        starts = tuple(by_start) + spec.drop + spec.relead + spec.joins
        blocks = {r.start: (r.start, *((r.end,) if r.end else ())) for r in spec.regions if r.whole_block}
        # (the reader has fast modes: `ObjectReader.fast_mode`)
        reader_modes = hasattr(spec.reader, "fast_mode")
        cls._from_spec = (
            spec,
            by_start,
            starts,
            content_mode(first_chars(starts)),
            spec.reader,
            reader_modes,
            blocks,
        )
        return cls._from_spec

    def _fast_mode(self) -> Any:
        state = self._state
        if state == _CONTENT:
            return self._content_firsts
        if state in (BLOCK_OBJECT, _OBJECT) and self._reader_modes:
            return self._reader.fast_mode()
        return None

    def _at_rest(self) -> bool:
        return self._state == _CONTENT

    # -- helpers ----------------------------------------------------------------------------------
    def _open(self, region: Region, pos: int) -> None:
        self._begin_span(pos)
        self._region = region
        self._block = self._blocks.get(region.start, ()) if region.whole_block else ()
        self._first_index = self._index

    def _region_calls(self) -> int:
        return self._index - self._first_index

    def _end_marker_at(self) -> str | None:
        """MORE / the region's end marker / None at the cursor (the cursor is on a character)."""
        end = self._region.end
        if end is None or self._buf[self._pos] != end[0]:
            return None
        return match_marker(self._buf, self._pos, (end,), self._final)

    def _close_region(self) -> None:
        """The region's end marker is at the cursor: consume it; the region was structure."""
        end = self._region.end
        assert end is not None
        self._pos += len(end)
        self._structure()
        self._state = _CONTENT

    def _give_up(self) -> None:
        """The value cannot continue at the cursor."""
        if self._span is not None:
            self._reject(self._pos)
        if self._region_calls() and self._region.end is not None:
            self._state = _SKIP
        else:
            self._state = _CONTENT

    # -- the step ---------------------------------------------------------------------------------
    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state >= BLOCK_WAIT:  # inside a whole block (its states are numbered after ours)
            return self._call_block_step(self._block, self._block_reader)
        if state == _CONTENT:
            return self._content_step()
        if state == _START:
            return self._start_step(buf)
        if state == _OPENER:
            if not self._skip_ws() and not self._final:
                return False
            found = match_option(buf, self._pos, self._region.openers, self._final)
            if found == MORE:
                return False
            if found is not None:
                self._pos += len(found)
            self._state = BLOCK_WAIT if self._block else _BODY_WAIT
            return True
        if state == _AFTER and self._region.end is None:  # the value closed the region
            self._structure()
            self._state = _CONTENT
            return True
        if state in (_BODY_WAIT, _ELEM_WAIT, _ELEM_SEP, _AFTER):
            if not self._skip_ws():
                return False
            found = self._end_marker_at()
            if found == MORE:
                return False
            return self._at_char(state, buf[self._pos], found is not None)
        if state == _OBJECT:
            return self._object_step()
        return self._skip_step()  # _SKIP

    def _content_step(self) -> bool:
        """Content up to a start marker: a region opens, or a join, relead or wrapper marker."""
        found = self._outside(self._starts)
        if found is None:
            return False
        region = self._by_start.get(found)
        if self._one_call and self._index >= 0 and (region or found in self.spec.joins):
            # (a call read: a later header is text)
            self._content(found)
            self._pos += len(found)
            return True
        if found in self.spec.joins:
            return self._join(found)
        if found in self.spec.relead:  # content, after which a bare value may lead
            self._content(found)
            self._pos += len(found)
            self._state = _START
            return True
        if region is None:  # a wrapper marker: structure
            self._pos += len(found)
            self._structure()
            return True
        self._open(region, self._pos)
        self._pos += len(found)
        if found in self._shown:  # (content too, once the call it opens is read: `_commit`)
            self._shown_start = found
        self._state = _OPENER if region.openers else BLOCK_WAIT if self._block else _BODY_WAIT
        return True

    def _start_step(self, buf: str) -> bool:
        """At the start of the output (or after a relead marker): a bare value may lead."""
        if not self._ws_as_content():
            return False
        lead = self.spec.leading
        assert lead is not None
        marker = match_marker(buf, self._pos, self._starts, self._final)
        if marker == MORE:
            return False
        c = buf[self._pos]
        if marker is not None:  # a marked region (e.g. ``[TOOL_CALLS]``) is not a bare value
            self._state = _CONTENT
        elif (c == "[" and lead.shape != OBJECT) or (c == "{" and lead.shape != ARRAY):
            self._open(lead, self._pos)
            self._state = _BODY_WAIT
        else:
            self._state = _CONTENT
        return True

    def _skip_step(self) -> bool:
        """The rest of a broken region up to its end marker: content (`dropped` under "servers")."""
        buf = self._buf
        end = self._region.end
        assert end is not None
        j, which = find_markers(buf, self._pos, (end,))
        if which is None:
            j = safe_end(buf, self._pos, (end,), self._final)
        self._content(buf[self._pos : j])  # (after a call: `dropped` under "servers")
        self._pos = j
        if which is None:
            return False
        self._close_region()
        return True

    def _join(self, marker: str) -> bool:
        """At a `joins` marker: structure when a region start follows it (whitespace between
        included), content otherwise; False while what follows is not known yet."""
        buf = self._buf
        self._shown = ()
        j = self._pos + len(marker)
        while j < len(buf) and buf[j] in " \t\r\n":
            j += 1
        if j == len(buf) and not self._final:
            return False
        nxt = match_marker(buf, j, tuple(self._by_start), self._final) if j < len(buf) else None
        if nxt == MORE:
            return False
        if nxt is not None:
            self._joined = buf[self._pos : j]
            self._pos = j
            self._structure()
        else:
            self._content(marker)
            self._pos += len(marker)
        return True

    def _reject(self, pos: int) -> None:
        joined, self._joined = self._joined, ""
        self._shown_start = ""
        if joined and self._span is not None:
            start = self._doubled  # (a doubled header: the join goes with it, as `_unnamed` holds it)
            text = "".join(self._span_parts) + self._buf[self._span : pos]
            if start and text == start and self._buf.startswith(start, pos):
                self._held_markup.append(joined)
            else:
                self._content(joined)
        super()._reject(pos)

    def _commit(self, name: str, call_start: int | None = None, call_id: str | None = None) -> None:
        self._call_lead, self._joined = self._joined, ""  # (back with the call's text if it is no call)
        if self._shown_start:
            self._content(self._shown_start)
            self._shown_start = ""
        super()._commit(name, call_start, call_id)

    # -- whole blocks ---------------------------------------------------------------------------
    def _close_block(self, marker: str) -> None:
        """At a marker inside a whole block: end (named) or reject (unnamed) the block."""
        self._close_at(marker, self._region.end)
        self._state = _CONTENT

    # -- arrays and bare objects ------------------------------------------------------------------
    def _at_char(self, state: int, c: str, at_end_marker: bool) -> bool:
        region = self._region
        if state == _BODY_WAIT:
            if at_end_marker:  # an empty region: not a call
                self._pos += len(region.end or "")
                self._reject(self._pos)
                self._state = _CONTENT
            elif c == "[" and region.shape != OBJECT:
                self._pos += 1
                self._array = True
                self._state = _ELEM_WAIT
            elif c == "{" and region.shape != ARRAY:
                self._open_object(False)
            elif self._doubled and match_marker(self._buf, self._pos, (self._doubled,), self._final) == MORE:
                return False  # (a doubled start marker may be coming: `_unnamed` needs it whole)
            else:
                self._reject(self._pos)
                self._state = _CONTENT
            return True
        if state == _AFTER:
            if at_end_marker:
                self._close_region()
            else:
                self._state = _SKIP
            return True
        if at_end_marker:  # the end marker where an element or separator belongs: close leniently
            if self._region_calls():
                self._close_region()
            else:
                self._give_up()
            return True
        if state == _ELEM_WAIT and c == "{":
            self._begin_span(self._pos)
            self._open_object(True)
        elif c == "]" and (state == _ELEM_SEP or self._span is not None or self._region_calls()):
            self._pos += 1
            if self._span is not None:  # `[]`: an empty call list is structure
                self._drop_span()
                self._structure()
            self._state = _AFTER
        elif state == _ELEM_SEP and c == ",":
            self._pos += 1
            self._state = _ELEM_WAIT
        else:
            self._give_up()
        return True

    def _open_object(self, in_array: bool) -> None:
        self._pos += 1
        self._array = in_array
        end = self._region.end
        self._reader = self.spec.reader((end,) if end else ())
        self._state = _OBJECT

    def _object_step(self) -> bool:
        r = self._reader.step(self)
        if r == NEED:
            self._call_broken = self._final  # (the object never closed: `whole_calls`)
            return False
        named = self._in_call
        if named:
            index = self._index
            # (an object that never closed is no call: `whole_calls`; nor is a bare JSON answer)
            self._call_broken = r != DONE or (self.spec.bare_calls and self._reader.answer_like)
            self._end_call(self._pos)
            named = self._index == index  # (one that is not whole gave its index back)
        if r == DONE:
            if not named:
                self._reject(self._pos)
                if not (self._array and self._region_calls()):
                    self._state = _CONTENT
                    return True
            self._state = _ELEM_SEP if self._array else _AFTER
        elif r == MARKER:
            if named or self._region_calls():
                self._reject(self._pos)  # an unnamed element after calls: content, in place
                self._close_region()
            else:
                self._give_up()
        else:  # BROKEN
            self._give_up()
        return True


class JsonCallsParser(BuiltinToolParser):
    """Base of the JSON-payload parsers: a subclass sets `name` and its format's `calls_spec` (its
    `markers` and its stream class follow from it, unless it sets them itself), or a `stream_class`."""

    stream_class: ClassVar[type[JsonCallsStream]]
    calls_spec: ClassVar[JsonCallsSpec | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("calls_spec")
        if spec is None:
            return
        if "markers" not in cls.__dict__:
            cls.markers = spec.markers
        if "stream_class" not in cls.__dict__:
            name = cls.__name__.removesuffix("Parser") + "Stream"
            cls.stream_class = type(name, (JsonCallsStream,), {"spec": spec, "__module__": cls.__module__})
        if not cls.__dict__.get("family_format"):
            cls.family_format = cls.name

    def has_tool_calls(self, text: str) -> bool:
        """A region start anywhere, or (formats with bare calls) a leading ``[``/``{``."""
        spec = self.stream_class.spec
        if any(r.start in text for r in spec.regions):
            return True
        lead = spec.leading
        if lead is None:
            return False
        head = text.lstrip(" \t\r\n")[:1]
        return (head == "[" and lead.shape != OBJECT) or (head == "{" and lead.shape != ARRAY)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        return tool_format(self.family_format).format_tool_result(tool_call_id, result)

    #: the `formats` family whose tool-result message this parser uses.
    family_format: ClassVar[str] = ""


__all__ = [
    "ANY",
    "ARRAY",
    "EOB",
    "OBJECT",
    "JsonCallsParser",
    "JsonCallsSpec",
    "JsonCallsStream",
    "Region",
]

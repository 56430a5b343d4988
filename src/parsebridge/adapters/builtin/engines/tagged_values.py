"""A tagged-parameter call's values: how the text between a parameter's tags becomes its JSON value.

A mixin of `tagged.TaggedCallStream` (whose module holds the machine that finds the tags): a
parameter opens (`_open_value`), its text arrives in pieces (`_value`), it closes
(`_finish_value`); the arguments object around the values is opened by the first and closed
by `_close_object`. Values are typed by the tool schema (`schema_values.convert_value`);
string-typed values stream as JSON string fragments, others are emitted when the parameter
closes.

Where a value ends (`_value_step`): at its close tag. Another tag the format may end an
unclosed value with (the next parameter's head, the call's or the block's close) ends it
only where no close tag of the value follows before the end of output: a model writing
about its own format puts such tags inside a value (``Use </function> to end``), and they
are text there (under conventions="servers" too, unless both servers end the value there:
`servers_tag_ends_value`). Until a close tag, or the end of output, decides, the text from that tag
on is held (a stream shows nothing of it; the next block's start, where it comes first, decides
that the tag ended the value; the one-shot parse, which has the whole text,
decides at once).

A value's own close tag ends it, but for two cases: in a value declared a string, a close tag
followed by text that is no tag (``Close with </parameter> first``, whitespace between) is the
value's text where another close tag of the value follows before the next block starts, with no
parameter head between the two: a model writing about its format puts it there (otherwise it
ends the value, and the text after it is stray text, shown as content). And a whole call
written inside a string value as an example (``<tool_call>get_weather<arg_key>city</arg_key>
<arg_value>Paris</arg_value></tool_call>``) opens values of its own (GLM's ``<arg_value>``, or
a parameter head taken as text: `_vdepth`): a close tag while such an open is unclosed is the
value's text where, before the next block starts, the value's close tags after it outnumber its
opens (one is left for the value itself: `_nested_close`; the stream holds from it until that
is decided). Under conventions="servers" the first close tag ends the value, as both servers'
patterns end it (`servers_first_close_ends_value`).

Whitespace: a format whose template writes each value on lines of its own (Qwen3-Coder:
``<parameter=P>\\nVALUE\\n</parameter>``) has ONE leading and ONE trailing newline removed
(unless `inline_values`); a format that writes values inline (GLM's ``<arg_value>V</arg_value>``,
MiniMax-M2's and Seed-OSS's ``<parameter…>V</parameter>``) keeps every character, trailing
newlines and double spaces included, but where both servers trim such a value (under
conventions="servers": `servers_trims_one_newline`, `servers_strips_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ....protocol import StreamDelta
from ....protocol.errors import InvalidInputError
from ....protocol.models import empty_delta
from .json_text import dumps, dumps_str
from .markers import NestedCloses, close_ahead, find_or_safe, own_close_ends
from .schema_values import convert_value, is_string_typed


class TaggedValues:
    """The value half of `tagged.TaggedCallStream` (see the module docstring)."""

    #: The format writes values inline (GLM's ``<arg_value>V</arg_value>``): every character between
    #: the tags is the value. Else its template writes a newline after a value's open tag and
    #: before its close tag, and ONE of each is not part of the value.
    inline_values: ClassVar[bool] = False
    #: Under conventions="servers", an inline value loses ONE leading and ONE trailing newline even
    #: so (vLLM's reading of Seed-OSS, the one server with a parser for it).
    servers_trims_one_newline: ClassVar[bool] = False
    #: Under conventions="servers", a value loses all whitespace around it (both servers strip it).
    servers_strips_values: ClassVar[bool] = False
    #: Under conventions="servers", as both servers read the format (their patterns stop at the
    #: first such tag): another tag the format may end an unclosed value with ends the value
    #: wherever it stands, a close tag after it or not (under "lossless" it is text there).
    servers_tag_ends_value: ClassVar[bool] = False
    #: ... but the next parameter's head is text inside a value whose close tag follows: both
    #: servers read a value up to its close tag (GLM's ``<arg_value>…</arg_value>``), so only the
    #: call's or the block's close ends it early.
    servers_key_in_value_is_text: ClassVar[bool] = False
    #: ... and a value ends at its first close tag, whatever follows it (both servers' patterns stop
    #: there); under "lossless" a close tag with text after it is the value's text.
    servers_first_close_ends_value: ClassVar[bool] = True
    #: ... and Python's ``None`` stays text where the schema allows null (both servers read its
    #: ``True``/``False`` as booleans, not ``None``); under "lossless" it is null.
    servers_none_is_text: ClassVar[bool] = False
    #: The format's chat template writes a null argument as ``None`` (Qwen3-Coder's ``args_value |
    #: string``): where Python's ``None`` is null, it is null also where the schema allows a string
    #: beside null (``["string", "null"]``, ``anyOf``), not only where it allows null and no string.
    template_writes_none: ClassVar[bool] = False
    #: ... and a Python list or dict literal (``['a', 'b']``) stays text where the schema says array or
    #: object (both servers read only JSON there); under "lossless" it is the array or object.
    servers_containers_are_text: ClassVar[bool] = False
    #: ... and a value is typed by its schema's ``type`` only (an ``enum``'s or ``const``'s values
    #: give none: `schema_values.schema_types`), as both servers read it.
    servers_types_by_type: ClassVar[bool] = False

    # (the machine's state this half reads and writes; set by `TaggedCallStream.__init__`)
    _buf: str
    _pos: int
    _base: int
    _span: int | None
    _final: bool
    _index: int
    _state: int
    _opened: bool
    _closed: bool
    _trim: str
    _types: dict[str, frozenset[str]]
    _untyped: frozenset[str] | None
    _vtypes: frozenset[str] | None
    _vstream: bool
    _vfirst: bool
    _vheld: str
    _vparts: list[str]
    _vfast: bool
    _vlook: int
    #: In a string value, how many opens of a nested example (a value open, a parameter head
    #: taken as text) are not closed yet (`_nested_close`).
    _vdepth: int
    #: The rule deciding a close tag while a nested example is open (made by the machine).
    _nested: NestedCloses
    _tag_ends: tuple[str, ...]
    _close_text: bool
    _python_none: bool
    _python_containers: bool
    _value_ends: tuple[str, ...]
    _verbatim: Any
    _raw_kept: list[str]
    _add_calls: Any
    param_close: ClassVar[str]
    # and the driver's `_args` and `_release`, and the machine's `_params_state`

    def _close_object(self) -> None:
        if not self._closed:
            self._args("}" if self._opened else "{}", hold_ws=False)  # type: ignore[attr-defined]
            self._opened = self._closed = True

    def _open_value(self, pname: str) -> None:
        self._args(("{" if not self._opened else ", ") + dumps_str(pname) + ": ", hold_ws=False)  # type: ignore[attr-defined]
        self._opened = True
        self._vtypes = self._types.get(pname, self._untyped)
        self._vstream = is_string_typed(self._vtypes)
        if self._vstream:
            self._args('"', hold_ws=False)  # type: ignore[attr-defined]
        self._vfirst = True
        self._vheld = ""
        self._vparts = []
        self._vfast = False
        self._vlook = -1
        self._vdepth = 0

    def _value_step(self) -> bool:
        """In a value: its text up to the tag that ends it (see the module docstring)."""
        buf, pos, close = self._buf, self._pos, self.param_close
        j, which = find_or_safe(buf, pos, self._value_ends, self._final)
        if which is None:
            self._value(buf[pos:j])
            self._pos = j
            return False
        if which == self.value_open:  # type: ignore[attr-defined]
            # (the value's own open tag inside it is its text: a nested example opens there)
            self._value(buf[pos : j + len(which)])
            self._pos = j + len(which)
            self._vdepth += self._close_text and self._vstream
            return True
        if which == close and self._vdepth:
            nested = self._nested_close(buf, pos, j)
            if nested is not None:
                return nested
        if which == close:
            ends = self._close_ends(buf, j) if self._close_text else True
            if ends is None:  # (held from the close on until what follows it decides)
                self._value(buf[pos:j])
                self._pos = j
                self._vlook = self._base + len(buf)
                return False
            if not ends:  # the close tag is the value's text
                self._value(buf[pos : j + len(close)])
                self._pos = j + len(close)
                self._vlook = -1
                return True
        elif which not in self._tag_ends:
            # Another tag: it ends the value unless its close tag follows before the next block
            # starts (searched once per text: from where the last search stopped).
            look = self._vlook - self._base if self._vlook >= 0 else -1
            k = close_ahead(buf, j, close, self.start, look, self._final)  # type: ignore[attr-defined]
            if k is None:
                self._value(buf[pos:j])
                self._pos = j
                self._vlook = self._base + len(buf)  # (held from the tag on: the next search goes on here)
                return False
            if k >= 0:  # the tag is text: the value goes on to that close, which decides for itself
                if self._close_text and self._vstream:  # (a parameter head in it opens a nested example)
                    self._vdepth += buf.count(self.value_open or self.param_open, j, k)  # type: ignore[attr-defined]
                self._value(buf[pos:k])
                self._pos = k
                self._vlook = -1
                return True
        self._value(buf[pos:j])
        self._pos = j + (len(which) if which == close else 0)
        self._finish_value()
        return True

    def _nested_close(self, buf: str, pos: int, at: int) -> bool | None:
        """A close tag at `at` while a nested example is open in the value (`_vdepth`;
        `markers.NestedCloses`): True where it is the value's text (taken, go on); False while the
        text so far cannot tell (held from the close on); None where it is no nested close (the
        usual rules decide)."""
        opener = self.value_open or self.param_open  # type: ignore[attr-defined]
        after = self._nested.decide(buf, self._base, at, self.param_close, opener, self.start, self._final)  # type: ignore[attr-defined]
        if after is None:
            self._value(buf[pos:at])
            self._pos = at
            return False
        if after < 0:
            return None
        self._value(buf[pos:after])
        self._pos = after
        self._vdepth -= 1
        return True

    def _close_ends(self, buf: str, at: int) -> bool | None:
        """Whether the close tag at `at` ends the value (the module docstring): no where text that
        is no tag follows it in a value declared a string, and another close tag of the value
        follows before the next block starts with no parameter head between; else yes. None
        while the text so far cannot tell."""
        if not self._vtypes or "string" not in self._vtypes:
            return True  # (a typed or undeclared value: no prose about the format is expected there)
        look = self._vlook - self._base if self._vlook >= 0 else -1
        close, head, bound = self.param_close, self.param_open, self.start  # type: ignore[attr-defined]
        return own_close_ends(buf, at, close, head, bound, look, self._final)

    def _value(self, piece: str) -> None:
        if not piece:
            return
        trim = self._trim
        if self._vfirst:
            if trim == "strip":
                piece = piece.lstrip()  # (the value has not begun while only whitespace came)
                self._vfirst = not piece
            else:
                self._vfirst = False
                if trim == "newline" and piece.startswith("\n"):
                    piece = piece[1:]
        piece = self._vheld + piece
        self._vheld = ""
        if trim == "newline" and piece.endswith("\n"):
            piece, self._vheld = piece[:-1], "\n"
        elif trim == "strip":
            body = piece.rstrip()
            piece, self._vheld = body, piece[len(body) :]
        self._vfast = not self._vheld and self._span is None and trim != "strip"
        if not piece:
            return
        if self._vstream:
            self._args(dumps_str(piece)[1:-1], hold_ws=False)  # type: ignore[attr-defined]
        else:
            self._vparts.append(piece)

    def _finish_value(self) -> None:
        self._vheld = ""
        self._vfast = False
        self._vlook = -1
        if self._vstream:
            self._args('"', hold_ws=False)  # type: ignore[attr-defined]
        else:
            value = convert_value(
                "".join(self._vparts),
                self._vtypes,
                self._python_none,
                self._python_containers,
                self.template_writes_none,
            )
            self._vparts = []
            self._args(dumps(value), hold_ws=False)  # type: ignore[attr-defined]
        self._state = self._params_state  # type: ignore[attr-defined]

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """`BuiltinToolStream.feed`, with one shortcut: in a value, past its first piece, with nothing
        held, a chunk `_verbatim` matches (no newline, no marker's first character, nothing JSON
        escapes) is what `_step` would hand `_value` whole, and `_value` would stream it as is (a
        string) or keep it (a typed value). (`_vfast` is False once flushed: `_at_end` finishes it.)"""
        if not isinstance(text, str):
            raise InvalidInputError("stream.feed", text)
        if self._vfast and self._pos == len(self._buf) and self._verbatim(text) is not None:
            self._raw_kept.append(text)  # (in a call: nothing to trim, see `CallSteps._keep_raw`)
            self._base += self._pos
            self._buf = text
            self._pos = len(text)
            if not self._vstream:
                self._vparts.append(text)
                return empty_delta()
            self._args(text, hold_ws=False)  # type: ignore[attr-defined]  (held until the call is whole)
            return self._release()  # type: ignore[attr-defined, no-any-return]
        return super().feed(text, token_ids)  # type: ignore[misc, no-any-return]

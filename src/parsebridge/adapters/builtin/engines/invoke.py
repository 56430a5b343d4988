"""Shared machine of the ``<…invoke name="NAME"><…parameter name="K">V</…parameter></…invoke>`` formats.

DeepSeek's DSML (V3.2, V4, V4.1) and StepFun's steptml (Step-3) write a
call as an XML-ish *invoke* element holding one *parameter* element per
argument, inside a section marker. They differ only in marker texts, in the
wrapper each call gets (Step-3 puts ``<｜tool_call_begin｜>function<｜tool_sep｜>``
before and ``<｜tool_call_end｜>`` after every invoke) and in how a value's
text becomes JSON (a ``string="true|false"`` attribute vs the tool schema),
so one machine (`InvokeStream`) reads them all, configured by a `Dialect`.

Reading rules (the format parsers' docstrings add their value rules):

* the call is announced when the invoke's open tag is complete; its arguments
  JSON is built as parameters close: ``{"K": V`` then ``, "K": V`` then ``}`` at
  ``</…invoke>`` (a self-closing ``<…invoke name="x"/>`` is a call with ``{}``);
* a parameter value is the text up to ``</…parameter>`` (a missing close is
  tolerated: the next parameter or the invoke's close ends it); a model writing
  about its format puts the format's tags inside a value, so under "lossless"
  (and for DSML under both conventions: `servers_tag_ends_value`) the next
  parameter's head or the invoke's close inside a value is its text where the
  value's close follows before the next section, and in a string value its own
  close followed by text (no tag) is its text where another close follows with
  no parameter head between (`servers_first_close_ends_value`); and a whole invoke
  written in a string value as an example is its text, each of its parameters'
  close tags included, where the close tags after one outnumber the parameter heads
  before the next section (one is left to close the value: `markers.NestedCloses`);
  a stream holds the text from such a tag until that is decided;
* a missing ``</…invoke>`` is tolerated: a section end, a new invoke, a new
  section or (Step-3) the call wrapper's end closes the arguments normally.

Malformed output (builtin policy, see `scan`): an invoke without a ``name``
attribute stays in the content verbatim; a section holding no named call is
content, markers included; stray text between parameters is content, shown in
place; a parameter tag without a name is content with its value. A call cut off
by the end of output is no call (its arguments never close: `whole_calls`), and
its text is text; under conventions="servers" Step-3 holds its calls until their
section is complete, and reads a cut-off section as text (`servers_whole_sections`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from .conventions import SERVERS
from .invoke_dialect import Dialect, tag_attrs
from .json_text import Quiet, dumps, dumps_str, loads_or_none
from .markers import NestedCloses, close_ahead, content_mode, find_or_safe, first_chars, own_close_ends
from .schema_values import schema_types
from .sections import REJECTED, SectionStream
from .tool_parser import BuiltinToolParser

_OUTSIDE, _HEAD, _OPEN_TAG, _PARAMS, _PARAM_TAG, _VALUE, _OPAQUE = range(7)


class InvokeStream(SectionStream):
    """Incremental invoke machine; the parser supplies `dialect` and `convert`."""

    #: Under conventions="servers", as both servers read the format: the section is the unit (Step-3): a section's calls show once it is closed, an unclosed
    #: one is text, and only the first section is read: after its end marker the rest is text.
    servers_whole_sections: ClassVar[bool] = False
    #: ... and a call to a tool the request's `tools` do not declare is no call (an invoke without
    #: a name: its text is content), when the request declares tools.
    servers_drops_undeclared: ClassVar[bool] = False
    #: ... and a value with no declared schema stays a string (the parser's `convert` reads it).
    servers_untyped_strings: ClassVar[bool] = False
    #: ... and a value loses the whitespace around it (the parser's `convert` strips it).
    servers_strips_values: ClassVar[bool] = False
    #: ... and a value is typed by its schema's ``type`` only (the parser's `param_types`).
    servers_types_by_type: ClassVar[bool] = False
    #: ... and a value ends at the first tag that may end it (the next parameter's head, the
    #: invoke's close), even where its own close follows; under "lossless" such a tag is the value's
    #: text where its close follows before the next section (a model writing about its format).
    servers_tag_ends_value: ClassVar[bool] = True
    #: ... and a value ends at its first close tag, even where text follows that tag and another
    #: close of the value comes later; under "lossless", in a string value, such a close is text.
    servers_first_close_ends_value: ClassVar[bool] = True
    #: Under both conventions: an invoke whose body (before any parameter) is one JSON object takes
    #: it as its arguments (DSML: `_json_body`); else such a body is stray text.
    json_body: ClassVar[bool] = False

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        d: Dialect = parser.dialect  # type: ignore[attr-defined]
        self._d = d
        self._state = _OUTSIDE
        self._tag: list[str] = []
        self._fn = ""
        self._pname: str | None = None
        self._pattrs: dict[str, str] = {}
        self._value: list[str] = []
        self._nparams = 0
        self._started = False  # a parameter tag was seen in the current call
        self._stray_ws: list[str] = []
        #: An invoke's body before its first parameter, held while it may be one JSON object
        #: (`json_body`), else None.
        self._body: list[str] | None = None
        #: Step-3: the open span holds a call's whole head (``<｜tool_call_begin｜>TYPE<｜tool_sep｜>``),
        #: no invoke yet: at the end of output it is a cut-off call's text, not section structure.
        self._headed = False
        wrapper = tuple(m for m in (d.head_begin, d.head_end, d.call_end) if m)
        section_end = (d.section_end,) if d.section_end else ()  # "": bare invokes only (MiniCPM 5)
        self._breakers = (*section_end, *d.section_begins, d.invoke_open, *wrapper)
        self._in_section_markers = (*d.section_begins, d.invoke_open, *section_end, *wrapper, *d.unwrap)
        self._outside_markers = (*d.section_begins, d.invoke_open, *wrapper, *d.unwrap)
        if d.section_begins and parser.conventions == SERVERS and not parser.servers_bare_calls:
            # both servers read calls only inside a section: a bare call outside one is text
            bare = (d.invoke_open, d.head_begin)
            self._outside_markers = tuple(m for m in self._outside_markers if m not in bare)
        self._param_markers = (d.param_open, d.invoke_close, *self._breakers)
        cdata = (d.cdata_open,) if d.cdata_open else ()
        self._value_ends = (d.param_close, d.param_open, d.invoke_close, *cdata)
        self._opaque_ends = (d.invoke_close, *self._breakers)
        self._head_ends = (d.head_end, *self._breakers) if d.head_end else ()
        drops = parser.conventions == SERVERS and self.servers_drops_undeclared and bool(parser.tools)
        self._declared = frozenset(schema_types(parser.tools)) if drops else None
        #: `_fast_mode`'s (value, tag) modes, made at a stream's first call (`parse` never asks).
        self._quiet: tuple[Quiet | None, Quiet | None] | None = None
        self._one_section = parser.conventions == SERVERS and self.servers_whole_sections
        servers = parser.conventions == SERVERS
        self._tags_end_value = servers and self.servers_tag_ends_value
        self._first_close_ends = servers and self.servers_first_close_ends_value
        #: In a value, the offset (in the fed text) from where the search for its close tag goes on
        #: (-1: none held; `_value_goes_on`).
        self._vlook = -1
        #: In a string value, how many parameter heads taken as its text (a whole call written in it
        #: as an example) are not closed yet (`_nested_close`).
        self._vdepth = 0
        self._nested = NestedCloses()
        self._bound = d.section_begins[0] if d.section_begins else None

    def _fast_mode(self) -> Any:
        """In a value (converted when it closes) or an opening tag (read when it closes), a chunk
        the state's step would only keep: the lists `_value` and `_tag` (one each per stream,
        cleared per value and tag) keep it in place. In a value, a chunk with no marker's first
        character; in a tag, one with no character that may end it (`_read_tag`)."""
        state = self._state
        if state != _VALUE and state != _OPEN_TAG and state != _PARAM_TAG:
            return None
        quiet = self._quiet
        if quiet is None:
            firsts = first_chars(self._value_ends) if all(self._value_ends) else ""
            end = self._d.tag_end
            tag_stops = "<>" if end == ">" else end[:1]
            quiet = self._quiet = (
                Quiet(content_mode(firsts), self._value.append) if firsts else None,
                Quiet(content_mode(tag_stops), self._tag.append) if tag_stops else None,
            )
        return quiet[0] if state == _VALUE else quiet[1]

    # -- helpers ----------------------------------------------------------------------------
    def _read_tag(self) -> bool | None:
        """Collect an open tag's text up to ``>``: True at ``>`` (consumed), None on more, False at ``<``."""
        end = self._d.tag_end
        if end != ">":  # a special-token tag end: the tag runs to it
            stop, which = find_or_safe(self._buf, self._pos, (end,), self._final)
            self._tag.append(self._buf[self._pos : stop])
            self._pos = stop + (len(end) if which is not None else 0)
            return True if which is not None else None
        buf = self._buf
        n = len(buf)
        i = self._pos
        while i < n and buf[i] not in "<>":
            i += 1
        self._tag.append(buf[self._pos : i])
        self._pos = i
        if i == n:
            return None
        if buf[i] == ">":
            self._pos += 1
            return True
        return False

    def _stray(self, text: str) -> None:
        """Text between parameters: content in place; whitespace waits to see if more text follows."""
        body = text.rstrip()
        if not body:
            if text:
                self._stray_ws.append(text)
            return
        self._inline_content("".join(self._stray_ws) + body)
        self._stray_ws = [text[len(body) :]] if len(body) < len(text) else []

    def _close_args(self) -> None:
        self._args("{}" if self._nparams == 0 else "}", hold_ws=False)

    def _end_invoke(self) -> None:
        """The invoke is over (closed or cut by a breaker): close the arguments, end the call."""
        self._close_args()
        self._end_call(self._pos)
        self._state = _OUTSIDE

    def _finish_value(self) -> None:
        text = "".join(self._value)
        self._value.clear()
        if self._pname is None:
            self._inline_content(text)
            return
        value = self.parser.convert(self._fn, self._pname, self._pattrs, text)  # type: ignore[attr-defined]
        key = dumps_str(self._pname)
        sep = "{" if self._nparams == 0 else ", "
        self._args(f"{sep}{key}: {dumps(value)}", hold_ws=False)
        self._nparams += 1

    # -- the machine ------------------------------------------------------------------------------
    def _step(self) -> bool:
        state, buf, d = self._state, self._buf, self._d
        if state == _OUTSIDE:
            return self._outside_step(d)
        if state == _HEAD:  # Step-3's call type ("function") up to the separator
            j, which = find_or_safe(buf, self._pos, self._head_ends, self._final)
            if which is None:
                self._pos = j
                return False
            self._pos = j + (len(which) if which == d.head_end else 0)
            self._headed = which == d.head_end
            self._state = _OUTSIDE
            return True
        if state in (_OPEN_TAG, _PARAM_TAG):
            return self._tag_step(state, d)
        if state == _PARAMS:
            return self._params_step(buf, d)
        if state == _VALUE:
            stop, which = find_or_safe(buf, self._pos, self._value_ends, self._final)
            if which is not None and which == d.cdata_open:
                return self._cdata_step(buf, stop)
            if which is not None and self._pname is not None:
                goes_on = self._value_goes_on(buf, stop, which)
                if goes_on is None or goes_on >= 0:  # (held from the tag on / the tag is text)
                    self._value.append(buf[self._pos : stop if goes_on is None else goes_on])
                    self._pos = stop if goes_on is None else goes_on
                    self._vlook = self._base + len(buf) if goes_on is None else -1
                    return goes_on is not None
            self._value.append(buf[self._pos : stop])
            self._pos = stop
            if which is None:
                return False
            self._vlook = -1
            self._finish_value()
            if which == d.param_close:
                self._pos += len(which)
                if self._pname is None:
                    self._inline_content(which)
            self._state = _PARAMS
            return True
        # _OPAQUE: an unnamed invoke, content up to its close (or a breaker)
        j, which = find_or_safe(buf, self._pos, self._opaque_ends, self._final)
        if which is None:
            self._pos = j
            return False
        self._pos = j + (len(which) if which == d.invoke_close else 0)
        self._reject(self._pos)
        self._state = _OUTSIDE
        return True

    def _cdata_step(self, buf: str, at: int) -> bool:
        """A CDATA section opens at `at` in a value: its text, tags included, is the value's up to its
        close. Held from its opener until that close comes (the search goes on from `_vlook`); one
        the end of output cuts off was no section: its opener is text and the value goes on."""
        close, opener = self._d.cdata_close, self._d.cdata_open
        look = self._vlook - self._base if self._vlook >= 0 else at + len(opener)
        end = buf.find(close, look)
        if end < 0 and not self._final:
            self._value.append(buf[self._pos : at])
            self._pos = at
            self._vlook = self._base + max(look, len(buf) - len(close) + 1)
            return False
        stop = end + len(close) if end >= 0 else at + len(opener)
        self._value.append(buf[self._pos : stop])
        self._pos = stop
        self._vlook = -1
        return True

    def _value_goes_on(self, buf: str, at: int, which: str) -> int | None:
        """Whether the tag `which` at `at` ends the value: -1 where it does, the offset the value's
        text runs to where the tag is text, None while the text so far cannot tell. Another tag
        is text where the value's close follows before the next section; the value's own close is
        text in a string value where text that is no tag follows it and another close follows,
        with no parameter head between (both: the module docstring)."""
        close = self._d.param_close
        if which != close and self._tags_end_value:
            return -1
        if which == close and (
            self._first_close_ends or not self.parser.string_valued(self._fn, self._pname, self._pattrs)  # type: ignore[attr-defined]
        ):
            return -1
        look = self._vlook - self._base if self._vlook >= 0 else -1
        if which != close:
            k = close_ahead(buf, at, close, self._bound, look, self._final)
            if k is not None and k >= 0:  # (a parameter head in it opens a nested example)
                self._vdepth += buf.count(self._d.param_open, at, k)
            return k
        if self._vdepth:
            nested = self._nested.decide(
                buf, self._base, at, close, self._d.param_open, self._bound, self._final
            )
            if nested is None or nested >= 0:
                self._vdepth -= nested is not None
                return nested
        ends = own_close_ends(buf, at, close, self._d.param_open, self._bound, look, self._final)
        if ends is None:
            return None
        return -1 if ends else at + len(close)

    def _params_step(self, buf: str, d: Dialect) -> bool:
        """Inside an invoke, between parameters: a parameter opens, or the invoke ends."""
        stop, which = find_or_safe(buf, self._pos, self._param_markers, self._final)
        text = buf[self._pos : stop]
        self._pos = stop
        if self._body is not None:  # (before any parameter, where the body may be a JSON object)
            self._body.append(text)
            text = "".join(self._body)
            if which is None and (not text.strip() or text.lstrip().startswith("{")):
                return False
            self._body = None
            if which == d.invoke_close and self._json_body(text):
                return True
        self._stray(text)
        if which is None:
            return False
        self._stray_ws = []  # whitespace before a tag is layout
        if which == d.param_open:
            self._pos += len(which)
            self._tag.clear()
            self._started = True
            self._state = _PARAM_TAG
            return True
        if which == d.invoke_close:
            self._pos += len(which)
        self._call_closed = True  # (at a marker: even one found only at the end of output, `whole_calls`)
        self._end_invoke()
        return True

    def _json_body(self, text: str) -> bool:
        """At the invoke's close, its body before any parameter: when it is one JSON object, the
        call's arguments (SGLang's DSML reading; vLLM returns the call without them)."""
        body = text.strip()
        if not body.startswith("{") or not isinstance(loads_or_none(body), dict):
            return False
        self._args(body, hold_ws=False)
        self._pos += len(self._d.invoke_close)
        self._call_closed = True
        self._end_call(self._pos)
        self._state = _OUTSIDE
        return True

    def _tag_step(self, state: int, d: Dialect) -> bool:
        """An opening tag read whole: an invoke is named (or opaque), or a parameter's value opens."""
        done = self._read_tag()
        if done is None:
            return False
        tag = "".join(self._tag)
        if state == _OPEN_TAG:
            name = tag_attrs(tag, d.unescape).get(d.name_attr, "").strip() if done else ""
            if self._declared is not None and name not in self._declared:
                name = ""  # (under "servers": a call to an undeclared tool is no call)
            if not name:
                self._state = _OPAQUE
                return True
            self._fn = name
            self._nparams = 0
            self._started = False
            self._commit(name)
            self._named_in_section()
            if tag.rstrip().endswith("/"):
                self._end_invoke()
            else:
                self._state = _PARAMS
                self._body = [] if self.json_body else None
            return True
        attrs = tag_attrs(tag, d.unescape) if done else {}
        pname = attrs.get(d.key_attr)
        self._pname, self._pattrs = pname, attrs
        self._value.clear()
        self._vdepth = 0
        if pname is None:
            self._inline_content(d.param_open + tag + (d.tag_end if done else ""))
        self._state = _VALUE
        return True

    def _outside_step(self, d: Dialect) -> bool:
        """Between calls: content up to a marker; a section, an invoke or a Step-3 head opens."""
        which = self._between_calls(self._in_section_markers if self._in_section else self._outside_markers)
        if which is None or which is REJECTED:  # (more text needed / the section was content)
            return which is REJECTED
        self._pos += len(which)
        if which == d.section_end and which:
            self._close_section(which)
            if self._one_section:  # (no section after the first: the rest is text)
                self._outside_markers = d.unwrap
        elif which in d.section_begins:
            self._begin_span(self._pos - len(which))
            self._open_section()
        elif which == d.invoke_open:
            self._begin_span(self._pos - len(which))
            self._headed = False
            self._tag.clear()
            self._state = _OPEN_TAG
        elif which == d.head_begin:
            self._begin_span(self._pos - len(which))
            self._state = _HEAD
        elif which in d.unwrap:
            if self._span is None:
                self._structure()
        elif self._span is None:  # a lone wrapper marker: structure after a call, else content
            if (self._in_section and self._section_named) or (self._ws_mode and self._seen_structure):
                self._structure()
            else:
                self._content(which)
        return True

    def _at_end(self) -> None:
        if not self._in_call:
            if self._state == _OUTSIDE and self._headed and self._span is not None:
                self._reject(self._pos)  # (a call's head the end of output cut off: its text is text)
            elif self._state == _OUTSIDE:
                self._drop_named_section()
            return
        if self._state == _VALUE:
            self._finish_value()
        if not self._started:
            self._close_args()


class InvokeToolParser(BuiltinToolParser):
    """Base of the invoke formats: a `dialect` (the format's `markers` follow from it) and a value rule."""

    dialect: Dialect
    stream_class = InvokeStream

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "dialect" in cls.__dict__ and "markers" not in cls.__dict__:
            cls.markers = cls.dialect.markers

    def convert(self, function: str, param: str, attrs: dict[str, str], text: str) -> Any:
        raise NotImplementedError

    def string_valued(self, function: str, param: str, attrs: dict[str, str]) -> bool:
        """Whether a parameter's value is a string, by its tag or by the tool's schema (where a
        close tag with text after it may be the value's text: `InvokeStream._value_goes_on`)."""
        return False

    def has_tool_calls(self, text: str) -> bool:
        """A section opener or an invoke opener of the dialect appears in `text`."""
        return any(m in text for m in (*self.dialect.section_begins, self.dialect.invoke_open))

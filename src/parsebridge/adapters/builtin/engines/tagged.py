"""One incremental machine for the XML-ish tagged-parameter formats.

Several families write a call as a name plus parameters between tags, and
differ only in the tag texts:

=============  ========================  ===================  ==========================================
family         block                     call                 parameter
=============  ========================  ===================  ==========================================
glm45 / glm47  ``<tool_call>…</…>``      NAME right after it  ``<arg_key>k</arg_key><arg_value>v</arg_value>``
minimax_m2     ``<minimax:tool_call>``   ``<invoke name=…>``  ``<parameter name="k">v</parameter>``
seed_oss       ``<seed:tool_call>``      ``<function=NAME>``  ``<parameter=k>v</parameter>``
qwen3_coder    ``<tool_call>``           ``<function=NAME>``  ``<parameter=k>v</parameter>``
=============  ========================  ===================  ==========================================

A format is its tag texts (`Tags`, set on its `TaggedCallParser`; the layout they imply is
`tagged_format.TaggedFormat`'s), and four rules (attributes of a `TaggedCallStream` subclass)
on which the formats differ (Qwen3-Coder's, which
predates the others, sets all four the other way: `one_call_per_block`,
`name_of`, `shows_bad_param_head`, `keeps_cut_key`). The machine:

* the call is announced when its name is complete; a block without a
  readable name stays in the content verbatim;
* parameter values are typed by the tool schema (`schema_values.convert_value`);
  a value is the text between its tags with ONE leading and ONE trailing
  newline removed; string-typed values stream as JSON string fragments,
  others are emitted when the parameter closes;
* a missing value close is tolerated (the next parameter, the call's close
  or the block's close ends it); stray text between parameters or calls,
  a parameter head that is not one, and a key without a value are not part
  of a call and are shown as content, in place, verbatim;
* a new block start (or, in multi-call blocks, a new call open) closes an
  unclosed call;
* at end of output inside a call, the call is no call and its text is text
  (`whole_calls`: its arguments never closed; the machine still finishes an
  open parameter, and keeps a key cut off before its value, ``{"k": ``, unless
  the format says otherwise: `keeps_cut_key`, in the arguments it discards).

Names: `call_steps.clean_name` (so a JSON body inside a block is content, not a call
named ``{"name"…``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from .conventions import SERVERS
from .json_text import dumps_str
from .markers import NestedCloses, find_or_safe
from .scan import JSON_WS, MORE, BuiltinToolStream, match_marker, safe_end
from .schema_values import TEXT_OR_NULL, ParamTypes
from .tagged_format import TaggedFormat
from .tagged_values import TaggedValues
from .tool_parser import BuiltinToolParser

_CONTENT, _BLOCK, _NAME, _PARAMS, _PNAME, _VWAIT, _PVALUE, _OPAQUE, _STRAY, _TAIL, _BARE_END = range(11)


class TaggedCallStream(TaggedFormat, TaggedValues, BuiltinToolStream):
    """Incremental machine for one `TagSpec` (see the module docstring)."""

    #: Under conventions="servers", as both servers read the format: a value with no declared schema
    #: stays a string. (Both servers also keep a call cut off where no value is open, its parameters
    #: closed as its arguments: builtin does not, under either convention: `whole_calls`.)
    servers_untyped_strings: ClassVar[bool] = False
    #: ... but the text ``null`` (in any case) is null, even there (`schema_values.TEXT_OR_NULL`).
    servers_untyped_null: ClassVar[bool] = False
    #: ... and a call to a tool the request's `tools` do not declare is no call (its text is
    #: treated as a block without a readable name), when the request declares tools.
    servers_drops_undeclared: ClassVar[bool] = False
    #: ... and a value keeps the newlines the format writes around it (no newline is removed).
    servers_keeps_value_newlines: ClassVar[bool] = False
    #: ... a block opened right after another start marker is no call (read as one without a name).
    servers_doubled_start_no_call: ClassVar[bool] = False

    def __init__(self, parser: BuiltinToolParser) -> None:  # a `tagged_parser.TaggedCallParser`
        super().__init__(parser)
        cls = type(self)
        self._types_by_fn: ParamTypes = parser.param_types  # type: ignore[attr-defined]
        self._state = _CONTENT
        self._head: list[str] = []
        self._tail: list[str] = []
        self._types: dict[str, frozenset[str]] = {}
        self._opened = False
        self._closed = False
        self._key = ""
        self._key_raw = ""
        self._vtypes: frozenset[str] | None = None
        self._vstream = False
        self._vfirst = True
        self._vheld = ""
        self._vparts: list[str] = []
        #: In a value, the offset (in the fed text) from where the search for its close tag goes on
        #: (-1: none held; `_value_step`).
        self._vlook = -1
        self._vdepth = 0
        self._nested = NestedCloses()
        #: The state a finished value returns to (`tagged_values`).
        self._params_state = _PARAMS
        #: In a value, nothing held: `feed`'s shortcut applies (set by `_value`).
        self._vfast = False
        self._stray_back = _PARAMS
        #: The open call opened straight from content (`bare_calls`).
        self._bare = False
        servers = parser.conventions == SERVERS
        #: the tags that end a value wherever they stand (`servers_tag_ends_value`), and whether a
        #: close tag with text after it is the value's text (`tagged_values._close_ends`)
        self._tag_ends: tuple[str, ...] = ()
        if servers and cls.servers_tag_ends_value:
            key = cls.param_open if cls.servers_key_in_value_is_text else None
            self._tag_ends = tuple(m for m in self._value_ends_of(cls) if m != cls.param_close and m != key)
        self._close_text = not (servers and cls.servers_first_close_ends_value)
        self._python_none = not (servers and cls.servers_none_is_text)
        self._python_containers = not (servers and cls.servers_containers_are_text)
        self._trim = self._trim_of(cls, servers)
        self._doubled_no_call = servers and cls.servers_doubled_start_no_call
        drops = servers and cls.servers_drops_undeclared and bool(parser.tools)
        self._declared: frozenset[str] | None = frozenset(self._types_by_fn) if drops else None
        self._untyped: frozenset[str] | None = None
        if servers and cls.servers_untyped_strings:
            self._untyped = TEXT_OR_NULL if cls.servers_untyped_null else frozenset({"string"})
        (
            self._starts,
            self._name_ends,
            self._pname_ends,
            self._find_name_end,
            self._find_pname_end,
            self._in_call_markers,
            self._block_markers,
            self._value_ends,
            self._opaque_ends,
            self._verbatim,
        ) = cls.derived()

    @staticmethod
    def _trim_of(cls: type[TaggedCallStream], servers: bool) -> str:
        """What is trimmed around a value (`tagged_values._value`): "newline" (one each side), "strip"
        (all whitespace) or "" (nothing: the value is every character between its tags)."""
        if servers and cls.servers_strips_values:
            return "strip"
        if servers and cls.servers_trims_one_newline:
            return "newline"
        if cls.inline_values or (servers and cls.servers_keeps_value_newlines):
            return ""
        return "newline"

    # -- arguments object (its values: `tagged_values.TaggedValues`) -----------------------------
    def _close_call(self, pos: int) -> None:
        if self._in_call:
            self._close_object()
            self._call_closed = True  # (at a marker: even one found only at the end of output)
            self._end_call(pos)

    def _named(self, name: str) -> None:
        self._commit(name)
        self._types = self._types_by_fn.get(name, {})
        self._opened = self._closed = False
        self._state = _PARAMS

    def _after_call(self) -> int:
        return _BLOCK if type(self).start else _CONTENT

    def _flush_tail(self) -> None:
        """The text between a call's close and its block's end: content unless only whitespace."""
        tail = "".join(self._tail)
        self._tail = []
        if tail.strip():
            self._inline_content(tail)

    # -- the machine ------------------------------------------------------------------------------
    def _step(self) -> bool:
        state, buf, cls = self._state, self._buf, type(self)
        if state == _PVALUE:  # (a value's text: the most common step, first)
            return self._value_step()
        if state == _CONTENT:
            return self._content_step(cls)
        if state == _BLOCK:
            return self._block_step(buf, cls)
        if state == _NAME:
            if cls.call_open is None and not self._head and not self._skip_ws():
                return False
            return self._read_name()
        if state == _PARAMS:
            return self._params_step(buf, cls)
        if state == _STRAY:
            j = buf.find("<", self._pos)
            end = len(buf) if j < 0 else j
            self._inline_content(buf[self._pos : end])
            self._pos = end
            if j < 0:
                return False
            self._state = self._stray_back
            return True
        if state == _PNAME:
            return self._read_pname()
        if state == _VWAIT:
            return self._value_wait_step(buf, cls)
        if state == _BARE_END:
            return self._bare_end_step(buf, cls)
        # _OPAQUE: an unnamed span runs to the block's end; it is then content, verbatim
        # _TAIL: the text after a call's close, kept; the call ends with the block
        stop, which = find_or_safe(buf, self._pos, self._opaque_ends, self._final)
        if state == _TAIL:
            self._tail.append(buf[self._pos : stop])
        self._pos = stop
        if which is None:
            return False
        self._pos += len(which) if which != cls.start else 0
        if state == _TAIL:
            self._flush_tail()
            self._call_closed = True  # (at the block's end, or the next block's start)
            self._end_call(self._pos)
        else:
            self._reject(self._pos)
        self._state = _CONTENT
        return True

    def _content_step(self, cls: type[TaggedCallStream]) -> bool:
        """Content up to a start marker; then a call's name, or a block of calls."""
        found = self._outside(self._starts)
        if found is None:
            return False
        self._begin_span(self._pos)
        self._pos += len(found)
        self._head = []
        self._bare = bool(cls.start) and found == cls.call_open
        if cls.start is None or self._bare:
            self._state = _NAME
        else:
            self._state = _NAME if cls.call_open is None else _BLOCK
        return True

    def _bare_end_step(self, buf: str, cls: type[TaggedCallStream]) -> bool:
        """After a bare call's close: its block end, if one follows, is the call's; else content goes on."""
        at = self._pos
        more = self._skip_ws()
        found = match_marker(buf, self._pos, (cls.end or "",), self._final) if more else None
        if found == MORE or (not more and not self._final):
            self._pos = at
            return False
        if found is not None:
            self._pos += len(found)
        else:
            self._pos = at
        self._call_closed = True  # (closed at its close tag: the block end was only looked for)
        self._end_call(self._pos)
        self._state = _CONTENT
        return True

    def _value_wait_step(self, buf: str, cls: type[TaggedCallStream]) -> bool:
        """After a key, before its value's opening marker (a key without one is content)."""
        assert cls.value_open is not None
        found = self._marker_past_ws((cls.value_open,))
        if found == MORE:
            return False
        if found is None:  # a key without a value is no argument: its text is shown as content
            self._inline_content(self._key_raw)
            self._state = _PARAMS
            return True
        self._pos += len(found)
        self._open_value(self._key)
        self._state = _PVALUE
        return True

    def _params_step(self, buf: str, cls: type[TaggedCallStream]) -> bool:
        """Inside a call, between parameters: a parameter opens, the call ends, or stray text."""
        found = self._marker_past_ws(self._in_call_markers)
        if found == MORE:
            return False
        if found == cls.param_open:
            self._pos += len(found)
            self._head = []
            self._state = _PNAME
        elif found is not None and found == cls.call_close:
            self._pos += len(found)
            if cls.one_call_per_block:
                self._close_object()
                self._call_closed = True  # (its function closed: whole even if the block's end never comes)
                self._state = _BARE_END if self._bare else _TAIL
            else:
                self._close_call(self._pos)
                self._state = self._after_call()
        elif found is not None and found == cls.end:
            self._pos += len(found)
            self._close_call(self._pos)
            self._state = _CONTENT
        elif found is not None:  # a new block or call: this call ends unclosed, and is a call (docs)
            if found == cls.start and cls.call_open is None and not self._opened:
                # (but one with no parameter, its name right after the start marker, is the start
                # marker written in prose, `I use <tool_call> blocks.`: no call, its text is text)
                self._call_broken = True
            self._close_call(self._pos)
            self._state = _CONTENT if found == cls.start else self._after_call()
        else:
            self._stray(buf, _PARAMS)
        return True

    def _stray(self, buf: str, back: int) -> None:
        """A character that opens nothing where a marker was due: content, and so is the text
        up to the next ``<`` (the stray state); then back to `back`."""
        self._stray_back = back
        self._inline_content(buf[self._pos])
        self._pos += 1
        self._state = _STRAY

    def _block_step(self, buf: str, cls: type[TaggedCallStream]) -> bool:
        """Inside a block, between calls: a call opens, the block ends (or a new one starts), or stray text."""
        found = self._marker_past_ws(self._block_markers)
        if found == MORE:
            return False
        if found == cls.call_open:
            self._begin_span(self._pos)
            self._pos += len(found)
            self._head = []
            self._state = _NAME
        elif found is not None:  # block end or a new block
            if self._span is not None:
                self._state = _OPAQUE
                return True
            if found == cls.end:
                self._pos += len(found)
                self._structure()
            self._state = _CONTENT
        elif self._span is not None:
            self._state = _OPAQUE
        else:
            self._stray(buf, _BLOCK)
        return True

    def _read_head(
        self, find_end: Callable[[str, int], tuple[int, str | None]], ends: tuple[str, ...]
    ) -> tuple[str, str] | None:
        """A head (a call's or a parameter's name) read across chunks up to the first of `ends`
        (`find_end` finds it): its text and that end, the cursor on the end; None: more text needed."""
        buf = self._buf
        j, which = find_end(buf, self._pos)
        if which is None:
            end = safe_end(buf, self._pos, ends, self._final)
            if end > self._pos:  # (an empty head stays empty: the name state skips whitespace first)
                self._head.append(buf[self._pos : end])
            self._pos = end
            return None
        self._head.append(buf[self._pos : j])
        head = "".join(self._head)
        self._head = []
        self._pos = j
        return head, which

    def _read_name(self) -> bool:
        cls = type(self)
        read = self._read_head(self._find_name_end, self._name_ends)
        if read is None:
            return False
        head, which = read
        name = cls.name_of(head)
        if name is not None and self._declared is not None and name not in self._declared:
            name = None  # (under "servers": a call to an undeclared tool is no call)
        if cls.call_open is not None:
            if which != cls.call_name_close or name is None:
                self._state = _OPAQUE
                return True
            self._pos += len(which)
        elif name is None:
            if which == cls.start and self._doubled_no_call and not head.strip():
                self._pos += len(which)  # (a doubled start: the block it opens is no call either)
            self._state = _OPAQUE
            return True
        elif which == "\n":
            self._pos += 1
        self._named(name)
        return True

    def _read_pname(self) -> bool:
        cls = type(self)
        read = self._read_head(self._find_pname_end, self._pname_ends)
        if read is None:
            return False
        raw, which = read
        key = raw.strip(JSON_WS)
        if cls.param_name_close == ">":
            key = cls.name_of(key) or ""
        if which != cls.param_name_close or not key:
            # not a parameter head: what follows is read as stray text / tags
            if cls.shows_bad_param_head:
                self._inline_content(cls.param_open + raw)
            self._state = _PARAMS
            return True
        self._pos += len(which)
        self._key_raw = cls.param_open + raw + which
        if cls.value_open is None:
            self._open_value(key)
            self._state = _PVALUE
        else:
            self._key = key
            self._state = _VWAIT
        return True

    def _at_end(self) -> None:
        if not self._in_call:
            return
        if self._state == _PVALUE:
            self._finish_value()
        elif self._state == _TAIL:
            self._flush_tail()
        elif self._state in (_PNAME, _VWAIT) and type(self).keeps_cut_key:
            # cut off after a key: keep it in the flagged arguments
            key = self._key if self._state == _VWAIT else "".join(self._head).strip(JSON_WS)
            if key:
                self._args(("{" if not self._opened else ", ") + dumps_str(key) + ": ", False)

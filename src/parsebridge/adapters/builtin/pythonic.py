"""Pythonic tool calls (Llama-3.2 / Llama-4): ``[f(a=1, b="x"), g()]``.

A list of calls, optionally wrapped in ``<|python_start|>…<|python_end|>``,
may open the output or follow prose (``Sure: [get_weather(city='NYC')]``,
``text <|python_start|>[…]<|python_end|>``: SGLang reads both); a ``[`` that
does not open ``name(`` is content. Arguments
are keyword arguments with Python literal values (strings, numbers,
True/False/None, lists, tuples, dicts, nested); they become a JSON object.

Streaming: a call is announced (index, id, name) as soon as ``name(`` is
seen; its arguments JSON is emitted in one piece when the call's closing
``)`` arrives (Python string/bracket state is tracked incrementally, so a
``)`` or ``]`` inside a string does not end anything). Each call's own
source is then parsed with `ast` (`ast.literal_eval` per keyword) — the same
code for one-shot and streaming, each call parsed once.

Malformed output (builtin policy, see `scan`):

* positional, repeated or ``**`` arguments, non-literal values, values JSON cannot hold (sets, bytes,
  complex, NaN), or a call that does not parse → no call, its text is text (`whole_calls`);
* a list element that is not ``name(`` (e.g. ``[1, 2]`` or ``[]``) ends call recognition:
  from there (from the list start when no call was named) the output is content verbatim,
  up to the next ``[`` or ``<|python_start|>``; so does what follows a call that was no call
  when none before it in the list stood (``[f(a=x)]``, ``[f(a=x), g()]``: all content, as a
  list that does not parse is for the servers' parsers);
* text after the closing ``]`` (and ``<|python_end|>``) is content;
* end of output inside a call: no call, its text is text (`whole_calls`); inside a name:
  content.

`format_tool_result`: the result as the ``ipython`` message content (Llama-3.2/4 templates):
a string verbatim, anything else as JSON (no id: the format has none).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, ClassVar

from ...formats._base import result_text
from ...formats.pythonic import PY_END, PY_START
from .engines.python_source import parse_expression
from .engines.scan import JSON_WS, MORE, BuiltinToolStream, match_marker
from .engines.tool_parser import BuiltinToolParser

_IDENT_START = re.compile(r"[A-Za-z_]")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.]+")
_PLAIN = re.compile(r"""[^'"()\[\]{}]+""")
_CALL_LIST = re.compile(r"(?:<\|python_start\|>\s*)?\[\s*[A-Za-z_][A-Za-z0-9_.]*\s*\(")

_START, _WRAP_WAIT, _ELEM_WAIT, _NAME, _NAME_WS, _ARGS, _AFTER_CALL, _AFTER_LIST, _CONTENT = range(9)


def python_arguments(src: str) -> tuple[str, bool]:
    """Argument source of one call → (JSON object text, True), or (src verbatim, False) if not literal kwargs."""
    if not src.strip(JSON_WS):
        return "{}", True
    try:
        tree = parse_expression("f(" + src + "\n)")
        call = tree.body
        keys = [k.arg for k in call.keywords] if isinstance(call, ast.Call) else [None]
        if not isinstance(call, ast.Call) or call.args or None in keys or len(set(keys)) != len(keys):
            return src, False
        values = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        return json.dumps(values, ensure_ascii=False, allow_nan=False), True
    except Exception:  # SyntaxError, ValueError, TypeError, RecursionError, encoding errors…
        return src, False


class PythonicToolStream(BuiltinToolStream):
    """Incremental pythonic machine: list → name( → args up to the matching ``)``."""

    def __init__(self, parser: BuiltinToolParser) -> None:
        super().__init__(parser)
        self._state = _START
        self._wrapped = False
        self._calls = 0  # calls named in the list so far that stood (a rejected one is text)
        self._name: list[str] = []
        self._src: list[str] = []
        self._depth = 0
        self._quote = ""  # "" outside strings, else the closing delimiter (' " ''' or \""")
        self._esc = False

    def _fail(self) -> bool:
        self._reject(self._pos)
        self._state = _CONTENT
        return True

    def _step(self) -> bool:
        state, buf = self._state, self._buf
        if state == _CONTENT:
            # prose: content up to a ``[`` or ``<|python_start|>`` that may open calls after it
            found = self._outside(("[", PY_START))
            if found is None:
                return False
            self._begin_span(self._pos)
            self._pos += len(found)
            self._wrapped = found == PY_START
            self._state = _WRAP_WAIT if self._wrapped else _ELEM_WAIT
            return True
        if state == _START:
            return self._start_step(buf)
        if state == _WRAP_WAIT:
            if not self._skip_ws():
                return False
            if buf[self._pos] != "[":
                return self._fail()
            self._pos += 1
            self._state = _ELEM_WAIT
            return True
        if state in (_ELEM_WAIT, _AFTER_CALL):
            return self._list_step(state, buf)
        if state in (_NAME, _NAME_WS):
            return self._name_step(state, buf)
        if state == _ARGS:
            return self._scan_args()
        # _AFTER_LIST
        if not self._wrapped:
            self._state = _CONTENT
            return True
        if not self._ws_as_content():
            return False
        found = match_marker(buf, self._pos, (PY_END,), self._final)
        if found == MORE:
            return False
        if found == PY_END:
            self._pos += len(PY_END)
            self._structure()
        self._state = _CONTENT
        return True

    def _name_step(self, state: int, buf: str) -> bool:
        """A call's name up to its opening parenthesis."""
        if state == _NAME:
            if not self._take_run(_NAME_RUN, self._name):
                return False
            self._state = _NAME_WS
        if not self._skip_ws():
            return False
        if buf[self._pos] != "(":
            return self._fail()
        self._pos += 1
        self._commit("".join(self._name))
        self._calls += 1
        self._src, self._depth, self._quote, self._esc = [], 0, "", False
        self._state = _ARGS
        return True

    def _list_step(self, state: int, buf: str) -> bool:
        """In the list, before an element or after a call: a name, a comma, or the list ends."""
        if state == _AFTER_CALL:
            self._begin_span(self._pos)
        if not self._skip_ws():
            return False
        c = buf[self._pos]
        if c == "]" and self._calls:
            self._pos += 1
            self._drop_span()
            self._structure()
            self._state = _AFTER_LIST
        elif state == _AFTER_CALL and c == "," and self._calls:
            self._pos += 1
            self._state = _ELEM_WAIT
        elif state == _ELEM_WAIT and _IDENT_START.match(c):
            self._name = []
            self._state = _NAME
        else:
            return self._fail()
        return True

    def _start_step(self, buf: str) -> bool:
        """At the start of the output: a list of calls, or the wrapped one, may lead."""
        if not self._ws_as_content():
            return False
        if buf[self._pos] == "[":
            self._begin_span(self._pos)
            self._pos += 1
            self._state = _ELEM_WAIT
            return True
        found = match_marker(buf, self._pos, (PY_START,), self._final)
        if found == MORE:
            return False
        if found == PY_START:
            self._begin_span(self._pos)
            self._pos += len(PY_START)
            self._wrapped = True
            self._state = _WRAP_WAIT
            return True
        self._state = _CONTENT
        return True

    def _scan_args(self) -> bool:
        """Python string/bracket state up to the call's closing ``)``; False when more text is needed."""
        buf, i, n = self._buf, self._pos, len(self._buf)
        start = i
        while i < n:
            if self._quote:
                if self._esc:
                    self._esc = False
                    i += 1
                    continue
                c = buf[i]
                if c == "\\":
                    self._esc = True
                    i += 1
                    continue
                if c != self._quote[0]:
                    i += 1
                    continue
                if len(self._quote) == 3:
                    if n - i < 3 and not self._final:
                        break
                    if buf.startswith(self._quote, i):
                        self._quote = ""
                        i += 3
                    else:
                        i += 1
                else:
                    self._quote = ""
                    i += 1
                continue
            m = _PLAIN.match(buf, i)
            if m:
                i = m.end()
                continue
            c = buf[i]
            if c in "'\"":
                if n - i < 3 and not self._final:
                    break
                self._quote = c * 3 if buf.startswith(c * 3, i) else c
                i += len(self._quote)
            elif c in "([{":
                self._depth += 1
                i += 1
            elif c == ")" and self._depth == 0:
                self._src.append(buf[start:i])
                self._pos = i + 1
                self._emit_call()
                index = self._index
                self._end_call(self._pos)
                if self._index < index:  # not whole (`whole_calls`): its text is text, and no call stood
                    self._calls -= 1
                self._state = _AFTER_CALL
                return True
            else:
                self._depth = max(0, self._depth - 1)
                i += 1
        self._src.append(buf[start:i])
        self._pos = i
        return False

    def _emit_call(self) -> None:
        text, _ok = python_arguments("".join(self._src))
        self._args(text, hold_ws=False)
        self._src = []

    def _at_end(self) -> None:
        if self._state == _ARGS and self._in_call:
            self._args("".join(self._src), hold_ws=False)  # truncated: the verbatim source so far
            self._src = []
        elif self._state in (_AFTER_CALL, _ELEM_WAIT) and self._calls:
            self._drop_span()  # trailing separators of an unclosed list are structure


class PythonicToolParser(BuiltinToolParser):
    """Pythonic ``[f(a=1), g()]`` tool calls (builtin, incremental)."""

    name = "pythonic"
    markers: ClassVar[tuple[str, ...]] = (PY_START, PY_END)
    stream_class = PythonicToolStream

    def has_tool_calls(self, text: str) -> bool:
        """Whether the output holds ``[name(`` (optionally after ``<|python_start|>``)."""
        return _CALL_LIST.search(text) is not None

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The ``ipython`` message content: a string verbatim, anything else as JSON."""
        return result_text(result)

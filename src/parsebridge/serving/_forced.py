"""Tool calls the server forced: ``tool_choice="required"`` and a named function.

How vLLM and SGLang servers define these (read from their serving code):

* **named** (``{"type": "function", "function": {"name": F}}``): vLLM constrains
  generation to the JSON schema of F's parameters, so the text after
  reasoning *is* the arguments object; the response is one call to F with that
  text as arguments and no content (an empty output gives no call).
* **required**: generation is constrained to a JSON array of
  ``{"name": ..., "parameters": {...}}`` objects (vLLM; SGLang does the same
  when its tool parser has no structural-tag grammar); each element is a call.

Both stages here are incremental and linear. They share one rule with their
one-shot use (the processor's one-shot path runs the same stage over the whole
text), so streaming and one-shot cannot disagree at any chunking:
what was streamed as a call stays a call; text that does not fit the format
becomes content. A call cut off by the end of output keeps its partial
arguments (flagged invalid), as every streaming server must.
"""

from __future__ import annotations

import json
from typing import Any

from ..protocol import StreamDelta, ToolCallDelta, new_call_id

_WS = " \t\r\n"


class NamedArgumentsStage:
    """The whole (post-reasoning) output is the arguments of one call to `name`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._announced = False

    def feed(self, text: str) -> StreamDelta:
        if not self._announced:
            text = text.lstrip(_WS)
            if not text:
                return StreamDelta()
            self._announced = True
            return StreamDelta(
                tool_calls=[ToolCallDelta(index=0, id=new_call_id(), name=self.name, arguments=text)]
            )
        if not text:
            return StreamDelta()
        return StreamDelta(tool_calls=[ToolCallDelta(index=0, arguments=text)])

    def flush(self) -> StreamDelta:
        return StreamDelta()


class RequiredArrayStage:
    """Scans ``[{"name": ..., "parameters": {...}}, ...]`` and streams each element as a call.

    The raw text of each ``parameters`` value is streamed verbatim as argument
    fragments once the element's name is known (held until then, so a model
    that writes ``parameters`` first still yields a well-formed delta
    sequence). Text before the array that is not whitespace, text after it,
    and anything from the first character that breaks the format on, becomes
    content.
    """

    def __init__(self) -> None:
        self._state = "start"  # start | array | element | done | broken
        self._index = 0  # next call index
        # per element
        self._key: str | None = None
        self._expect = "key"  # key | colon | value | comma_or_end
        self._string_buf: list[str] | None = None  # raw JSON string being read (key or name)
        self._escape = False
        self._name: str | None = None
        self._announced = False
        self._held_args: list[str] = []
        # value scanning (parameters or a skipped value)
        self._depth = 0
        self._in_str = False
        self._val_escape = False
        self._scalar = False
        self._trailing = ""
        self.invalid = False
        self.calls = 0

    # ------------------------------------------------------------ helpers
    def _out_args(self, out: list[ToolCallDelta], piece: str) -> None:
        if not piece:
            return
        if self._key != "parameters":
            return
        if self._name is None:
            self._held_args.append(piece)
            return
        if not self._announced:
            self._announce(out)
        out.append(ToolCallDelta(index=self._index, arguments=piece))

    def _announce(self, out: list[ToolCallDelta]) -> None:
        held = "".join(self._held_args)
        self._held_args = []
        self._announced = True
        self.calls += 1
        out.append(ToolCallDelta(index=self._index, id=new_call_id(), name=self._name, arguments=held))

    def _reset_element(self) -> None:
        self._key = None
        self._expect = "key"
        self._name = None
        self._announced = False
        self._held_args = []

    def _end_element(self, out: list[ToolCallDelta]) -> None:
        if self._name is not None:
            if not self._announced:
                self._announce(out)
            self._index += 1
        self._reset_element()

    # ------------------------------------------------------------ scanning
    def feed(self, text: str) -> StreamDelta:
        out: list[ToolCallDelta] = []
        content = ""
        i, n = 0, len(text)
        while i < n:
            if self._state in ("done", "broken"):
                content = self._after_array(text[i:])
                break
            if self._state == "start":
                i = self._before_array(text[i], i)
            elif self._state == "array":
                i = self._between_elements(text[i], i)
            else:
                i = self._in_element(text, i, out)
        return StreamDelta(content=content, tool_calls=out)

    def _after_array(self, rest: str) -> str:
        """The content in `rest`, the text after the array (``done``) or after what broke the format."""
        if self._state == "broken":
            return rest
        if not rest.strip(_WS):
            # whitespace after the array is held: dropped at the end, content if text follows
            self._trailing += rest
            return ""
        self._break()
        held, self._trailing = self._trailing, ""
        return held + rest

    def _before_array(self, ch: str, i: int) -> int:
        """Whitespace, then the array's ``[``; anything else breaks the format."""
        if ch in _WS:
            return i + 1
        if ch == "[":
            self._state = "array"
            return i + 1
        return self._break_at(i)

    def _between_elements(self, ch: str, i: int) -> int:
        """In the array, outside an element: separators, the next ``{`` or the closing ``]``."""
        if ch in _WS or ch == ",":
            return i + 1
        if ch == "]":
            self._state = "done"
            return i + 1
        if ch == "{":
            self._state = "element"
            self._reset_element()
            return i + 1
        return self._break_at(i)

    def _in_element(self, text: str, i: int, out: list[ToolCallDelta]) -> int:
        """One step inside an element: a string or value being read, else what `_expect` says comes next."""
        if self._string_buf is not None:
            return self._read_string(text, i)
        if (self._expect == "value" and self._depth > 0) or self._scalar:
            return self._read_value(text, i, out)
        ch = text[i]
        if ch in _WS:
            return i + 1
        if self._expect == "key":
            return self._at_key(ch, i, out)
        if self._expect == "colon":
            if ch == ":":
                self._expect = "value"
                return i + 1
            return self._break_at(i)
        if self._expect == "value":
            return self._at_value(text, i, out)
        return self._after_member(ch, i, out)

    def _at_key(self, ch: str, i: int, out: list[ToolCallDelta]) -> int:
        """A member's key string opens, or ``}`` ends the element."""
        if ch == '"':
            self._string_buf = []
            return i + 1
        if ch == "}":
            return self._close_element(i, out)
        return self._break_at(i)

    def _at_value(self, text: str, i: int, out: list[ToolCallDelta]) -> int:
        """A member's value starts: the name string, an object or array, or a scalar."""
        ch = text[i]
        if self._key == "name" and ch == '"':
            self._string_buf = []
            return i + 1
        if ch in "{[":
            self._depth = 0
            return self._read_value(text, i, out)
        if ch in ",}]:":
            return self._break_at(i)
        self._scalar = True
        return self._read_value(text, i, out)

    def _after_member(self, ch: str, i: int, out: list[ToolCallDelta]) -> int:
        """After a member's value: ``,`` and the next key, or ``}`` ends the element."""
        if ch == ",":
            self._expect = "key"
            return i + 1
        if ch == "}":
            return self._close_element(i, out)
        return self._break_at(i)

    def _close_element(self, i: int, out: list[ToolCallDelta]) -> int:
        self._end_element(out)
        self._state = "array"
        return i + 1

    def _break_at(self, i: int) -> int:
        """The format breaks at `i`: from there on the text is content (the scan stays at `i`)."""
        self._break()
        return i

    def _break(self) -> None:
        self._state = "broken"
        self.invalid = True

    def _read_string(self, text: str, i: int) -> int:
        """Read a key or a name string; returns the new position."""
        assert self._string_buf is not None
        n = len(text)
        start = i
        while i < n:
            ch = text[i]
            if self._escape:
                self._escape = False
            elif ch == "\\":
                self._escape = True
            elif ch == '"':
                self._string_buf.append(text[start:i])
                raw = "".join(self._string_buf)
                self._string_buf = None
                try:
                    value = json.loads(f'"{raw}"')
                except ValueError:
                    value = raw
                if self._expect == "key":
                    self._key = value
                    self._expect = "colon"
                else:  # the name value
                    self._name = value
                    self._expect = "comma_or_end"
                return i + 1
            i += 1
        self._string_buf.append(text[start:])
        return n

    def _read_value(self, text: str, i: int, out: list[ToolCallDelta]) -> int:
        """Read (part of) a value; parameters' raw text is streamed as argument fragments."""
        n = len(text)
        start = i
        while i < n:
            ch = text[i]
            if self._scalar:
                if ch in ",}]" or ch in _WS:
                    self._scalar = False
                    self._out_args(out, text[start:i])
                    self._expect = "comma_or_end"
                    return i
                i += 1
                continue
            if self._in_str:
                if self._val_escape:
                    self._val_escape = False
                elif ch == "\\":
                    self._val_escape = True
                elif ch == '"':
                    self._in_str = False
            elif ch == '"':
                self._in_str = True
            elif ch in "{[":
                self._depth += 1
            elif ch in "}]":
                self._depth -= 1
                if self._depth == 0:
                    self._out_args(out, text[start : i + 1])
                    self._expect = "comma_or_end"
                    return i + 1
            i += 1
        self._out_args(out, text[start:])
        return n

    def flush(self) -> StreamDelta:
        out: list[ToolCallDelta] = []
        if self._state == "element" and self._name is not None and not self._announced:
            # cut off before any parameters: still a call (with empty, flagged arguments)
            self._announce(out)
        if self._state in ("start", "array", "element"):
            self.invalid = self.invalid or self._state != "start" or self.calls == 0
        return StreamDelta(tool_calls=out)


def forced_tool_name(tool_choice: Any) -> str | None:
    """The function name of a named tool choice (OpenAI chat or Responses shape), else None."""
    if isinstance(tool_choice, dict):
        fn = tool_choice.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return str(fn["name"])
        if tool_choice.get("type") == "function" and isinstance(tool_choice.get("name"), str):
            return str(tool_choice["name"])
        return None
    fn = getattr(tool_choice, "function", None)
    name = getattr(fn, "name", None) if fn is not None else getattr(tool_choice, "name", None)
    return name if isinstance(name, str) else None

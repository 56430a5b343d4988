"""Kimi K3 "XTML" tool calls: ``<|open|>call tool="NAME" index="I"<|sep|>`` elements in a ``tools`` channel.

::

    <|open|>response<|sep|>Running it.<|close|>response<|sep|>
    <|open|>tools<|sep|>
      <|open|>call tool="python" index="1"<|sep|>
        <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>
        <|open|>argument key="opts" type="object"<|sep|>{"a": 1}<|close|>argument<|sep|>
      <|close|>call<|sep|>
    <|close|>tools<|sep|>

Read by the shared invoke machine (`invoke`): the call element is the
invoke, ``tool`` names it, ``key`` names an argument, open tags end at
``<|sep|>``; attribute values are unescaped (``&quot;`` → ``"``, ``&amp;`` →
``&``). The ``response`` channel's markers (and ``<|close|>message<|sep|>``)
are dropped: its text is the content.

Value rule: ``type="string"`` → the raw text (never unescaped: the template
writes it raw); any other type (or none) → ``json.loads`` of the stripped
text, the text itself when that is not JSON (vLLM and SGLang decode the same
way and keep the text on failure).

A ``<|open|>think<|sep|>`` block is not read here (it is reasoning: chain a
kimi_k3 reasoning parser); alone, it stays in the content.

Malformed output: see `invoke` (a call without ``tool`` → content; one cut off by the end of
output is no call: `whole_calls`, under both conventions; under conventions="servers" its text
is left out with the section it stands in, as both servers, which announce a call at its close,
drop a cut-off one).

`format_tool_result`: the result text (no Kimi K3 tool-message wrapper could be verified).
"""

from __future__ import annotations

from typing import Any

from ...formats import kimi_k3 as fmt
from .engines.invoke import InvokeStream, InvokeToolParser
from .engines.invoke_dialect import Dialect
from .engines.scan import is_invalid, loads_or_none


class KimiK3Stream(InvokeStream):
    """The invoke machine (every builtin stream shows a call only once it is whole: `whole_calls`)."""


class KimiK3ToolParser(InvokeToolParser):
    """Kimi K3 XTML tool calls (builtin, incremental)."""

    name = "kimi_k3"
    stream_class = KimiK3Stream
    dialect = Dialect(
        section_begins=(fmt.TOOLS_OPEN,),
        section_end=fmt.TOOLS_CLOSE,
        invoke_open=fmt.CALL_OPEN,
        invoke_close=fmt.CALL_CLOSE,
        param_open=fmt.ARG_OPEN,
        param_close=fmt.ARG_CLOSE,
        tag_end=fmt.SEP,
        name_attr="tool",
        key_attr="key",
        unescape=True,
        unwrap=(fmt.RESPONSE_OPEN, fmt.RESPONSE_CLOSE, fmt.MESSAGE_CLOSE),
    )
    servers_bare_calls = False  # (both servers show a call outside a section as text)

    def string_valued(self, function: str, param: str, attrs: dict[str, str]) -> bool:
        return attrs.get("type", "").strip() == "string"

    def convert(self, function: str, param: str, attrs: dict[str, str], text: str) -> Any:
        if self.string_valued(function, param, attrs):
            return text
        value = loads_or_none(text.strip())
        return text if is_invalid(value) else value

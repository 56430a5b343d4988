"""GigaChat 3 tool calls: ``function call<|role_sep|>\\n{"name": ..., "arguments": {...}}``.

The content comes first (optionally closed by ``<|message_sep|>``), then the
call header ``function call<|role_sep|>`` (or the single token
``<|function_call|>``) and one JSON call object; ``</s>`` is structure, not
content, and so is ``<|message_sep|>`` where a call header follows it (elsewhere
it is text, as both servers show it; so is the one before a header that opens no
call). "parameters" is accepted as a synonym of "arguments". Under
conventions="servers", as both servers read it, only the first call is a call:
what follows it, a later call included, is text (on `dropped`), and a header
written without ``<|message_sep|>`` before it is content too (the call is read).

Malformed output (see `json_payload`): a header not followed by a call object is
content verbatim; an object that breaks after its name keeps the call and the
rest is content; at end of output inside a call, no call (its text is text: `whole_calls`).

`format_tool_result`: the result as the function-result message's content (JSON; no id).
"""

from __future__ import annotations

from ...formats.gigachat3 import CALL_PREFIX, CALL_TOKEN, EOS, MESSAGE_SEP
from .engines.json_payload import OBJECT, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(
    regions=(Region(CALL_PREFIX, shape=OBJECT), Region(CALL_TOKEN, shape=OBJECT)),
    drop=(EOS,),
    joins=(MESSAGE_SEP,),
    servers_one_call=True,
    servers_shown_starts=(CALL_PREFIX,),
)


class GigaChat3ToolParser(JsonCallsParser):
    """GigaChat 3 ``function call<|role_sep|>`` JSON (builtin, incremental)."""

    name = "gigachat3"
    calls_spec = SPEC

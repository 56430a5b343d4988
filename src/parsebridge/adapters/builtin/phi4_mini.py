"""Phi-4-mini tool calls: ``functools[{"name": ..., "arguments": {...}}, ...]``.

The plain word ``functools`` directly followed (after optional whitespace) by a
JSON array of call objects; the array's ``]`` ends the region. One call is also
written as a bare object, ``functools{"name": ..., "arguments": {...}}`` (seen in
deployments: Dynamo's parser tests keep such an output); it is read as the
one-element array (vLLM's parser, the only server one, reads only the array and
shows the object as text; SGLang has none, so neither convention follows it).
"parameters" is accepted as a synonym of "arguments" (vLLM's parser reads both).

Malformed output (see `json_payload`): ``functools`` not followed by an array or an
object (prose such as "functools.partial") is content verbatim, and so is one followed
by a value that holds no call (``functools{invalid json}``, ``functools{"answer": 42}``). Text before the calls is
content: vLLM's phi4_mini_json returns no content at all once it found calls,
we keep the text (the format does not say it is discarded).

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

from ...formats.phi4_mini import TAG
from .engines.json_payload import ANY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(TAG, shape=ANY),))


class Phi4MiniToolParser(JsonCallsParser):
    """Phi-4-mini ``functools[...]`` (builtin, incremental)."""

    name = "phi4_mini"
    calls_spec = SPEC

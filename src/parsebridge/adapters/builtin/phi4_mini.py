"""Phi-4-mini tool calls: ``functools[{"name": ..., "arguments": {...}}, ...]``.

The plain word ``functools`` directly followed (after optional whitespace) by a
JSON array of call objects; the array's ``]`` ends the region. "parameters" is
accepted as a synonym of "arguments" (vLLM's parser reads both).

Malformed output (see `json_payload`): ``functools`` not followed by an array (prose
such as "functools.partial") is content verbatim. Text before the calls is
content: vLLM's phi4_mini_json returns no content at all once it found calls,
we keep the text (the format does not say it is discarded).

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

from ...formats.phi4_mini import TAG
from .engines.json_payload import ARRAY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(TAG, shape=ARRAY),))


class Phi4MiniToolParser(JsonCallsParser):
    """Phi-4-mini ``functools[...]`` (builtin, incremental)."""

    name = "phi4_mini"
    calls_spec = SPEC

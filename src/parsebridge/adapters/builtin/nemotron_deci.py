"""Llama-Nemotron tool calls: ``<TOOLCALL>[{"name": "get_weather", "arguments": {…}}, …]</TOOLCALL>``.

A JSON array of call objects (``"arguments"``, or ``"parameters"``) between
``<TOOLCALL>`` and ``</TOOLCALL>``; one call object on its own is read too.
Text around the block is content. Neither vLLM 0.33 nor SGLang 0.5.23 ships
a parser for it (NVIDIA Dynamo's is ``nemotron_deci``).

Malformed output (see `json_payload`): a block whose body is not a call array is
content verbatim; the end marker cutting a call ends it (no call: `whole_calls`); a missing end marker at end of output keeps the
calls read.

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

from ...formats.nemotron_deci import END, START
from .engines.json_payload import ANY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(START, END, shape=ANY),))


class NemotronDeciToolParser(JsonCallsParser):
    """Llama-Nemotron ``<TOOLCALL>`` arrays (builtin, incremental)."""

    name = "nemotron_deci"
    calls_spec = SPEC

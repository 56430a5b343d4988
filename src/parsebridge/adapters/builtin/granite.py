"""IBM Granite 3.x tool calls: ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]``.

``<|tool_call|>`` (a special token; Granite 3.1+ may also write it as the plain
text ``<tool_call>``) opens a JSON array of call objects; there is no closing
marker — the array's ``]`` ends the region and text after it is content, as is
text before the marker. "parameters" is accepted as a synonym of "arguments".
Granite 4 writes Hermes blocks (``<tool_call>{…}</tool_call>``): the family table
maps vLLM's ``granite4`` to builtin ``hermes``, not here. granite-20b-functioncalling
(``<function_call> {…}`` per call) is `GraniteFcToolParser` below.

Malformed output (see `json_payload` for the shared policy): a marker not followed by
an array (e.g. prose that mentions ``<tool_call>``) is content verbatim; an array
that breaks after calls ends there and the rest is content. vLLM's engine and
this parser agree on well-formed output; for a body that is not valid JSON vLLM
keeps what its partial parse recovered, which is what we do per element.

`format_tool_result`: the Granite 3.x template's tool turn,
``<|start_of_role|>tool<|end_of_role|>{result}<|end_of_text|>``.
"""

from __future__ import annotations

from ...formats.granite import FC_TAG, TAG, TEXT_TAG
from .engines.json_payload import ARRAY, OBJECT, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(TAG, shape=ARRAY), Region(TEXT_TAG, shape=ARRAY)))
FC_SPEC = JsonCallsSpec(regions=(Region(FC_TAG, shape=OBJECT),))


class GraniteToolParser(JsonCallsParser):
    """Granite 3.x ``<|tool_call|>`` JSON arrays (builtin, incremental)."""

    name = "granite"
    calls_spec = SPEC


class GraniteFcToolParser(JsonCallsParser):
    """granite-20b-functioncalling: ``<function_call> {"name": …, "arguments": …}`` per call.

    Each call object follows its own marker; nothing closes it but the object's
    ``}``. Text between calls is content (vLLM drops everything after the first
    marker from the content; we keep text that is not a call, per the builtin policy).
    """

    name = "granite_20b_fc"
    calls_spec = FC_SPEC

"""Meituan LongCat-Flash tool calls: ``<longcat_tool_call>{"name": ..., "arguments": {...}}</longcat_tool_call>``.

Hermes's format with its own tags (vLLM's longcat parser is its Hermes parser
with these markers): one call object per block, text around blocks is content,
"parameters" accepted as a synonym of "arguments".

Malformed output (see `json_payload`): a block whose body yields no name is content
verbatim; the end tag cutting the object ends the call (no call: `whole_calls`); text between the object and the end tag is ignored.

`format_tool_result`: ``<longcat_tool_response>{result}</longcat_tool_response>``.
"""

from __future__ import annotations

from ...formats.longcat import END, START
from .engines.json_payload import OBJECT, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(START, END, shape=OBJECT),))


class LongcatToolParser(JsonCallsParser):
    """LongCat ``<longcat_tool_call>`` blocks (builtin, incremental)."""

    name = "longcat"
    calls_spec = SPEC

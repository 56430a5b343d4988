"""Swiss AI Apertus tool calls: ``<|tools_prefix|>[{"get_weather": {"city": "Bern"}}, ...]<|tools_suffix|>``.

A JSON array between ``<|tools_prefix|>`` and ``<|tools_suffix|>`` whose items are
single-key objects: the key is the function name, its value the arguments.
Text around the block is content.

Malformed output (see `json_payload`): a block whose body is not such an array is
content verbatim; an item with a second key ends the array (the rest of the
block is ignored); the suffix cutting an item ends the call (no call: `whole_calls`); a missing suffix at end of output keeps the calls
read (vLLM makes the suffix optional too; SGLang then returns the block as text).

`format_tool_result`: the result as the tool message's content (JSON; no id).
"""

from __future__ import annotations

from ...formats.apertus import END, START
from .engines.json_payload import ARRAY, JsonCallsParser, JsonCallsSpec, Region
from .engines.keyed_object import KeyedReader

SPEC = JsonCallsSpec(regions=(Region(START, END, shape=ARRAY),), reader=KeyedReader)


class ApertusToolParser(JsonCallsParser):
    """Apertus ``<|tools_prefix|>`` name-keyed arrays (builtin, incremental)."""

    name = "apertus"
    calls_spec = SPEC

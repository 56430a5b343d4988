"""AI21 Jamba (and Hunyuan-A13B) tool calls: ``<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>``.

One JSON array of call objects between ``<tool_calls>`` and ``</tool_calls>``;
text before and after the block is content. "parameters" is accepted as a
synonym of "arguments". Hunyuan-A13B writes exactly this shape (its family maps
here); a ``<tool_calls>`` block inside ``<think>`` is the reasoning parser's
business (vLLM's hunyuan parser skips such blocks itself; run with the
family's reasoning parser and they never reach this one).

Malformed output (see `json_payload`): a block whose body is not a call array
(``<tool_calls>oops</tool_calls>``) is content verbatim; ``</tool_calls>``
cutting a call object (a missing ``}``/``]``) ends it: no call, its text is text
(`whole_calls`; vLLM drops the whole block to content when ``json.loads`` fails,
calls read whole before it included); text between the array and ``</tool_calls>`` is ignored.

`format_tool_result`: the result as the tool message's content (no id: the format has none).
"""

from __future__ import annotations

from ...formats.jamba import END, START
from .engines.json_payload import ARRAY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(START, END, shape=ARRAY),))


class JambaToolParser(JsonCallsParser):
    """Jamba / Hunyuan-A13B ``<tool_calls>`` JSON arrays (builtin, incremental)."""

    name = "jamba"
    calls_spec = SPEC

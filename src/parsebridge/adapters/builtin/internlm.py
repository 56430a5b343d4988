"""InternLM 2.5 / Intern-S1 tool calls: ``<|action_start|><|plugin|>\\n{"name": ..., "parameters": {...}}<|action_end|>``.

One call object per block; "arguments" is accepted as a synonym of
"parameters". SGLang's detector (``interns1``) expects a space between the two
opening tokens, vLLM's none: whitespace there is allowed. Text around blocks is
content.

Malformed output (see `json_payload`): ``<|action_start|>`` followed by anything
but ``<|plugin|>`` and a call object (e.g. ``<|interpreter|>`` code) is content
verbatim; ``<|action_end|>`` cutting the object ends the call (no call: `whole_calls`).

`format_tool_result`: InternLM's plugin-result turn,
``<|im_start|>environment name=<|plugin|>\\n{result}<|im_end|>``.
"""

from __future__ import annotations

from typing import ClassVar

from ...formats.internlm import ACTION_END, ACTION_START, PLUGIN
from .engines.json_payload import OBJECT, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(regions=(Region(ACTION_START, ACTION_END, shape=OBJECT, openers=(PLUGIN,)),))


class InternlmToolParser(JsonCallsParser):
    """InternLM ``<|action_start|><|plugin|>`` blocks (builtin, incremental)."""

    name = "internlm"
    markers: ClassVar[tuple[str, ...]] = (ACTION_START, PLUGIN, ACTION_END)
    calls_spec = SPEC

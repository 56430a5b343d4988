"""vLLM results → parsebridge models.

Conventions (the same for one-shot and streaming, so the two compare):
content ``""`` and ``None`` both become None in results (a stream's empty
fragments simply add nothing); call ids are vLLM's; arguments text is parsed
into a dict, and text that is not a JSON object is kept verbatim in
`ToolCall.invalid_arguments` rather than dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...protocol import ToolCall, ToolCallDelta
from ...protocol.models import make_call_delta, make_tool_call
from .._common import locate_reasoning, none_if_empty, reasoning_markers
from ._driver import RawCall, _fn

__all__ = [
    "call_deltas",
    "locate_reasoning",
    "none_if_empty",
    "reasoning_markers",
    "to_tool_call",
]


def to_tool_call(call: RawCall, source_text: str | None = None) -> ToolCall:
    return make_tool_call(call.name, call.arguments or "", call.id or None)


def call_deltas(tool_calls: Sequence[Any]) -> list[ToolCallDelta]:
    """vLLM `DeltaToolCall`s as parsebridge `ToolCallDelta`s."""
    out = []
    for tc in tool_calls:
        name, args = _fn(tc)
        out.append(
            make_call_delta(
                getattr(tc, "index", 0) or 0,
                getattr(tc, "id", None) or None,
                name or None,
                args if isinstance(args, str) else "",
            )
        )
    return out

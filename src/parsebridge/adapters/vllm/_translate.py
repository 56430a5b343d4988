"""vLLM results → parsebridge models.

Conventions (the same for one-shot and streaming, so the two compare):
content ``""`` and ``None`` both become None in results (a stream's empty
fragments simply add nothing); call ids are vLLM's; arguments text is parsed
into a dict, and text that is not a JSON object is kept verbatim in
`ToolCall.invalid_arguments` rather than dropped.
"""

from __future__ import annotations

from typing import Any

from ...protocol import StreamDelta, ToolCall, ToolCallDelta
from .._common import locate_reasoning, none_if_empty, reasoning_markers
from ._driver import RawCall, _fn

__all__ = ["locate_reasoning", "none_if_empty", "reasoning_markers", "to_stream_delta", "to_tool_call"]


def to_tool_call(call: RawCall, source_text: str | None = None) -> ToolCall:
    fields: dict[str, Any] = {}
    if call.id:
        fields["id"] = call.id
    return ToolCall.from_arguments_text(call.name, call.arguments or "", **fields)


def to_stream_delta(api: Any, delta: Any) -> StreamDelta:
    """A vLLM `DeltaMessage` (or None) as a parsebridge `StreamDelta`."""
    if delta is None:
        return StreamDelta()
    calls = []
    for tc in getattr(delta, "tool_calls", None) or ():
        name, args = _fn(tc)
        calls.append(
            ToolCallDelta(
                index=getattr(tc, "index", 0) or 0,
                id=getattr(tc, "id", None) or None,
                name=name or None,
                arguments=args or "",
            )
        )
    return StreamDelta(
        content=getattr(delta, "content", None) or "",
        reasoning=api.delta_reasoning(delta) or "",
        tool_calls=calls,
    )

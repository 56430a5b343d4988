"""vLLM results → parsebridge models.

Conventions (the same for one-shot and streaming, so the two compare):
content ``""`` and ``None`` both become None in results (a stream's empty
fragments simply add nothing); call ids are vLLM's; arguments text is parsed
into a dict, and text that is not a JSON object is kept verbatim in
`ToolCall.invalid_arguments` rather than dropped.
"""

from __future__ import annotations

from typing import Any

from ...protocol import StreamDelta, ToolCall
from ...protocol.models import make_call_delta, make_delta, make_tool_call
from .._common import locate_reasoning, none_if_empty, reasoning_markers
from ._driver import RawCall, _fn

__all__ = ["locate_reasoning", "none_if_empty", "reasoning_markers", "to_stream_delta", "to_tool_call"]


def to_tool_call(call: RawCall, source_text: str | None = None) -> ToolCall:
    return make_tool_call(call.name, call.arguments or "", call.id or None)


def to_stream_delta(api: Any, delta: Any) -> StreamDelta:
    """A vLLM `DeltaMessage` (or None) as a parsebridge `StreamDelta`."""
    if delta is None:
        return make_delta()
    calls = None
    tool_calls = getattr(delta, "tool_calls", None)
    if tool_calls:
        calls = []
        for tc in tool_calls:
            name, args = _fn(tc)
            calls.append(
                make_call_delta(
                    getattr(tc, "index", 0) or 0,
                    getattr(tc, "id", None) or None,
                    name or None,
                    args if isinstance(args, str) else "",
                )
            )
    reasoning = getattr(delta, "reasoning", None)
    if reasoning is None:
        reasoning = getattr(delta, "reasoning_content", None)
    return make_delta(getattr(delta, "content", None) or "", reasoning or "", calls)

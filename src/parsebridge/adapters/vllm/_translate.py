"""vLLM results → parsebridge models.

Conventions (the same for one-shot and streaming, so the two compare):
content ``""`` and ``None`` both become None in results (a stream's empty
fragments simply add nothing); call ids are vLLM's; arguments text is parsed
into a dict, and text that is not a JSON object is kept verbatim in
`ToolCall.invalid_arguments` rather than dropped.
"""

from __future__ import annotations

from typing import Any

from ...protocol import ReasoningBlock, StreamDelta, ToolCall, ToolCallDelta
from ._driver import RawCall, _fn


def none_if_empty(text: str | None) -> str | None:
    return text if text else None


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


def locate_reasoning(
    text: str, reasoning: str | None, start_marker: str | None, end_marker: str | None
) -> ReasoningBlock | None:
    """Where vLLM's reasoning string sits in `text`, with the markers around it when present.

    vLLM returns only strings; the block is found by searching for the
    reasoning text after the start marker. When it cannot be found verbatim
    (a parser that strips or rewrites it) the block says ``located=False``.
    """
    if reasoning is None:
        return None
    search_from = 0
    start = None
    if start_marker:
        pos = text.find(start_marker)
        if pos != -1:
            start = pos
            search_from = pos + len(start_marker)
    idx = text.find(reasoning, search_from)
    if idx == -1 and search_from:
        idx = text.find(reasoning)
        start = None
    if idx == -1:
        return ReasoningBlock(content=reasoning, start_index=0, end_index=len(text), located=False)
    use_start = start_marker if start is not None and start + len(start_marker or "") == idx else None
    begin = idx - len(use_start) if use_start else idx
    stop = idx + len(reasoning)
    use_end = None
    if end_marker:
        # Whitespace between reasoning and the end marker belongs to neither
        # side in some parsers; the marker must follow directly to be claimed.
        if text.startswith(end_marker, stop):
            use_end = end_marker
            stop += len(end_marker)
    return ReasoningBlock(
        content=reasoning,
        start_marker=use_start,
        end_marker=use_end,
        start_index=begin,
        end_index=stop,
        located=True,
    )


def reasoning_markers(parser: Any) -> tuple[str | None, str | None]:
    """The start/end marker strings a vLLM reasoning parser declares, where it does."""

    def pick(*names: str) -> str | None:
        for name in names:
            try:
                value = getattr(parser, name, None)
            except Exception:  # a property that needs state the parser lacks
                value = None
            if isinstance(value, str) and value:
                return value
        return None

    start = pick("start_token", "think_start_token", "start_think_token", "reasoning_start_str", "think_start")
    end = pick("end_token", "think_end_token", "end_think_token", "reasoning_end_str", "think_end")
    return start, end

"""vLLM results → parsebridge models.

Conventions (the same for one-shot and streaming, so the two compare):
content ``""`` and ``None`` both become None in results (a stream's empty
fragments simply add nothing); call ids are vLLM's; arguments text is parsed
into a dict, and text that is not a JSON object is kept verbatim in
`ToolCall.invalid_arguments` rather than dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import ToolCall, ToolCallDelta
from ...protocol.models import alloc, make_call_delta, make_tool_call
from .._common import locate_reasoning, none_if_empty, reasoning_markers
from ._driver import RawCall, _fn

__all__ = [
    "call_deltas",
    "locate_reasoning",
    "native_call_deltas",
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


def native_call_deltas(api: Any) -> Callable[[Sequence[Any]], list[ToolCallDelta]]:
    """`call_deltas` for one release's own delta classes: fields read as attributes, no probing.

    A streamed chunk with calls pays this per call. vLLM's `DeltaToolCall` always has
    `index`, `id` and `function` (a `DeltaFunctionCall` or None), so for exactly those
    classes the generic `getattr(…, default)` probing is skipped; anything else (a
    parser returning its own objects or dicts) goes through `call_deltas`.
    """
    tool_cls = getattr(api, "DeltaToolCall", None)
    fn_cls = getattr(api, "DeltaFunctionCall", None)
    if tool_cls is None or fn_cls is None:
        return call_deltas

    def translate(tool_calls: Sequence[Any]) -> list[ToolCallDelta]:
        out = []
        for tc in tool_calls:
            if type(tc) is not tool_cls:
                return call_deltas(tool_calls)
            fn = tc.function
            if fn is None:
                name = args = None
            elif type(fn) is fn_cls:
                name, args = fn.name, fn.arguments
            else:
                return call_deltas(tool_calls)
            delta = alloc(ToolCallDelta)
            delta.index = tc.index or 0
            delta.id = tc.id or None
            delta.name = name or None
            delta.arguments = args if isinstance(args, str) else ""
            out.append(delta)
        return out

    return translate

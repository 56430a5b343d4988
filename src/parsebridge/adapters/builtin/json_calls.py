"""Generic gateway JSON tool calls: ``{"name": ..., "arguments"|"parameters": ...}`` or an array of them.

What API gateways accept from models without a dedicated format: one call
object or an array of call objects, either as the whole output (it must open
the output, after whitespace) or in a Markdown fence (````` ```json … ``` `````
or ````` ``` … ``` `````) anywhere, with text around the fence as content. A bare
value may also lead right after ``</think>`` (when no reasoning parser ran first).
"parameters" is accepted as a synonym of "arguments".

Malformed output (see `json_payload`): a leading JSON value that is not a call (a
plain JSON answer such as ``{"answer": 42}``, or ``{"name": "Alice", "age": 30}``: a
"name" beside other keys and no arguments) is content verbatim; so is a fence
holding anything else (a code block); a leading object that breaks after its
name keeps the call and the rest is content.

`format_tool_result`: a string result verbatim, anything else as JSON.
"""

from __future__ import annotations

from typing import ClassVar

from ...formats.json_calls import FENCE, FENCE_LANG
from ...formats.think import END as THINK_END
from .engines.json_payload import ANY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(
    regions=(Region(FENCE, FENCE, shape=ANY, openers=(FENCE_LANG,)),),
    leading=Region("", shape=ANY),
    relead=(THINK_END,),
    bare_calls=True,
)


class JsonToolParser(JsonCallsParser):
    """Bare or fenced JSON call objects/arrays (builtin, incremental)."""

    name = "json"
    markers: ClassVar[tuple[str, ...]] = ()
    calls_spec = SPEC

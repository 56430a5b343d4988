"""PLaMo 3 tool calls: name and JSON arguments between ``<|plamo:…:plamo|>`` markers.

::

    <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"city": "Tokyo"}
    <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>

(one line in real output). Read by the shared section machine (`section_json`):
the head between the request marker and the arguments marker must be exactly
``<|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>``
(whitespace around allowed); ``<|plamo:end_tool_arguments:plamo|>`` ends the
arguments (a value cut by it makes no call: `whole_calls`); ``<|plamo:tag|>`` (end of turn) is
dropped. Thinking (``<|plamo:begin_think:plamo|>``) is not read here.

Malformed output: see `section_json` (no readable name → content verbatim; bad JSON →
no call; truncated → no call: `whole_calls`).

`format_tool_result`: the result text (no PLaMo 3 tool-message wrapper could be verified).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...formats import plamo3 as fmt
from ...formats._base import result_text
from .engines.section_json import SectionDialect, SectionJsonStream
from .engines.tool_parser import BuiltinToolParser


def name_from_head(head: str) -> str | None:
    """``<|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>`` → NAME."""
    head = head.strip()
    if not (head.startswith(fmt.NAME_BEGIN) and head.endswith(fmt.NAME_END)):
        return None
    name = head[len(fmt.NAME_BEGIN) : len(head) - len(fmt.NAME_END)].strip()
    if not name or any(c.isspace() for c in name) or "<|" in name:
        return None
    return name


class Plamo3ToolParser(BuiltinToolParser):
    """PLaMo 3 tool requests (builtin, incremental)."""

    name = "plamo3"
    dialect = SectionDialect(
        fmt.REQUESTS_BEGIN,
        fmt.REQUESTS_END,
        fmt.REQUEST_BEGIN,
        fmt.ARGS_BEGIN,
        fmt.REQUEST_END,
        name_from_head,
        args_end=fmt.ARGS_END,
        drop=(fmt.EOT,),
    )
    markers: ClassVar[tuple[str, ...]] = dialect.markers
    stream_class = SectionJsonStream

    def has_tool_calls(self, text: str) -> bool:
        return fmt.REQUESTS_BEGIN in text or fmt.REQUEST_BEGIN in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """The result text (a non-string result JSON-encoded)."""
        return result_text(result)

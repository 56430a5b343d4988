"""PLaMo 3 tool calls: ``<|plamo:begin_tool_requests:plamo|>`` holding name-and-JSON requests.

::

    <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{…}<|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>

(no newlines in real output); ``<|plamo:tag|>`` ends the turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Call, ToolFormat, dump_json

REQUESTS_BEGIN, REQUESTS_END = "<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>"
REQUEST_BEGIN, REQUEST_END = "<|plamo:begin_tool_request:plamo|>", "<|plamo:end_tool_request:plamo|>"
NAME_BEGIN, NAME_END = "<|plamo:begin_tool_name:plamo|>", "<|plamo:end_tool_name:plamo|>"
ARGS_BEGIN = "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
ARGS_END = "<|plamo:end_tool_arguments:plamo|>"
EOT = "<|plamo:tag|>"


def render(calls: Sequence[Call]) -> str:
    body = "".join(
        f"{REQUEST_BEGIN}{NAME_BEGIN}{n}{NAME_END}{ARGS_BEGIN}{dump_json(a)}{ARGS_END}{REQUEST_END}"
        for n, a in calls
    )
    return f"{REQUESTS_BEGIN}{body}{REQUESTS_END}"


TOOL = ToolFormat(
    family="plamo3",
    summary="`<|plamo:begin_tool_requests:plamo|>…<|plamo:begin_tool_name:plamo|>NAME…<|plamo:msg|>{…}<|plamo:end_tool_arguments:plamo|>…`",
    markers=(
        REQUESTS_BEGIN,
        REQUESTS_END,
        REQUEST_BEGIN,
        REQUEST_END,
        NAME_BEGIN,
        NAME_END,
        ARGS_BEGIN,
        ARGS_END,
        EOT,
    ),
    render=render,
    notes="format_tool_result: the result text (no PLaMo 3 tool-message wrapper verified).",
)

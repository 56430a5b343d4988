"""FunctionGemma: ``<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, join_calls
from .gemma4 import CALL, render_value, result_formatter

START, END = "<start_function_call>", "<end_function_call>"
STRING = "<escape>"
RESULT_START, RESULT_END = "<start_function_response>", "<end_function_response>"


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{START}{CALL}{name}{render_value(args, STRING)}{END}"


#: ``<start_function_response>response:NAME{…}<end_function_response>`` as the FunctionGemma template
#: writes it (no call ids: pass the function's name as `tool_call_id`).
format_tool_result = result_formatter(RESULT_START, RESULT_END, STRING)


TOOL = ToolFormat(
    family="functiongemma",
    summary="`<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>` (Gemma's argument syntax)",
    markers=(START, END, STRING),
    render=join_calls(render_call, sep=""),
    format_tool_result=format_tool_result,
)

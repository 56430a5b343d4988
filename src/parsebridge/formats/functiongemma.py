"""FunctionGemma: ``<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, join_calls
from .gemma4 import CALL, render_value

START, END = "<start_function_call>", "<end_function_call>"
STRING = "<escape>"
RESULT_START, RESULT_END = "<start_function_response>", "<end_function_response>"


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{START}{CALL}{name}{render_value(args, STRING)}{END}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<start_function_response>response:NAME{…}<end_function_response>`` as the FunctionGemma template writes it.

    FunctionGemma has no call ids: pass the function's name as `tool_call_id`.
    """
    body = result if isinstance(result, dict) else {"value": result}
    return f"{RESULT_START}response:{tool_call_id}{render_value(body, STRING)}{RESULT_END}"


TOOL = ToolFormat(
    family="functiongemma",
    summary="`<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>` (Gemma's argument syntax)",
    markers=(START, END, STRING),
    render=join_calls(render_call, sep=""),
    format_tool_result=format_tool_result,
)

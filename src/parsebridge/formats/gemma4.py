"""Gemma 4: ``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:5,flag:true,obj:{…},list:[…]}<tool_call|>``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._base import ToolFormat, join_calls

START, END = "<|tool_call>", "<tool_call|>"
STRING = '<|"|>'
CALL = "call:"
RESULT_START, RESULT_END = "<|tool_response>", "<tool_response|>"


def render_value(value: Any, delim: str = STRING) -> str:
    """A value in Gemma's argument syntax: strings between delimiters, bare keys, JSON scalars."""
    if isinstance(value, str):
        return f"{delim}{value}{delim}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{render_value(v, delim)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(render_value(v, delim) for v in value) + "]"
    return json.dumps(value)


def call_renderer(start: str, end: str, delim: str) -> Callable[[str, dict[str, Any]], str]:
    """(name, args) → ``{start}call:NAME{…}{end}``, the arguments in the argument syntax."""

    def render_call(name: str, args: dict[str, Any]) -> str:
        return f"{start}{CALL}{name}{render_value(args, delim)}{end}"

    return render_call


def result_formatter(start: str, end: str, delim: str) -> Callable[[str, Any], str]:
    """(name, result) → ``{start}response:NAME{…}{end}``, the result in the argument syntax.

    Gemma has no call ids: pass the function's name as `tool_call_id`. A
    mapping result is written in the argument syntax, anything else as
    ``{value:…}``.
    """

    def format_tool_result(tool_call_id: str, result: Any) -> str:
        body = result if isinstance(result, dict) else {"value": result}
        return f"{start}response:{tool_call_id}{render_value(body, delim)}{end}"

    return format_tool_result


def gemma_format(
    family: str, summary: str, markers: tuple[str, str, str], results: tuple[str, str]
) -> ToolFormat:
    """A format writing Gemma's argument syntax with its own `markers` (start, end, string
    delimiter) and its tool result between `results` (start, end): Gemma 4's, FunctionGemma's."""
    start, end, delim = markers
    render = join_calls(call_renderer(start, end, delim), sep="")
    result = result_formatter(*results, delim)
    return ToolFormat(
        family=family, summary=summary, markers=markers, render=render, format_tool_result=result
    )


render_call = call_renderer(START, END, STRING)

TOOL = gemma_format(
    "gemma4",
    '`<|tool_call>call:NAME{key:<|"|>text<|"|>,n:5,obj:{…},list:[…]}<tool_call|>` (Gemma\'s own argument syntax)',
    (START, END, STRING),
    (RESULT_START, RESULT_END),
)
#: ``<|tool_response>response:NAME{…}<tool_response|>`` as the Gemma 4 template writes a tool result.
format_tool_result = TOOL.format_tool_result

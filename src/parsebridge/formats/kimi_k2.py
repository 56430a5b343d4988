"""Kimi K2: ``<|tool_calls_section_begin|>`` with ``functions.NAME:IDX<|tool_call_argument_begin|>{json}`` calls."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, dump_json, joined, result_text

SECTION_BEGIN, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CALL_BEGIN, ARG_BEGIN, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


def render(calls: Any, *, start: int = 0) -> str:
    body = "".join(
        f"{CALL_BEGIN}functions.{n}:{start + i}{ARG_BEGIN}{dump_json(a)}{CALL_END}"
        for i, (n, a) in enumerate(calls)
    )
    return f"{SECTION_BEGIN}{body}{SECTION_END}"


GRAMMAR = TextGrammar(
    (SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARG_BEGIN, CALL_END),
    lambda n, a, i: f"{CALL_BEGIN}functions.{n}:{i}{ARG_BEGIN}{a}{CALL_END}",
    joined("", SECTION_BEGIN, SECTION_END),
)


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``## Return of {id}\\n{result}``: how the Kimi K2 chat template opens a tool message's content."""
    return f"## Return of {tool_call_id}\n{result_text(result)}"


TOOL = ToolFormat(
    family="kimi_k2",
    summary="`<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>…`",
    markers=(SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARG_BEGIN, CALL_END),
    render=render,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
    format_tool_result=format_tool_result,
    servers_content="marker",
)

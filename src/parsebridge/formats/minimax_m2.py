"""MiniMax-M2: ``<minimax:tool_call>`` with ``<invoke name=…><parameter name=…>`` calls."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, ToolFormat, XmlCalls, result_text

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE, INVOKE_END = "<invoke name=", "</invoke>"
PARAM, PARAM_END = "<parameter name=", "</parameter>"


def invoke_calls(start: str, end: str) -> XmlCalls:
    """``<invoke name=…>`` elements, one ``<parameter name=…>`` a line, in a `start`…`end` block."""
    return XmlCalls(
        lambda n: f'{INVOKE}"{n}">\n',
        f"{INVOKE_END}\n",
        lambda k, v: f'{PARAM}"{k}">{v}{PARAM_END}\n',
        sep="",
        before=f"{start}\n",
        after=end,
    )


def invoke_format(family: str, summary: str, start: str, end: str, **facts: Any) -> ToolFormat:
    """A format writing MiniMax-M2's invoke elements in its own `start`…`end` block (dots' too),
    values typed by the tool schema; `facts` are its other fields (`grammar`: see `XmlCalls.tool_format`)."""
    markers = (start, end, INVOKE, INVOKE_END, PARAM, PARAM_END)
    return invoke_calls(start, end).tool_format(family, summary, markers, **facts)


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<response>…</response>``: how the MiniMax-M2 chat template renders each tool message (inside its ``tool`` turn)."""
    return f"<response>{result_text(result)}</response>"


TOOL = invoke_format(
    "minimax_m2",
    '`<minimax:tool_call><invoke name="…"><parameter name="…">…</parameter></invoke></minimax:tool_call>`, values typed by the tool schema',
    START,
    END,
    grammar=(START, END, INVOKE, INVOKE_END),
    content=BEFORE | AFTER,
    format_tool_result=format_tool_result,
    servers_content="marker",
)
render, GRAMMAR = TOOL.render, TOOL.grammar

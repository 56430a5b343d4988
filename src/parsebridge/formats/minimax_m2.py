"""MiniMax-M2: ``<minimax:tool_call>`` with ``<invoke name=…><parameter name=…>`` calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, joined, result_text, xml_call, xml_value

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE, INVOKE_END = "<invoke name=", "</invoke>"
PARAM, PARAM_END = "<parameter name=", "</parameter>"


def invoke_renderer(start: str, end: str) -> Callable[[Any], str]:
    """calls → ``<invoke name=…>`` elements, one ``<parameter name=…>`` a line, in a `start`…`end` block."""

    def render(calls: Any) -> str:
        parts = []
        for n, a in calls:
            params = "".join(f'{PARAM}"{k}">{xml_value(v)}{PARAM_END}\n' for k, v in a.items())
            parts.append(f'{INVOKE}"{n}">\n{params}{INVOKE_END}\n')
        return f"{start}\n" + "".join(parts) + end

    return render


render = invoke_renderer(START, END)


GRAMMAR = TextGrammar(
    (START, END, INVOKE, INVOKE_END),
    xml_call(
        lambda n: f'{INVOKE}"{n}">\n',
        f"{INVOKE_END}\n",
        lambda k, v: f'<parameter name="{k}">{v}</parameter>\n',
    ),
    joined("", f"{START}\n", END),
    json_args=False,
)


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<response>…</response>``: how the MiniMax-M2 chat template renders each tool message (inside its ``tool`` turn)."""
    return f"<response>{result_text(result)}</response>"


TOOL = ToolFormat(
    family="minimax_m2",
    summary='`<minimax:tool_call><invoke name="…"><parameter name="…">…</parameter></invoke></minimax:tool_call>`, values typed by the tool schema',
    markers=(START, END, INVOKE, INVOKE_END, PARAM, PARAM_END),
    render=render,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
    typed_values=True,
    format_tool_result=format_tool_result,
    servers_content="marker",
)

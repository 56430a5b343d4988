"""MiniMax-M2: ``<minimax:tool_call>`` with ``<invoke name=…><parameter name=…>`` calls."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, joined, result_text, xml_call, xml_value

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE, INVOKE_END = "<invoke name=", "</invoke>"
PARAM, PARAM_END = "<parameter name=", "</parameter>"


def render(calls: Any) -> str:
    parts = []
    for n, a in calls:
        params = "".join(f'<parameter name="{k}">{xml_value(v)}</parameter>\n' for k, v in a.items())
        parts.append(f'<invoke name="{n}">\n{params}</invoke>\n')
    return f"{START}\n" + "".join(parts) + END


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
    content_before=True,
    content_after=True,
    typed_values=True,
    format_tool_result=format_tool_result,
    servers_content="marker",
)

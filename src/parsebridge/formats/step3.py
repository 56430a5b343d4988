"""StepFun Step-3: ``<｜tool_calls_begin｜>`` with ``<steptml:invoke name=…>`` calls."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, joined, xml_call, xml_value

INVOKE_OPEN, PARAM_OPEN = "<steptml:invoke", "<steptml:parameter"
CALLS_BEGIN, CALLS_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
INVOKE_END, PARAM_END = "</steptml:invoke>", "</steptml:parameter>"


def render(calls: Any) -> str:
    parts = []
    for n, a in calls:
        params = "".join(f'<steptml:parameter name="{k}">{xml_value(v)}{PARAM_END}' for k, v in a.items())
        parts.append(f'{CALL_BEGIN}function{SEP}<steptml:invoke name="{n}">{params}{INVOKE_END}{CALL_END}')
    return CALLS_BEGIN + "".join(parts) + CALLS_END


INVOKE = "<steptml:invoke"
GRAMMAR = TextGrammar(
    (CALLS_BEGIN, CALLS_END, CALL_BEGIN, SEP, CALL_END, INVOKE, INVOKE_END),
    xml_call(
        lambda n: f'{CALL_BEGIN}function{SEP}{INVOKE} name="{n}">',
        f"{INVOKE_END}{CALL_END}",
        lambda k, v: f'<steptml:parameter name="{k}">{v}{PARAM_END}',
    ),
    joined("", CALLS_BEGIN, CALLS_END),
    json_args=False,
)

TOOL = ToolFormat(
    family="step3",
    summary='`<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="…">…`',
    markers=(
        CALLS_BEGIN,
        CALLS_END,
        CALL_BEGIN,
        CALL_END,
        SEP,
        INVOKE_OPEN,
        INVOKE_END,
        PARAM_OPEN,
        PARAM_END,
    ),
    render=render,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
    typed_values=True,
    notes="format_tool_result: the result text as the tool message's content (no wrapper verified for Step-3).",
    servers_content="keep",
)

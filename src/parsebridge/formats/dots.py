"""dots (rednote dots.llm): ``<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>``."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, xml_value

START, END = "<dots_function_call>", "</dots_function_call>"
INVOKE, INVOKE_END = "<invoke name=", "</invoke>"
PARAM, PARAM_END = "<parameter name=", "</parameter>"


def render(calls: Any) -> str:
    parts = []
    for n, a in calls:
        params = "".join(f'{PARAM}"{k}">{xml_value(v)}{PARAM_END}\n' for k, v in a.items())
        parts.append(f'{INVOKE}"{n}">\n{params}{INVOKE_END}\n')
    return f"{START}\n" + "".join(parts) + END


# Tool results: `ToolFormat`'s default, the result text as is: the frameworks ship no dots chat
# template, so we add no wrapper.
TOOL = ToolFormat(
    family="dots",
    summary='`<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>`, values typed by the tool schema',
    markers=(START, END, INVOKE, INVOKE_END, PARAM, PARAM_END),
    render=render,
    typed_values=True,
)

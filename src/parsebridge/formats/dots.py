"""dots (rednote dots.llm): ``<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>``."""

from __future__ import annotations

from ._base import ToolFormat
from .minimax_m2 import INVOKE, INVOKE_END, PARAM, PARAM_END, invoke_renderer

#: MiniMax-M2's invoke elements in dots' own block.
START, END = "<dots_function_call>", "</dots_function_call>"
render = invoke_renderer(START, END)


# Tool results: `ToolFormat`'s default, the result text as is: the frameworks ship no dots chat
# template, so we add no wrapper.
TOOL = ToolFormat(
    family="dots",
    summary='`<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>`, values typed by the tool schema',
    markers=(START, END, INVOKE, INVOKE_END, PARAM, PARAM_END),
    render=render,
    typed_values=True,
)

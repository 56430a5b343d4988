"""dots (rednote dots.llm): ``<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>``."""

from __future__ import annotations

from .minimax_m2 import INVOKE, INVOKE_END, PARAM, PARAM_END, invoke_format

#: MiniMax-M2's invoke elements in dots' own block.
START, END = "<dots_function_call>", "</dots_function_call>"


# Tool results: `ToolFormat`'s default, the result text as is: the frameworks ship no dots chat
# template, so we add no wrapper.
TOOL = invoke_format(
    "dots",
    '`<dots_function_call><invoke name="…"><parameter name="…">…</parameter></invoke></dots_function_call>`, values typed by the tool schema',
    START,
    END,
)
render = TOOL.render

__all__ = ["END", "INVOKE", "INVOKE_END", "PARAM", "PARAM_END", "START", "TOOL", "render"]

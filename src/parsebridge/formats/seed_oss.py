"""ByteDance Seed-OSS: ``<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>``."""

from __future__ import annotations

from ._base import AFTER, BEFORE, BETWEEN
from .qwen3_coder import FN, FN_END, PARAM, PARAM_END, function_calls

#: Qwen3-Coder's function and parameter tags (without their newlines) in Seed's own block.
START, END = "<seed:tool_call>", "</seed:tool_call>"


#: One call's syntax, written once: the renderer and the text grammar follow from it.
CALLS = function_calls(START, END, lambda k, v: f"{PARAM}{k}>{v}{PARAM_END}\n")
render_call = CALLS.render_call


# Tool results: `ToolFormat`'s default, the result text as is: the Seed-OSS chat template puts a
# tool message's content verbatim in a ``tool`` turn.
TOOL = CALLS.tool_format(
    "seed_oss",
    "`<seed:tool_call><function=NAME><parameter=P>…</parameter></function></seed:tool_call>`, values typed by the tool schema",
    (START, END, FN, FN_END, PARAM, PARAM_END),
    grammar=(START, END, FN, FN_END),
    content=BEFORE | AFTER | BETWEEN,
)
GRAMMAR = TOOL.grammar

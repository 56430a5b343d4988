"""InternLM 2.5 / Intern-S1: ``<|action_start|><|plugin|>\\n{json}<|action_end|>``."""

from __future__ import annotations

from typing import Any

from ._base import BEFORE, TextGrammar, ToolFormat, dump_json, join_calls, joined, object_call, result_text

ACTION_START, PLUGIN, ACTION_END = "<|action_start|>", "<|plugin|>", "<|action_end|>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"


def render_call(name: str, args: dict[str, Any], *, key: str = "parameters") -> str:
    return f"{ACTION_START}{PLUGIN}\n{dump_json({'name': name, key: args})}{ACTION_END}"


GRAMMAR = TextGrammar(
    (ACTION_START, ACTION_END, PLUGIN),
    lambda n, a, i: f"{ACTION_START}{PLUGIN}\n" + object_call("parameters")(n, a, i) + ACTION_END,
    joined("\n"),
)


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """InternLM's plugin result turn: ``<|im_start|>environment name=<|plugin|>\\n…<|im_end|>`` (no id)."""
    return f"{IM_START}environment name={PLUGIN}\n{result_text(result)}{IM_END}"


TOOL = ToolFormat(
    family="internlm",
    summary="`<|action_start|><|plugin|>{json}<|action_end|>` per call",
    markers=(ACTION_START, PLUGIN, ACTION_END),
    render=join_calls(render_call),
    grammar=GRAMMAR,
    content=BEFORE,
    multi=False,
    format_tool_result=format_tool_result,
)

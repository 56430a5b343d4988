"""InternLM 2.5: ``<|action_start|><|plugin|>\\n{json}<|action_end|>``."""

from __future__ import annotations

from typing import Any

from ._base import TextGrammar, ToolFormat, dump_json, join_calls, joined, object_call

ACTION_START, PLUGIN, ACTION_END = "<|action_start|>", "<|plugin|>", "<|action_end|>"


def render_call(name: str, args: dict[str, Any], *, key: str = "parameters") -> str:
    return f"{ACTION_START}{PLUGIN}\n{dump_json({'name': name, key: args})}{ACTION_END}"


GRAMMAR = TextGrammar(
    (ACTION_START, ACTION_END, PLUGIN),
    lambda n, a, i: f"{ACTION_START}{PLUGIN}\n" + object_call("parameters")(n, a, i) + ACTION_END,
    joined("\n"),
)

TOOL = ToolFormat(
    family="internlm",
    summary="`<|action_start|><|plugin|>{json}<|action_end|>`",
    markers=(ACTION_START, PLUGIN, ACTION_END),
    render=join_calls(render_call),
    grammar=GRAMMAR,
    content_before=True,
    multi=False,
)

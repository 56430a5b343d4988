"""IBM Granite 3.x: ``<|tool_call|>`` + a JSON array of calls."""

from __future__ import annotations

from typing import Any

from ._base import ReasoningFormat, TextGrammar, ToolFormat, dump_json, joined, object_call

TAG = "<|tool_call|>"


def render(calls: Any) -> str:
    return TAG + dump_json([{"name": n, "arguments": a} for n, a in calls])


GRAMMAR = TextGrammar((TAG,), object_call(), joined(", ", f"{TAG}[", "]"))

TOOL = ToolFormat(
    family="granite",
    summary='`<|tool_call|>[{"name": …, "arguments": …}]`',
    markers=(TAG,),
    render=render,
    grammar=GRAMMAR,
)

THOUGHT, RESPONSE = "Here is my thought process:", "Here is my response:"


def render_reasoning(reasoning: str | None, content: str, *, started: bool | None = None) -> str:
    """Granite 3.2 thinking: the thought-process heading, the reasoning, the response heading, the answer."""
    if reasoning is None:
        return content
    return f"{THOUGHT}\n{reasoning}\n{RESPONSE}\n{content}"


REASONING = ReasoningFormat(
    family="granite",
    summary="`Here is my thought process:` … `Here is my response:` … (Granite 3.2)",
    start=THOUGHT,
    end=RESPONSE,
    render=render_reasoning,
)

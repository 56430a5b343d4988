"""OpenAI gpt-oss "harmony": channels for reasoning (analysis), content (final) and calls (commentary)."""

from __future__ import annotations

from typing import Any

from ._base import ReasoningFormat, TextGrammar, ToolFormat, dump_json, join_calls, joined

CHANNEL, MESSAGE, END, CALL, START, CONSTRAIN = (
    "<|channel|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|start|>",
    "<|constrain|>",
)
ANALYSIS = CHANNEL + "analysis" + MESSAGE + "{}" + END
NEXT = START + "assistant"


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{dump_json(args)}{CALL}"


def render_analysis(text: str) -> str:
    """An analysis (reasoning) message, followed by the next message's header."""
    return ANALYSIS.format(text) + NEXT


GRAMMAR = TextGrammar(
    (CHANNEL, CALL, MESSAGE, CONSTRAIN, NEXT),
    lambda n, a, i: f"{CHANNEL}commentary to=functions.{n} {CONSTRAIN}json{MESSAGE}{a}{CALL}",
    joined(NEXT),
)

TOOL = ToolFormat(
    family="gpt_oss",
    summary="harmony: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`",
    markers=(CHANNEL, MESSAGE, END, CALL, START, CONSTRAIN),
    render=join_calls(render_call, sep=""),
    grammar=GRAMMAR,
    reasoning_family="gpt_oss",
)

ANALYSIS_START, FINAL_START = CHANNEL + "analysis" + MESSAGE, CHANNEL + "final" + MESSAGE


def render_reasoning(reasoning: str | None, content: str, *, started: bool | None = None) -> str:
    """An analysis message, then the final message holding the content."""
    if reasoning is None:
        return FINAL_START + content
    return f"{ANALYSIS_START}{reasoning}{END}{NEXT}{FINAL_START}{content}"


REASONING = ReasoningFormat(
    family="gpt_oss",
    summary="harmony: the `analysis` channel is reasoning, the `final` channel content",
    start=ANALYSIS_START,
    end=END,
    extra_markers=(FINAL_START, NEXT, CHANNEL, MESSAGE, START),
    render=render_reasoning,
)

"""OpenAI gpt-oss "harmony": channels for reasoning (analysis), content (final) and calls (commentary)."""

from __future__ import annotations

from typing import Any

from ._base import ToolFormat, dump_json, join_calls

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


TOOL = ToolFormat(
    family="gpt_oss",
    summary="harmony: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`",
    markers=(CHANNEL, MESSAGE, END, CALL, START, CONSTRAIN),
    render=join_calls(render_call, sep=""),
)

"""DeepSeek V3 / R1 tool calls: a ``<｜tool▁calls▁begin｜>`` section of fenced JSON calls; V3.1 bodies."""

from __future__ import annotations

from typing import Any

from ._base import AFTER, BEFORE, TextGrammar, ToolFormat, dump_json, joined, result_text

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
OUTPUT_BEGIN, OUTPUT_END = "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"


def render_call(name: str, args: dict[str, Any], raw: str | None = None) -> str:
    body = raw if raw is not None else dump_json(args)
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{body}\n```{CALL_END}"


def render(calls: Any) -> str:
    return CALLS_BEGIN + "\n".join(render_call(n, a) for n, a in calls) + CALLS_END


def render_v31(calls: Any) -> str:
    """V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``, no fence."""
    body = "".join(f"{CALL_BEGIN}{n}{SEP}{dump_json(a)}{CALL_END}" for n, a in calls)
    return f"{CALLS_BEGIN}{body}{CALLS_END}"


def format_tool_result(tool_call_id: str, result: Any) -> str:
    """``<｜tool▁output▁begin｜>…<｜tool▁output▁end｜>`` as the DeepSeek V3 template renders one output."""
    return f"{OUTPUT_BEGIN}{result_text(result)}{OUTPUT_END}"


MARKERS = (CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP)

#: Region start first, then the call markers (the adversarial corpus repeats ``markers[1]``).
GRAMMAR_MARKERS = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)
GRAMMAR = TextGrammar(
    GRAMMAR_MARKERS,
    lambda n, a, i: f"{CALL_BEGIN}function{SEP}{n}\n```json\n{a}\n```{CALL_END}",
    joined("\n", CALLS_BEGIN, CALLS_END),
)
GRAMMAR_V31 = TextGrammar(
    GRAMMAR_MARKERS, lambda n, a, i: f"{CALL_BEGIN}{n}{SEP}{a}{CALL_END}", joined("", CALLS_BEGIN, CALLS_END)
)

TOOL = ToolFormat(
    family="deepseek_v3",
    summary="`<｜tool▁calls▁begin｜>…<｜tool▁call▁end｜>`, V3 (` ```json ` fenced) and V3.1 bodies",
    markers=MARKERS,
    render=render,
    format_tool_result=format_tool_result,
    grammar=GRAMMAR,
    content=BEFORE | AFTER,
    servers_content="marker",
)

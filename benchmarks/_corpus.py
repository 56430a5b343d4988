"""Model outputs the benchmarks parse: the same text for every backend, generated, not sampled.

Fixed transcripts (a few per format, realistic sizes: a sentence of content,
one or two calls, a paragraph of reasoning) for overhead and throughput, and
long outputs of a chosen length for scaling. Everything is deterministic so
two runs (and two interpreters) parse byte-identical text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from parsebridge.formats import deepseek_v3, hermes, llama3_json, think

Kind = Literal["tool", "reasoning"]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]

_CALLS: list[list[tuple[str, dict[str, Any]]]] = [
    [("get_weather", {"city": "Paris", "unit": "c"})],
    [("search", {"query": "vLLM tool parser streaming", "limit": 5})],
    [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Lima", "unit": "f"})],
    [("write_file", {"path": "notes/todo.md", "content": '- buy milk\n- call Ana about the "trip"\n'})],
    [("search", {"query": "python asyncio cancel task", "limit": 3}), ("get_weather", {"city": "Oslo"})],
    [("get_weather", {"city": "São Paulo", "unit": "c"})],
]

_LEADS = [
    "Let me check the weather for you.",
    "I'll search for that.",
    "",
    "Sure, writing the file now.",
    "First I will look this up, then check the forecast.",
    "",
]

_THOUGHTS = [
    "The user wants the weather in Paris. I should call the weather tool with the city name, "
    "and use Celsius because they wrote the temperature that way earlier.",
    "Two numbers: 17 and 25. Their sum is 42, and 42 is even, so the answer is yes. "
    "Let me double-check: 17 + 25 = 42. Correct.",
    "The question is ambiguous. It could mean the capital of Australia, which is Canberra, "
    "not Sydney, although Sydney is the largest city. I will answer Canberra and mention Sydney.",
    "I need to sort the list [5, 3, 9, 1]. Sorted ascending it is [1, 3, 5, 9]. "
    "The median of four numbers is the mean of the middle two: (3 + 5) / 2 = 4.",
]

_ANSWERS = [
    "It is 18 °C and sunny in Paris.",
    "Yes, 17 + 25 = 42, which is even.",
    "The capital of Australia is Canberra (Sydney is the largest city).",
    "Sorted: [1, 3, 5, 9]; the median is 4.",
]


@dataclass(frozen=True)
class Format:
    """One output format (a family of the family table) and the transcripts written in it."""

    family: str
    kind: Kind
    transcripts: list[str]
    tools: list[dict[str, Any]] = field(default_factory=list)
    #: Reasoning parsers: the prompt already opened the block (R1 templates).
    reasoning_started: bool | None = None


def _hermes(calls: list[tuple[str, dict[str, Any]]], lead: str) -> str:
    return (lead + "\n" if lead else "") + hermes.TOOL.render(calls)


def _llama3(calls: list[tuple[str, dict[str, Any]]], lead: str) -> str:
    # Llama 3.x JSON tool calls: the output is the call(s) only, "; "-separated.
    return llama3_json.TOOL.render(calls)


def _deepseek_v3(calls: list[tuple[str, dict[str, Any]]], lead: str) -> str:
    body = "".join(deepseek_v3.render_call(n, a) for n, a in calls)
    return f"{lead}{deepseek_v3.CALLS_BEGIN}{body}{deepseek_v3.CALLS_END}"


def _think(thought: str, answer: str, open_tag: bool) -> str:
    return (f"{think.START}\n" if open_tag else "") + thought + f"\n{think.END}\n\n" + answer


FORMATS: dict[str, Format] = {
    "hermes": Format(
        "hermes", "tool", [_hermes(c, lead) for c, lead in zip(_CALLS, _LEADS, strict=True)], TOOLS
    ),
    "llama3_json": Format(
        "llama3_json", "tool", [_llama3(c, lead) for c, lead in zip(_CALLS, _LEADS, strict=True)], TOOLS
    ),
    "deepseek_v3": Format(
        "deepseek_v3", "tool", [_deepseek_v3(c, lead) for c, lead in zip(_CALLS, _LEADS, strict=True)], TOOLS
    ),
    "qwen3": Format(
        "qwen3", "reasoning", [_think(t, a, True) for t, a in zip(_THOUGHTS, _ANSWERS, strict=True)]
    ),
    "deepseek_r1": Format(
        "deepseek_r1", "reasoning", [_think(t, a, False) for t, a in zip(_THOUGHTS, _ANSWERS, strict=True)]
    ),
}


# ---------------------------------------------------------------------- long outputs (scaling)

_PROSE = (
    "The parser must keep up with the engine, token after token, whatever the length of the "
    "output. A linear parser does constant work per chunk; a parser that re-reads everything it "
    "has seen does work that grows with the output, and a long answer then costs quadratic time. "
)


def prose(n_chars: int) -> str:
    """`n_chars` of plain English (no JSON escapes, no markers)."""
    reps = n_chars // len(_PROSE) + 1
    return (_PROSE * reps)[:n_chars]


def long_tool_call(n_chars: int) -> str:
    """A hermes call whose `content` argument makes the output about `n_chars` long."""
    head = hermes.START + '\n{"name": "write_file", "arguments": {"path": "essay.txt", "content": "'
    tail = '"}}\n' + hermes.END
    return head + prose(max(0, n_chars - len(head) - len(tail))) + tail


def long_reasoning(n_chars: int) -> str:
    """A think-tag output whose reasoning makes it about `n_chars` long."""
    head, tail = f"{think.START}\n", f"\n{think.END}\n\nDone."
    return head + prose(max(0, n_chars - len(head) - len(tail))) + tail

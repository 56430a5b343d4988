"""What the real-server plugin tests stream: outputs, chunkings, and parsebridge's own reading of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import parsebridge as pb
from parsebridge.adapters import _tokenizers
from parsebridge.formats import tool_format

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]
CALLS = [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
HERMES = "Let me check both.\n" + tool_format("hermes").render(CALLS)
IQUEST = "Checking.\n" + tool_format("iquest_q1").render(CALLS[:1])
THINK = "<think>The user wants the weather; two tools apply.</think>\n\n"

CHUNKINGS = ("char1", "char3", "char20", "tok1")


@dataclass(frozen=True)
class Case:
    id: str
    reasoning: str | None  # parsebridge specs
    tool: str | None
    output: str

    def names(self) -> tuple[str | None, str | None]:
        """The names the servers know the specs by (the plugins' ``pb:`` names, lower-cased as registered)."""
        return tuple(None if s is None else f"pb:{s}".lower() for s in (self.reasoning, self.tool))  # type: ignore[return-value]


def tokenizer() -> Any:
    specials = {m for family in ("hermes", "iquest_q1") for m in tool_format(family).markers}
    return _tokenizers.build_tokenizer(sorted(specials | {"<think>", "</think>"}), "qwen")


def chunks(tok: Any, text: str, chunking: str) -> list[tuple[str, list[int]]]:
    """`text` as engine steps with their token ids: N characters a step, or one token a step."""
    if chunking == "tok1":
        return [(c.text, list(c.token_ids)) for c in _tokenizers.token_chunks(tok, text, 1)]
    per = int(chunking.removeprefix("char"))
    pieces = [text[i : i + per] for i in range(0, len(text), per)]
    return [(p, list(tok.encode(p, add_special_tokens=False))) for p in pieces]


def _message(reasoning: str | None, content: str | None, calls: list[Any]) -> dict[str, Any]:
    return {
        "reasoning": reasoning or None,
        "content": content or None,
        "tool_calls": [(c.name, c.arguments) for c in calls],
    }


def parsebridge_reading(case: Case, steps: list[tuple[str, list[int]]]) -> dict[str, Any]:
    """parsebridge's own streamed reading of these chunks (reasoning parser, then tool parser)."""
    pipe = pb.get_pipeline(case.reasoning, case.tool, tools=TOOLS, native=False)
    stream = pipe.stream()
    for text, ids in steps:
        stream.feed(text, ids)
    result = stream.finish()
    return _message(result.reasoning, result.content, result.tool_calls)


def parsebridge_oneshot(case: Case) -> dict[str, Any]:
    result = pb.get_pipeline(case.reasoning, case.tool, tools=TOOLS, native=False).parse(case.output)
    return _message(result.reasoning, result.content, result.tool_calls)


def client_message(run: Any) -> dict[str, Any]:
    """A harness `Run`'s assembled message in the same terms (each call sent its id once)."""
    message = run.message
    for call in message["tool_calls"]:
        assert call["ids"] == 1, f"call {call['name']!r} sent its id {call['ids']} times"
    return {
        "reasoning": message["reasoning"],
        "content": message["content"],
        "tool_calls": [(c["name"], json.loads(c["arguments"])) for c in message["tool_calls"]],
    }

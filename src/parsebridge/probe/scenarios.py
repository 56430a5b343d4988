"""The probe's scripted requests: tools with JSON Schemas, and one scenario per situation.

Each scenario is a chat request a client would send (messages, tools, `tool_choice`) and what
the client may expect back: a call, several calls, no call, a call forced by `tool_choice`. The
user messages are written for a real model (they ask for what the scenario tests) and are
distinct, none inside another, so a scripted engine can tell them apart by the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocol.errors import with_hints

Expect = Literal["call", "calls", "none", "any"]


def _tool(name: str, description: str, properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(required)}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


WEATHER = _tool(
    "get_weather",
    "Current weather for a city.",
    {
        "city": {"type": "string", "description": "the city's name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    ["city"],
)
TIME = _tool("get_time", "The current time (UTC). Takes no arguments.", {}, [])
SEND = _tool(
    "send_message",
    "Send a text message to a person.",
    {"to": {"type": "string"}, "text": {"type": "string"}},
    ["to", "text"],
)
EVENT = _tool(
    "create_event",
    "Create a calendar event.",
    {
        "title": {"type": "string"},
        "when": {
            "type": "object",
            "properties": {"date": {"type": "string"}, "hour": {"type": "integer"}},
            "required": ["date"],
        },
        "attendees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name"],
            },
        },
    },
    ["title", "when", "attendees"],
)

#: The earlier turn the follow-up scenario continues: a call and the tool's result.
FOLLOW_UP_CALL_ID = "call_probe_0"


@dataclass(frozen=True)
class Scenario:
    """One scripted request and what a client may expect of the answer."""

    name: str
    description: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    expect: Expect
    tool_choice: Any = None
    #: Extra request fields this scenario adds (none today; a hook for template switches).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The first user message: what a scripted engine recognises the scenario by."""
        return next(str(m["content"]) for m in self.messages if m["role"] == "user")

    @property
    def forced(self) -> str | None:
        """``"required"``, the forced function's name, or None when the model may choose."""
        if self.tool_choice == "required":
            return "required"
        if isinstance(self.tool_choice, dict):
            return str(self.tool_choice.get("function", {}).get("name"))
        return None

    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    def schema_of(self, name: str) -> dict[str, Any] | None:
        for t in self.tools:
            if t["function"]["name"] == name:
                return dict(t["function"].get("parameters") or {})
        return None

    def body(self, model: str, *, stream: bool, max_tokens: int, seed: int) -> dict[str, Any]:
        """The chat completion request (temperature 0 and a seed: the two modes should agree)."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in self.messages],
            "tools": [dict(t) for t in self.tools],
            "temperature": 0,
            "seed": seed,
            "max_tokens": max_tokens,
            "stream": stream,
            **self.extra,
        }
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        return body


def _user(text: str) -> tuple[dict[str, Any], ...]:
    return ({"role": "user", "content": text},)


def _follow_up() -> tuple[dict[str, Any], ...]:
    call = {
        "id": FOLLOW_UP_CALL_ID,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
    }
    return (
        {"role": "user", "content": "Is it warm enough in Lisbon today for the beach?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": FOLLOW_UP_CALL_ID,
            "content": '{"temperature_c": 27, "sky": "sunny"}',
        },
    )


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "single-call",
        "one call to one tool",
        _user("What is the weather in Paris right now? Use the get_weather tool."),
        (WEATHER, TIME),
        "call",
    ),
    Scenario(
        "parallel-calls",
        "two calls in one answer",
        _user("Look up the weather in Tokyo and in Oslo at once: call get_weather twice, in parallel."),
        (WEATHER,),
        "calls",
    ),
    Scenario(
        "no-call",
        "tools offered, none needed",
        _user("Reply with one short friendly sentence greeting me. Do not call any tool."),
        (WEATHER, TIME),
        "none",
    ),
    Scenario(
        "nested-arguments",
        "objects and arrays inside the arguments",
        _user(
            "Create a calendar event titled 'Design review' on 2026-12-03 at hour 14 with attendees "
            "Ana (ana@example.com) and Bo (bo@example.com). Use create_event."
        ),
        (EVENT,),
        "call",
    ),
    Scenario(
        "unicode-arguments",
        "non-ASCII text in the arguments",
        _user("Send Zoë the message 'Grüße aus Köln — 東京で会いましょう 🌸' with send_message."),
        (SEND,),
        "call",
    ),
    Scenario(
        "empty-arguments",
        "a tool that takes no arguments",
        _user("What time is it in UTC? Call get_time, which takes no arguments."),
        (TIME, WEATHER),
        "call",
    ),
    Scenario(
        "required-choice",
        "tool_choice required",
        _user("Anything interesting about Madrid?"),
        (WEATHER, TIME),
        "call",
        tool_choice="required",
    ),
    Scenario(
        "named-choice",
        "tool_choice names get_weather",
        _user("Tell me something about Rome."),
        (WEATHER, TIME),
        "call",
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    ),
    Scenario(
        "follow-up",
        "the turn after a tool result",
        _follow_up(),
        (WEATHER,),
        "none",
    ),
    Scenario(
        "reasoning-then-call",
        "reasoning, then a call",
        _user("Think step by step about which tool fits, then check the weather in Nairobi."),
        (WEATHER, TIME),
        "call",
    ),
)


def scenario_names() -> list[str]:
    return [s.name for s in SCENARIOS]


def select(names: Sequence[str] | None) -> list[Scenario]:
    """The scenarios named (all when none), each once in the order first named (a name given
    twice would send the same requests twice and show the same rows twice); a name may be a
    comma-separated list, as --backends takes. An unknown name raises `KeyError` naming what exists."""
    if not names:
        return list(SCENARIOS)
    by_name = {s.name: s for s in SCENARIOS}
    given = names
    names = list(dict.fromkeys(n.strip() for each in given for n in each.split(",") if n.strip()))
    if not names:
        raise KeyError(f"--scenario {given[0]!r} names no scenario; scenarios: {', '.join(by_name)}")
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KeyError(
            f"unknown scenario {with_hints(unknown, by_name)}; scenarios: {', '.join(by_name)} "
            "(`parsebridge probe --help` describes each)"
        )
    return [by_name[n] for n in names]

"""The scripted model every probe test server plays: for each probe scenario, what a model writes.

`output(scenario, style)` is the raw model output for a scenario: the hermes format
(``<tool_call>{json}</tool_call>``, rendered by `formats`) with Qwen3 reasoning for the
reasoning scenario; a forced request's output follows the server's rule for forced choices
(``style="json"``: vLLM's and parsebridge's JSON rule, the arguments object for a named tool
and an array of ``{"name", "parameters"}`` for required; ``"native"``: the model's own format).
`scenario_in(prompt)` finds the scenario a rendered prompt was made from.
"""

from __future__ import annotations

import json
from typing import Any

from parsebridge.formats import tool_format
from parsebridge.probe.scenarios import SCENARIOS, Scenario

CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "single-call": [("get_weather", {"city": "Paris"})],
    "parallel-calls": [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Oslo"})],
    "nested-arguments": [
        (
            "create_event",
            {
                "title": "Design review",
                "when": {"date": "2026-12-03", "hour": 14},
                "attendees": [
                    {"name": "Ana", "email": "ana@example.com"},
                    {"name": "Bo", "email": "bo@example.com"},
                ],
            },
        )
    ],
    "unicode-arguments": [("send_message", {"to": "Zoë", "text": "Grüße aus Köln — 東京で会いましょう 🌸"})],
    "empty-arguments": [("get_time", {})],
    "required-choice": [("get_weather", {"city": "Madrid"})],
    "named-choice": [("get_weather", {"city": "Rome"})],
    "reasoning-then-call": [("get_weather", {"city": "Nairobi"})],
}
TEXT = {
    "no-call": "Hello there, nice to meet you!",
    "follow-up": "Yes: 27 °C and sunny in Lisbon, a fine beach day.",
}
REASONING = {"reasoning-then-call": "<think>\nThe weather tool fits: get_weather.\n</think>\n\n"}


#: What a Qwen3 model with thinking on writes first when it does not think.
EMPTY_THINK = "<think>\n\n</think>\n\n"


#: What the model writes for a forced scenario when nothing forces it (its prompt asks for no tool).
UNFORCED = {"required-choice": "Madrid has the Prado.", "named-choice": "Rome is very old."}


def output(scenario: Scenario, style: str = "json", think: bool = False, forced: bool = True) -> str:
    """The raw output a model writes for `scenario` (see the module doc for `style`); `think`:
    every output opens with a reasoning block, empty where the scenario has no reasoning;
    `forced`: False when the request came without its `tool_choice` (a proxy dropped it)."""
    name = scenario.name
    head = REASONING.get(name, EMPTY_THINK if think else "")
    if name in TEXT or (not forced and name in UNFORCED):
        return head + TEXT.get(name, UNFORCED.get(name, ""))
    calls = CALLS[name]
    if style == "json" and scenario.forced == "required":
        return head + json.dumps([{"name": n, "parameters": a} for n, a in calls], ensure_ascii=False)
    if style == "json" and scenario.forced is not None:
        return head + json.dumps(calls[0][1], ensure_ascii=False)
    return head + tool_format("hermes").render(calls)


def scenario_in(prompt: str) -> Scenario | None:
    """The scenario whose first user message the prompt holds (None: not one of the probe's)."""
    found = [s for s in SCENARIOS if s.prompt in prompt]
    return found[0] if len(found) == 1 else None


def transcripts(style: str = "json") -> list[dict[str, Any]]:
    """The example server's transcripts: one per scenario, its id the scenario's user message."""
    return [
        {
            "id": s.prompt,
            "output": output(s, style),
            "tools": list(s.tools),
            "reasoning_started_in_prompt": False,
        }
        for s in SCENARIOS
    ]

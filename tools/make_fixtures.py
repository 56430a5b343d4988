#!/usr/bin/env python3
"""Generate the shared conformance fixtures (src/parsebridge/conformance/fixtures/*.jsonl).

Each model family's output format is written once, as a small renderer
(`hermes_call`, `dsv3_section`, `glm45_call`, ...), from our own reading of
the format; the cases are hand-picked per family (single, parallel, content
around calls, unicode, malformed, truncated, ...).  `expected` is the correct
reading of the output, derived from the same segments the output is built
from, so that output and expected cannot drift apart:

    out, content, calls = build("Let me check.\\n", hermes_call("f", {...}))

`build` concatenates text segments and call spans; content is the text
segments verbatim, except whitespace-only segments (builtin policy rule 1).

Run:  python tools/make_fixtures.py            (writes the files)
      python tools/make_fixtures.py --check    (fails if the files are stale)

Output is deterministic (no randomness, sorted keys off, fixed order).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the formats come from the package in this tree

from parsebridge.formats import deepseek_v3 as fmt_dsv3  # noqa: E402
from parsebridge.formats import glm45 as fmt_glm  # noqa: E402
from parsebridge.formats import gpt_oss as fmt_harmony  # noqa: E402
from parsebridge.formats import granite as fmt_granite  # noqa: E402
from parsebridge.formats import hermes as fmt_hermes  # noqa: E402
from parsebridge.formats import internlm as fmt_internlm  # noqa: E402
from parsebridge.formats import jamba as fmt_jamba  # noqa: E402
from parsebridge.formats import kimi_k2 as fmt_kimi  # noqa: E402
from parsebridge.formats import llama3_json as fmt_llama  # noqa: E402
from parsebridge.formats import minimax_m2 as fmt_minimax  # noqa: E402
from parsebridge.formats import mistral as fmt_mistral  # noqa: E402
from parsebridge.formats import phi4_mini as fmt_phi  # noqa: E402
from parsebridge.formats import pythonic as fmt_pythonic  # noqa: E402
from parsebridge.formats import qwen3_coder as fmt_qcoder  # noqa: E402
from parsebridge.formats import seed_oss as fmt_seed  # noqa: E402
from parsebridge.formats import step3 as fmt_step3  # noqa: E402
from parsebridge.formats import xlam as fmt_xlam  # noqa: E402
from parsebridge.formats._base import xml_value  # noqa: E402

FIXTURES = ROOT / "src" / "parsebridge" / "conformance" / "fixtures"

# --------------------------------------------------------------------------- tools


def _fn(
    name: str, description: str, props: dict[str, Any], required: list[str] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    return {"type": "function", "function": {"name": name, "description": description, "parameters": params}}


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}


def _d(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": _fn(
        "get_weather",
        "Get the current weather and an optional forecast for a location.",
        {
            "location": _d(S, "City and country, e.g. 'Paris, France'."),
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit."},
            "days": _d(I, "Number of forecast days (1-7)."),
        },
        ["location"],
    ),
    "search_web": _fn(
        "search_web",
        "Search the web and return the top results.",
        {
            "query": _d(S, "The search query."),
            "max_results": _d(I, "How many results to return."),
            "safe_search": _d(B, "Filter explicit results."),
        },
        ["query"],
    ),
    "send_email": _fn(
        "send_email",
        "Send an email on behalf of the user.",
        {
            "to": {"type": "array", "items": S, "description": "Recipient addresses."},
            "subject": _d(S, "Subject line."),
            "body": _d(S, "Plain-text body."),
            "urgent": _d(B, "Mark as high priority."),
        },
        ["to", "subject", "body"],
    ),
    "create_ticket": _fn(
        "create_ticket",
        "Open an issue in the tracker.",
        {
            "title": _d(S, "Short summary."),
            "priority": _d(I, "1 (highest) to 5 (lowest)."),
            "labels": {"type": "array", "items": S},
            "metadata": {
                "type": "object",
                "description": "Free-form structured metadata.",
                "properties": {
                    "component": S,
                    "reporter": {"type": "object", "properties": {"name": S, "email": S}},
                    "environment": {"type": "object"},
                },
            },
        },
        ["title"],
    ),
    "write_file": _fn(
        "write_file",
        "Write text to a file in the workspace.",
        {
            "path": _d(S, "Path relative to the workspace root."),
            "content": _d(S, "Full file content."),
            "overwrite": _d(B, "Replace an existing file."),
        },
        ["path", "content"],
    ),
    "get_time": _fn(
        "get_time",
        "Current time in a time zone.",
        {"timezone": _d(S, "IANA zone, e.g. 'Asia/Tokyo'.")},
        ["timezone"],
    ),
    "list_files": _fn("list_files", "List the files in the current workspace.", {}),
    "calculate": _fn(
        "calculate",
        "Evaluate an arithmetic expression.",
        {"expression": _d(S, "Expression, e.g. '2*(3+4)'."), "precision": _d(I, "Decimal places.")},
        ["expression"],
    ),
    "book_flight": _fn(
        "book_flight",
        "Book a flight.",
        {
            "origin": _d(S, "IATA code."),
            "destination": _d(S, "IATA code."),
            "date": _d(S, "YYYY-MM-DD."),
            "passengers": _d(I, "Number of passengers."),
            "cabin": {"type": "string", "enum": ["economy", "premium", "business", "first"]},
            "max_price": _d(N, "Upper bound in EUR."),
            "flexible": _d(B, "Allow +/- one day."),
        },
        ["origin", "destination", "date"],
    ),
    "translate_text": _fn(
        "translate_text",
        "Translate text into another language.",
        {"text": S, "target_language": _d(S, "ISO 639-1 code."), "formal": B},
        ["text", "target_language"],
    ),
    "get_stock_price": _fn(
        "get_stock_price",
        "Latest traded price of a stock.",
        {"symbol": _d(S, "Ticker symbol."), "exchange": _d(S, "Exchange MIC, optional.")},
        ["symbol"],
    ),
    "update_settings": _fn(
        "update_settings",
        "Apply a partial settings document to the user's profile.",
        {"settings": {"type": "object", "description": "Nested settings object (merged)."}},
        ["settings"],
    ),
    "run_sql": _fn(
        "run_sql",
        "Run a read-only SQL query.",
        {"query": S, "params": {"type": "array", "items": {}}, "timeout_s": N},
        ["query"],
    ),
}


def tools(*names: str) -> list[dict[str, Any]]:
    return [TOOLS[n] for n in names]


DEFAULT = ("get_weather", "search_web", "get_time")

# --------------------------------------------------------------------------- shared data

LARGE_FILE = "".join(
    f"def handler_{i:03d}(event, context):\n"
    f'    """Handle event type {i} (auto-generated stub)."""\n'
    f"    payload = event.get('payload', {{}})\n"
    f"    return {{'status': 'ok', 'id': {i}, 'keys': sorted(payload)}}\n\n"
    for i in range(30)
)
assert len(LARGE_FILE) > 5000, len(LARGE_FILE)

LARGE_REASONING = "\n\n".join(
    f"Step {i}: consider the constraint on row {i}. If cell ({i}, {(i * 7) % 9}) holds {(i * 5) % 9 + 1}, "
    f"then the column {(i * 7) % 9} cannot hold it again, so the remaining candidates for row {i} shrink to "
    f"{sorted({(i * 3) % 9 + 1, (i * 4) % 9 + 1, (i * 2) % 9 + 1})}. Checking the box constraint as well."
    for i in range(30)
)
assert len(LARGE_REASONING) > 4500

NESTED_METADATA = {
    "component": "billing",
    "reporter": {"name": "Dana Scully", "email": "dana@example.org"},
    "environment": {
        "os": {"name": "linux", "version": "6.8", "flags": ["smp", "preempt"]},
        "services": [
            {"name": "api", "replicas": 3, "limits": {"cpu": 0.5, "memory_mb": 512}},
            {
                "name": "worker",
                "replicas": 1,
                "limits": {"cpu": 2.0, "memory_mb": 4096},
                "queues": ["emails", "invoices"],
            },
        ],
        "feature_flags": {"new_checkout": True, "legacy_tax": False, "rollout": None},
    },
}

NESTED_SETTINGS = {
    "notifications": {
        "email": {"digest": "weekly", "mentions": True},
        "push": {"enabled": False, "quiet_hours": [22, 7]},
    },
    "editor": {
        "theme": "solarized-dark",
        "font": {"family": "JetBrains Mono", "size": 13.5},
        "rulers": [80, 100],
    },
    "privacy": {"share_usage": False, "allow_list": [{"domain": "example.com", "scopes": ["read", "write"]}]},
}

# --------------------------------------------------------------------------- expected helpers


def C(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": arguments or {}}


def BAD(name: str, text: str) -> dict[str, Any]:
    return {"name": name, "invalid_arguments": text}


class Span:
    """A rendered call region of the output, with the calls it holds."""

    def __init__(self, text: str, *calls: dict[str, Any]) -> None:
        self.text = text
        self.calls = list(calls)

    def __add__(self, other: Span) -> Span:
        return Span(self.text + other.text, *self.calls, *other.calls)


def build(*segments: str | Span) -> tuple[str, str | None, list[dict[str, Any]]]:
    """Output, expected content and expected calls from text segments and call spans."""
    out: list[str] = []
    content: list[str] = []
    calls: list[dict[str, Any]] = []
    has_call = any(isinstance(s, Span) for s in segments)
    for seg in segments:
        if isinstance(seg, Span):
            out.append(seg.text)
            calls.extend(seg.calls)
        else:
            out.append(seg)
            if seg.strip() or not has_call:
                content.append(seg)
    text = "".join(content).strip()
    return "".join(out), (text or None), calls


def J(obj: Any, ascii_only: bool = False) -> str:
    return json.dumps(obj, ensure_ascii=ascii_only)


CASES: list[dict[str, Any]] = []


def add(
    family: str,
    slug: str,
    built: tuple[str, str | None, list[dict[str, Any]]],
    tool_names: tuple[str, ...] | None = DEFAULT,
    tags: list[str] | None = None,
    *,
    kind: str = "tool",
    reasoning: str | None = None,
    reasoning_family: str | None = None,
    started: bool = False,
    notes: str = "",
    content: Any = ...,
    calls: Any = ...,
    divergences: list[dict[str, Any]] | None = None,
) -> None:
    output, exp_content, exp_calls = built
    if content is not ...:
        exp_content = content
    if calls is not ...:
        exp_calls = calls
    rec: dict[str, Any] = {
        "id": f"{family}-{slug}",
        "family": family,
        "kind": kind,
        "reasoning_family": reasoning_family,
        "output": output,
        "tools": tools(*tool_names) if (tool_names and kind == "tool") else [],
        "reasoning_started_in_prompt": started,
        "expected": {"reasoning": reasoning, "content": exp_content, "tool_calls": exp_calls},
        "tags": tags or [],
    }
    if divergences:
        rec["known_divergences"] = divergences
    if notes:
        rec["notes"] = notes
    CASES.append(rec)


def R(
    family: str,
    slug: str,
    output: str,
    reasoning: str | None,
    content: str | None,
    tags: list[str],
    *,
    started: bool = False,
    notes: str = "",
) -> None:
    """A reasoning-kind transcript."""
    add(
        family,
        f"reasoning-{slug}",
        (output, content, []),
        None,
        tags,
        kind="reasoning",
        reasoning=reasoning,
        started=started,
        notes=notes,
    )


# =========================================================================== TOOL FAMILIES

# --------------------------------------------------------------------------- hermes
# <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>   (Hermes 2 Pro, Qwen2.5, Qwen3)


def hermes(name: str, args: dict[str, Any], *, raw: str | None = None, ascii_only: bool = False) -> Span:
    if raw is not None:
        return Span(f"{fmt_hermes.START}\n{raw}\n{fmt_hermes.END}", C(name, args))
    return Span(fmt_hermes.render_call(name, args, ascii_only=ascii_only), C(name, args))


F = "hermes"
add(
    F,
    "single",
    build(hermes("get_weather", {"location": "Paris, France", "unit": "celsius"})),
    tags=["single"],
)
add(
    F,
    "content-before",
    build(
        "Let me check the current conditions in Lisbon for you.\n\n",
        hermes("get_weather", {"location": "Lisbon, Portugal", "days": 3}),
    ),
    tags=["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        hermes("get_weather", {"location": "Tokyo, Japan"}),
        "\n",
        hermes("get_time", {"timezone": "Asia/Tokyo"}),
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-between-after",
    build(
        "First I'll look up the weather.\n",
        hermes("get_weather", {"location": "Oslo, Norway", "unit": "celsius"}),
        "\nThen I'll search for indoor activities in case it rains.\n",
        hermes("search_web", {"query": "indoor activities Oslo", "max_results": 5}),
        "\nI'll summarise both results once they come back.",
    ),
    tags=["multi-call", "content-before", "content-between", "content-after"],
)
add(F, "no-call", build("The Eiffel Tower is 330 metres tall, including its antennas."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(
        hermes(
            "send_email",
            {
                "to": ["yuki@example.jp"],
                "subject": "明日の会議 📅",
                "body": "山田さん、\n明日の会議は10時からです。☕️ よろしくお願いします 🙏",
            },
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "unicode-escaped",
    build(
        hermes(
            "translate_text",
            {"text": "Crème brûlée à São Paulo — ça coûte 12 €", "target_language": "de"},
            ascii_only=True,
        )
    ),
    ("translate_text",),
    ["single", "unicode"],
    notes="Non-ASCII characters written as \\uXXXX escapes inside the JSON; arguments decode them.",
)
add(
    F,
    "escaped-quotes",
    build(
        hermes(
            "write_file",
            {
                "path": "C:\\Users\\ana\\notes.txt",
                "content": 'She said "it\'s fine" and left.\nTab:\there, backslash: \\ done.',
            },
        )
    ),
    ("write_file",),
    ["single", "escaped-quotes"],
)
add(
    F,
    "nested",
    build(
        hermes(
            "create_ticket",
            {
                "title": "Checkout fails for EU customers",
                "priority": 1,
                "labels": ["bug", "payments"],
                "metadata": NESTED_METADATA,
            },
        )
    ),
    ("create_ticket",),
    ["single", "nested"],
)
add(
    F,
    "large-args",
    build(
        "I'll write the generated handlers to disk.\n",
        hermes("write_file", {"path": "src/handlers.py", "content": LARGE_FILE, "overwrite": True}),
    ),
    ("write_file",),
    ["single", "large-args", "content-before"],
)
add(F, "empty-args", build(hermes("list_files", {})), ("list_files", "get_time"), ["single", "empty-args"])
add(
    F,
    "truncated-args",
    build(
        "Searching now.\n",
        Span(
            '<tool_call>\n{"name": "search_web", "arguments": {"query": "best hiking trails in Pata',
            BAD("search_web", '{"query": "best hiking trails in Pata'),
        ),
    ),
    tags=["truncated", "content-before"],
    notes="Generation stopped (max_tokens) inside the arguments: the name is known, so the call is kept with the "
    "verbatim partial arguments flagged as invalid (policy rule 4).",
)
add(
    F,
    "truncated-complete-args",
    build(
        Span(
            '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}',
            C("get_time", {"timezone": "UTC"}),
        )
    ),
    tags=["truncated", "single"],
    notes="The closing </tool_call> never came, but the body is already a complete JSON object: call kept as is.",
)
add(
    F,
    "truncated-before-name",
    build('Sure, one moment.\n<tool_call>\n{"na'),
    tags=["truncated"],
    notes="Cut off before the name is known: the text from the start marker on stays in content (rule 4).",
)
add(
    F,
    "malformed-body",
    build('I\'ll call the tool.\n<tool_call>\nget_weather(location="Oslo")\n</tool_call>'),
    tags=["malformed"],
    notes="The body is not JSON, so no name can be recovered: the whole span, markers included, is content (rule 2).",
)
add(
    F,
    "malformed-args-list",
    build(
        Span(
            '<tool_call>\n{"name": "search_web", "arguments": ["rust", "async"]}\n</tool_call>',
            BAD("search_web", '["rust", "async"]'),
        )
    ),
    tags=["malformed"],
    notes="Named call whose arguments are a JSON list, not an object: kept with invalid_arguments (rule 3).",
)
add(
    F,
    "unknown-tool",
    build("Let me look that up.\n", hermes("get_horoscope", {"sign": "leo", "day": "today"})),
    tags=["unknown-tool", "content-before", "single"],
    notes="get_horoscope is not in the request's tools; the call is still reported (rule 5).",
)
add(
    F,
    "marker-in-string",
    build(
        hermes(
            "write_file",
            {
                "path": "docs/format.md",
                "content": "Wrap each call as <tool_call>{...}</tool_call> on its own line.",
            },
        )
    ),
    ("write_file",),
    ["single", "marker-in-string"],
    notes="The end marker appears inside a JSON string; it must not end the call (rule 6).",
)
add(
    F,
    "whitespace",
    build("\n\n  ", hermes("get_time", {"timezone": "America/New_York"}), "  \n\n"),
    tags=["single", "whitespace"],
)
add(
    F,
    "qwen3-reasoning-then-call",
    build(
        "<think>\nThe user wants the weather in Berlin tomorrow. I should call get_weather with days=2.\n</think>\n\n",
        hermes("get_weather", {"location": "Berlin, Germany", "days": 2}),
    ),
    tags=["reasoning-then-tools", "single"],
    reasoning_family="qwen3",
    reasoning="The user wants the weather in Berlin tomorrow. I should call get_weather with days=2.",
    content=None,
)
add(
    F,
    "qwen3-prompt-started-reasoning",
    build(
        "Two lookups are needed: the weather and the local time.\n</think>\n\nI'll fetch both.\n",
        hermes("get_weather", {"location": "Sydney, Australia"}),
        "\n",
        hermes("get_time", {"timezone": "Australia/Sydney"}),
    ),
    tags=["reasoning-then-tools", "reasoning-no-start-tag", "parallel", "multi-call", "content-before"],
    reasoning_family="qwen3",
    started=True,
    reasoning="Two lookups are needed: the weather and the local time.",
    content="I'll fetch both.",
    notes="The chat template ended the prompt with <think>; the output holds only the closing </think>.",
)
add(F, "empty-output", ("", None, []), tags=["empty-output"])

# --------------------------------------------------------------------------- llama3_json
# {"name": ..., "parameters": {...}}   optionally after <|python_tag|>; several joined with "; "


def llama(name: str, args: dict[str, Any], key: str = "parameters", ascii_only: bool = False) -> Span:
    return Span(fmt_llama.render_call(name, args, key=key, ascii_only=ascii_only), C(name, args))


F = "llama3_json"
add(
    F,
    "single",
    build(llama("get_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"})),
    tags=["single"],
)
add(
    F,
    "python-tag",
    build(Span("<|python_tag|>") + llama("get_time", {"timezone": "Europe/Madrid"})),
    tags=["single"],
    notes="Llama 3.1 may prefix the JSON with the <|python_tag|> special token.",
)
add(
    F,
    "parallel-semicolon",
    build(
        llama("get_weather", {"location": "Rome, Italy"})
        + Span("; ")
        + llama("get_time", {"timezone": "Europe/Rome"})
    ),
    tags=["parallel", "multi-call"],
    notes="Several calls in one output are separated by '; '.",
)
add(
    F,
    "arguments-key",
    build(llama("search_web", {"query": "llama 3.2 context length", "max_results": 3}, key="arguments")),
    tags=["single"],
    notes="Some fine-tunes emit 'arguments' instead of 'parameters'; both mean the same.",
)
add(F, "no-call", build("I can't browse the web, but Mount Everest is 8,849 metres high."), tags=["no-call"])
add(
    F,
    "json-answer-not-call",
    build('{"answer": 42, "confidence": 0.93}'),
    tags=["no-call", "malformed"],
    notes="A JSON object without a string 'name' is a plain JSON answer, not a call: it stays content (rule 2).",
)
add(
    F,
    "unicode-emoji",
    build(llama("translate_text", {"text": "Привет, мир! 👋🌍", "target_language": "ja"})),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "escaped-quotes",
    build(
        llama(
            "run_sql",
            {
                "query": "SELECT * FROM users WHERE name = \"O'Brien\" AND path LIKE 'C:\\\\tmp%'",
                "params": [],
                "timeout_s": 2.5,
            },
        )
    ),
    ("run_sql",),
    ["single", "escaped-quotes"],
)
add(
    F,
    "nested",
    build(llama("update_settings", {"settings": NESTED_SETTINGS})),
    ("update_settings",),
    ["single", "nested"],
)
add(
    F,
    "large-args",
    build(llama("write_file", {"path": "lambda/handlers.py", "content": LARGE_FILE})),
    ("write_file",),
    ["single", "large-args"],
)
add(F, "empty-args", build(llama("list_files", {})), ("list_files",), ["single", "empty-args"])
add(
    F,
    "truncated-args",
    build(
        Span(
            '{"name": "book_flight", "parameters": {"origin": "LHR", "destination": "JF',
            BAD("book_flight", '{"origin": "LHR", "destination": "JF'),
        )
    ),
    ("book_flight",),
    ["truncated"],
    notes="max_tokens hit inside the parameters; name known (rule 4).",
)
add(
    F,
    "malformed-args-list",
    build(
        Span(
            '{"name": "calculate", "parameters": ["2 * (3 + 4)", 2]}', BAD("calculate", '["2 * (3 + 4)", 2]')
        )
    ),
    ("calculate",),
    ["malformed"],
    notes="Parameters given positionally as a list: kept, flagged (rule 3).",
)
add(
    F,
    "unknown-tool",
    build(llama("get_exchange_rate", {"base": "USD", "quote": "EUR"})),
    tags=["unknown-tool", "single"],
)
add(
    F,
    "whitespace",
    build("\n\n", llama("get_time", {"timezone": "Asia/Kolkata"}), "\n"),
    tags=["single", "whitespace"],
)
add(F, "empty-output", ("", None, []), tags=["empty-output"])

# --------------------------------------------------------------------------- mistral
# [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]    (pre-v11 tokenizers, e.g. Mistral-7B-Instruct-v0.3;
# the space comes from decoding the special token; v11+ tokenizers write [TOOL_CALLS]name[ARGS]{...})


def mistral(*calls: tuple[str, dict[str, Any]], sep: str = " ") -> Span:
    return Span(fmt_mistral.render(calls, sep=sep), *(C(n, a) for n, a in calls))


F = "mistral"
add(
    F,
    "single",
    build(mistral(("get_weather", {"location": "Marseille, France", "unit": "celsius"}))),
    tags=["single"],
)
add(
    F,
    "parallel-two",
    build(mistral(("get_weather", {"location": "Nice, France"}), ("get_time", {"timezone": "Europe/Paris"}))),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-before",
    build("I'll search for that.", mistral(("search_web", {"query": "Mistral Small 3.1 release date"}))),
    tags=["single", "content-before"],
)
add(
    F, "no-call", build("Bonjour ! Je peux vous aider à planifier votre voyage."), tags=["no-call", "unicode"]
)
add(
    F,
    "unicode-emoji",
    build(
        mistral(
            (
                "send_email",
                {
                    "to": ["søren@example.dk"],
                    "subject": "Kaffe ☕ i morgen?",
                    "body": "Hej Søren! Skal vi mødes kl. 9? 😊",
                },
            )
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "escaped-quotes",
    build(mistral(("write_file", {"path": "quote.txt", "content": '"Stay hungry, stay foolish." \\ Steve'}))),
    ("write_file",),
    ["single", "escaped-quotes"],
)
add(
    F,
    "nested",
    build(
        mistral(
            (
                "create_ticket",
                {"title": "Worker OOM", "priority": 2, "labels": ["infra"], "metadata": NESTED_METADATA},
            )
        )
    ),
    ("create_ticket",),
    ["single", "nested"],
)
add(
    F,
    "large-args",
    build(mistral(("write_file", {"path": "handlers.py", "content": LARGE_FILE}))),
    ("write_file",),
    ["single", "large-args"],
)
add(F, "empty-args", build(mistral(("list_files", {}))), ("list_files",), ["single", "empty-args"])
add(
    F,
    "truncated-args",
    build(
        Span(
            '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"location": "Bord',
            BAD("get_weather", '{"location": "Bord'),
        )
    ),
    tags=["truncated"],
    notes="Stopped inside the arguments of a named call (rule 4).",
)
add(
    F,
    "malformed-args-list",
    build(
        Span(
            '[TOOL_CALLS] [{"name": "search_web", "arguments": ["vllm", "sglang"]}]',
            BAD("search_web", '["vllm", "sglang"]'),
        )
    ),
    tags=["malformed"],
    notes="Arguments are a list, not an object (rule 3).",
)
add(
    F,
    "unknown-tool",
    build(mistral(("play_music", {"artist": "Daft Punk", "shuffle": True}))),
    tags=["unknown-tool", "single"],
)
add(
    F,
    "whitespace",
    build("\n", mistral(("get_time", {"timezone": "Europe/Berlin"}), sep="\n"), "\n\n"),
    tags=["single", "whitespace"],
    notes="Newlines around the call and between [TOOL_CALLS] and the array.",
)
add(
    F,
    "no-space",
    build(mistral(("get_stock_price", {"symbol": "MSFT"}), sep="")),
    ("get_stock_price",),
    ["single"],
    notes="[TOOL_CALLS] directly followed by the array (decoders that do not insert a space after the special token).",
)
add(
    F,
    "v11-args-format",
    build(
        Span(
            '[TOOL_CALLS]get_weather[ARGS]{"location": "Lyon, France"}',
            C("get_weather", {"location": "Lyon, France"}),
        )
    ),
    tags=["single"],
    notes="Mistral tokenizer v11+ (e.g. Mistral Small 3.2, Magistral) writes name[ARGS]{json} instead of a JSON array.",
)

# --------------------------------------------------------------------------- pythonic
# [func(a="x", b=1), other()]     (Llama 3.2 / Llama 4 pythonic)


py_lit = fmt_pythonic.literal
pycall = fmt_pythonic.render_call


def pythonic(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_pythonic.render(calls), *(C(n, a) for n, a in calls))


F = "pythonic"
add(
    F,
    "single",
    build(pythonic(("get_weather", {"location": "Austin, TX", "unit": "fahrenheit"}))),
    tags=["single"],
)
add(
    F,
    "parallel-two",
    build(
        pythonic(("get_weather", {"location": "Denver, CO"}), ("get_time", {"timezone": "America/Denver"}))
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "typed-args",
    build(
        pythonic(
            (
                "book_flight",
                {
                    "origin": "SFO",
                    "destination": "NRT",
                    "date": "2026-03-14",
                    "passengers": 2,
                    "cabin": "business",
                    "max_price": 3499.5,
                    "flexible": False,
                },
            )
        )
    ),
    ("book_flight",),
    ["single"],
    notes="Integers, floats and Python booleans become JSON numbers/booleans.",
)
add(F, "no-call", build("Sure — the square root of 144 is 12."), tags=["no-call"])
add(
    F,
    "list-not-calls",
    build("[1, 2, 3, 5, 8] are the first Fibonacci numbers after 1."),
    tags=["no-call"],
    notes="Starts with '[' but is prose, not a list of calls: all content.",
)
add(
    F,
    "unicode-emoji",
    build(pythonic(("translate_text", {"text": "¿Dónde está la estación? 🚉", "target_language": "zh"}))),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "escaped-quotes",
    build(pythonic(("write_file", {"path": "say.sh", "content": 'echo "hi" > C:\\\\tmp\\\\out.txt'}))),
    ("write_file",),
    ["single", "escaped-quotes"],
)
add(
    F,
    "nested",
    build(
        pythonic(
            (
                "create_ticket",
                {
                    "title": "Flaky worker",
                    "priority": 3,
                    "labels": ["ci", "flaky"],
                    "metadata": NESTED_METADATA,
                },
            )
        )
    ),
    ("create_ticket",),
    ["single", "nested"],
    notes="Dict/list literals with True/False/None inside.",
)
add(
    F,
    "large-args",
    build(pythonic(("write_file", {"path": "handlers.py", "content": LARGE_FILE}))),
    ("write_file",),
    ["single", "large-args"],
)
add(
    F,
    "empty-args",
    build(pythonic(("list_files", {}), ("get_time", {"timezone": "UTC"}))),
    ("list_files", "get_time"),
    ["parallel", "multi-call", "empty-args"],
)
add(
    F,
    "truncated-before-name",
    build("[get_wea"),
    tags=["truncated"],
    notes="Cut off inside the function name: no call can be recovered, the text stays content.",
)
add(
    F,
    "unknown-tool",
    build(pythonic(("set_alarm", {"time": "07:30", "repeat": ["mon", "fri"]}))),
    tags=["unknown-tool", "single"],
)
add(
    F,
    "whitespace",
    build("  \n", pythonic(("get_time", {"timezone": "Pacific/Auckland"})), "\n"),
    tags=["single", "whitespace"],
)
add(F, "empty-output", ("", None, []), tags=["empty-output"])

# --------------------------------------------------------------------------- deepseek_v3
# <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>

DS_CALLS_BEGIN, DS_CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL_BEGIN, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


dsv3_call = fmt_dsv3.render_call


def dsv3(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_dsv3.render(calls), *(C(n, a) for n, a in calls))


F = "deepseek_v3"
add(
    F,
    "single",
    build(dsv3(("get_weather", {"location": "Hangzhou, China", "unit": "celsius"}))),
    tags=["single"],
)
add(
    F,
    "content-before",
    build(
        "I'll look up the latest price.\n\n",
        dsv3(("get_stock_price", {"symbol": "NVDA", "exchange": "XNAS"})),
    ),
    ("get_stock_price",),
    ["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        dsv3(("get_weather", {"location": "Shenzhen, China"}), ("get_time", {"timezone": "Asia/Shanghai"}))
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "no-call",
    build("DeepSeek-V3 is a mixture-of-experts model with 671B total parameters."),
    tags=["no-call"],
)
add(
    F,
    "unicode-emoji",
    build(
        dsv3(
            (
                "send_email",
                {
                    "to": ["li.wei@example.cn"],
                    "subject": "周报 📊",
                    "body": "李伟你好，本周进展顺利 ✅，下周继续。",
                },
            )
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "escaped-quotes",
    build(
        dsv3(
            (
                "run_sql",
                {"query": 'SELECT note FROM logs WHERE msg = "disk \\"full\\""', "params": ["2026-01-01"]},
            )
        )
    ),
    ("run_sql",),
    ["single", "escaped-quotes"],
)
add(
    F,
    "nested",
    build(dsv3(("update_settings", {"settings": NESTED_SETTINGS}))),
    ("update_settings",),
    ["single", "nested"],
)
add(
    F,
    "large-args",
    build(dsv3(("write_file", {"path": "handlers.py", "content": LARGE_FILE, "overwrite": False}))),
    ("write_file",),
    ["single", "large-args"],
)
add(F, "empty-args", build(dsv3(("list_files", {}))), ("list_files",), ["single", "empty-args"])
add(
    F,
    "truncated-args",
    build(
        "Let me check.",
        Span(
            f'{DS_CALLS_BEGIN}{DS_CALL_BEGIN}function{DS_SEP}get_weather\n```json\n{{"location": "Chengd',
            BAD("get_weather", '{"location": "Chengd'),
        ),
    ),
    tags=["truncated", "content-before"],
    notes="Stopped inside the JSON arguments of a named call (rule 4).",
)
add(
    F,
    "truncated-before-name",
    build("Let me check.", f"{DS_CALLS_BEGIN}{DS_CALL_BEGIN}function{DS_SEP}get_wea"),
    tags=["truncated", "content-before"],
    notes="Stopped inside the function name (the name ends at the newline): text from the start marker is content.",
)
add(
    F,
    "malformed-args",
    build(
        Span(
            f"{DS_CALLS_BEGIN}{dsv3_call('get_weather', {}, raw='{location: Wuhan}')}{DS_CALLS_END}",
            BAD("get_weather", "{location: Wuhan}"),
        )
    ),
    tags=["malformed"],
    notes="Arguments are not valid JSON (unquoted key/value): kept, flagged (rule 3).",
)
add(
    F,
    "unknown-tool",
    build(dsv3(("get_traffic", {"city": "Beijing", "road": "Ring 3"}))),
    tags=["unknown-tool", "single"],
)
add(
    F,
    "r1-reasoning-then-call",
    build(
        "The user asks for Tokyo's weather; I have a get_weather tool, so I'll call it with celsius.\n</think>\n\n",
        dsv3(("get_weather", {"location": "Tokyo, Japan", "unit": "celsius"})),
    ),
    tags=["reasoning-then-tools", "reasoning-no-start-tag", "single"],
    reasoning_family="deepseek_r1",
    reasoning="The user asks for Tokyo's weather; I have a get_weather tool, so I'll call it with celsius.",
    content=None,
    notes="DeepSeek-R1 style: reasoning from the first token, closed by </think>, then the call block.",
)

# --------------------------------------------------------------------------- qwen3_coder / qwen3_xml
# <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>


xml_val = xml_value


def qcoder(name: str, args: dict[str, Any]) -> Span:
    return Span(fmt_qcoder.render_call(name, args), C(name, args))


F = "qwen3_coder"
add(F, "single", build(qcoder("get_weather", {"location": "Chengdu, China"})), tags=["single"])
add(
    F,
    "typed-params",
    build(
        qcoder(
            "book_flight",
            {
                "origin": "PEK",
                "destination": "CDG",
                "date": "2026-05-01",
                "passengers": 3,
                "max_price": 899.99,
                "flexible": True,
            },
        )
    ),
    ("book_flight",),
    ["single"],
    notes="Parameter values are converted with the tool schema (integer, number, boolean).",
)
add(
    F,
    "content-before",
    build(
        "I'll search the docs first.\n",
        qcoder("search_web", {"query": "python asyncio TaskGroup", "max_results": 4}),
    ),
    tags=["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        qcoder("get_weather", {"location": "Guangzhou, China"}),
        "\n",
        qcoder("get_time", {"timezone": "Asia/Shanghai"}),
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-between",
    build(
        "Checking the weather.\n",
        qcoder("get_weather", {"location": "Xi'an, China"}),
        "\nAnd the local time.\n",
        qcoder("get_time", {"timezone": "Asia/Shanghai"}),
    ),
    tags=["multi-call", "content-before", "content-between"],
)
add(
    F,
    "content-after",
    build(qcoder("get_stock_price", {"symbol": "AAPL"}), "\nI'll report the price as soon as it arrives."),
    ("get_stock_price",),
    ["single", "content-after"],
)
add(
    F,
    "no-call",
    build("You can reverse a list in Python with `items[::-1]` or `items.reverse()`."),
    tags=["no-call"],
)
add(
    F,
    "unicode-emoji",
    build(
        qcoder(
            "send_email",
            {
                "to": ["hana@example.kr"],
                "subject": "회의 일정 🗓️",
                "body": "안녕하세요! 내일 오후 3시에 뵙겠습니다 😊",
            },
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "code-with-quotes",
    build(
        qcoder(
            "write_file",
            {
                "path": "hello.py",
                "content": 'import sys\nprint("hello, \\"world\\"")\nsys.stdout.write(\'tab:\\t done\\n\')',
            },
        )
    ),
    ("write_file",),
    ["single", "escaped-quotes"],
    notes="String parameters are raw text (no JSON escaping): quotes and backslashes are taken verbatim; the newline "
    "right after <parameter=...> and right before </parameter> belongs to the format.",
)
add(
    F,
    "nested-object",
    build(
        qcoder(
            "create_ticket",
            {
                "title": "Broken invoice export",
                "priority": 2,
                "labels": ["bug", "export"],
                "metadata": NESTED_METADATA,
            },
        )
    ),
    ("create_ticket",),
    ["single", "nested"],
    notes="Object/array parameters are JSON text, parsed by schema type.",
)
add(
    F,
    "large-args",
    build(qcoder("write_file", {"path": "handlers.py", "content": LARGE_FILE})),
    ("write_file",),
    ["single", "large-args"],
)
add(
    F,
    "empty-args",
    build(Span("<tool_call>\n<function=list_files>\n</function>\n</tool_call>", C("list_files", {}))),
    ("list_files",),
    ["single", "empty-args"],
)
add(
    F,
    "truncated-before-name",
    build("Let me run that.\n<tool_call>\n<function=get_wea"),
    tags=["truncated", "content-before"],
    notes="Cut off inside the function name: the text from <tool_call> on is content (rule 4).",
)
add(
    F,
    "malformed-no-function",
    build("<tool_call>\n<parameter=location>\nHarbin\n</parameter>\n</tool_call>"),
    tags=["malformed"],
    notes="No <function=...> in the block: no name to recover, the span stays content (rule 2).",
)
add(
    F,
    "unknown-tool",
    build(qcoder("lookup_postcode", {"postcode": "SW1A 1AA", "country": "United Kingdom"})),
    tags=["unknown-tool", "single"],
    notes="A tool not in the request: values are kept as strings (no schema to convert them with).",
)
add(
    F,
    "qwen3-reasoning-then-call",
    build(
        "<think>\nI need the current time in Tokyo.\n</think>\n\n",
        qcoder("get_time", {"timezone": "Asia/Tokyo"}),
    ),
    tags=["reasoning-then-tools", "single"],
    reasoning_family="qwen3",
    reasoning="I need the current time in Tokyo.",
    content=None,
)

F = "qwen3_xml"
add(
    F,
    "single",
    build(qcoder("get_weather", {"location": "Kunming, China", "unit": "celsius"})),
    tags=["single"],
)
add(
    F,
    "typed-params",
    build(qcoder("search_web", {"query": "qwen3 xml tool format", "max_results": 10, "safe_search": False})),
    tags=["single"],
)
add(
    F,
    "content-before",
    build("Let me check.\n\n", qcoder("get_time", {"timezone": "Asia/Singapore"})),
    tags=["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        qcoder("get_weather", {"location": "Nanjing, China"}),
        "\n",
        qcoder("get_weather", {"location": "Suzhou, China"}),
    ),
    tags=["parallel", "multi-call"],
)
add(F, "no-call", build("Qwen3 supports a 32K native context window."), tags=["no-call"])
add(
    F,
    "unicode-nested",
    build(
        qcoder(
            "update_settings",
            {
                "settings": {
                    "locale": "zh-CN",
                    "greeting": "你好 👋",
                    "layout": {"sidebar": ["收藏", "最近"], "dense": True},
                }
            },
        )
    ),
    ("update_settings",),
    ["single", "unicode", "emoji", "nested"],
)

# --------------------------------------------------------------------------- deepseek_v31
# <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>


def dsv31(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_dsv3.render_v31(calls), *(C(n, a) for n, a in calls))


F = "deepseek_v31"
add(F, "single", build(dsv31(("get_weather", {"location": "Seoul, South Korea"}))), tags=["single"])
add(
    F,
    "content-before",
    build(
        "Let me search for that.",
        dsv31(("search_web", {"query": "DeepSeek V3.1 hybrid thinking", "max_results": 3})),
    ),
    tags=["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        dsv31(("get_weather", {"location": "Busan, South Korea"}), ("get_time", {"timezone": "Asia/Seoul"}))
    ),
    tags=["parallel", "multi-call"],
)
add(F, "no-call", build("The answer is 1,024 bytes, i.e. one kibibyte."), tags=["no-call"])
add(
    F,
    "unicode-nested",
    build(
        dsv31(
            (
                "create_ticket",
                {
                    "title": "Échec de paiement — client 🇫🇷",
                    "priority": 1,
                    "labels": ["paiement"],
                    "metadata": NESTED_METADATA,
                },
            )
        )
    ),
    ("create_ticket",),
    ["single", "unicode", "emoji", "nested"],
)
add(
    F,
    "thinking-then-call",
    build(
        "Need the weather in Taipei; call the tool.</think>I'll check now.",
        dsv31(("get_weather", {"location": "Taipei"})),
    ),
    tags=["reasoning-then-tools", "reasoning-no-start-tag", "content-before", "single"],
    reasoning_family="deepseek_r1",
    started=True,
    reasoning="Need the weather in Taipei; call the tool.",
    content="I'll check now.",
    notes="DeepSeek-V3.1 thinking mode: the template ends the prompt with <think>.",
)

# --------------------------------------------------------------------------- kimi_k2
# <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>


def kimi(*calls: tuple[str, dict[str, Any]], start: int = 0) -> Span:
    return Span(fmt_kimi.render(calls, start=start), *(C(n, a) for n, a in calls))


F = "kimi_k2"
add(F, "single", build(kimi(("get_weather", {"location": "Beijing, China"}))), tags=["single"])
add(
    F,
    "content-before",
    build("I'll look that up for you.", kimi(("search_web", {"query": "Kimi K2 release", "max_results": 5}))),
    tags=["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        kimi(("get_weather", {"location": "Shanghai, China"}), ("get_time", {"timezone": "Asia/Shanghai"}))
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "no-call",
    build("Moonshot's Kimi K2 is a 1T-parameter MoE model with 32B activated parameters."),
    tags=["no-call"],
)
add(
    F,
    "unicode-emoji",
    build(kimi(("translate_text", {"text": "今日は良い天気ですね ☀️", "target_language": "en"}))),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "large-args",
    build(kimi(("write_file", {"path": "handlers.py", "content": LARGE_FILE}))),
    ("write_file",),
    ["single", "large-args"],
)
add(
    F,
    "reasoning-then-call",
    build(
        "<think>The user wants Hangzhou weather; one call is enough.</think>",
        kimi(("get_weather", {"location": "Hangzhou, China", "days": 1})),
    ),
    tags=["reasoning-then-tools", "single"],
    reasoning_family="kimi_k2",
    reasoning="The user wants Hangzhou weather; one call is enough.",
    content=None,
)

# --------------------------------------------------------------------------- glm45
# <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>


def glm(name: str, args: dict[str, Any]) -> Span:
    return Span(fmt_glm.render_call(name, args), C(name, args))


F = "glm45"
add(
    F,
    "single",
    build(glm("get_weather", {"location": "北京", "unit": "celsius"})),
    tags=["single", "unicode"],
)
add(
    F,
    "content-before",
    build("好的，我来查一下。\n", glm("search_web", {"query": "GLM-4.5 发布 日期", "max_results": 3})),
    tags=["single", "content-before", "unicode"],
)
add(
    F,
    "parallel-two",
    build(glm("get_weather", {"location": "Shanghai"}), "\n", glm("get_time", {"timezone": "Asia/Shanghai"})),
    tags=["parallel", "multi-call"],
)
add(F, "no-call", build("GLM-4.5 has 355B total parameters and 32B active parameters."), tags=["no-call"])
add(
    F,
    "typed-args",
    build(
        glm(
            "book_flight",
            {
                "origin": "PVG",
                "destination": "SIN",
                "date": "2026-07-09",
                "passengers": 1,
                "cabin": "economy",
                "flexible": True,
                "max_price": 420.0,
            },
        )
    ),
    ("book_flight",),
    ["single"],
    notes="arg_value text converted with the schema (integer, boolean, number).",
)
add(
    F,
    "nested-array",
    build(
        glm(
            "send_email",
            {
                "to": ["a@example.com", "b@example.com"],
                "subject": "Q3 review 📈",
                "body": "Slides attached.\nThanks!",
            },
        )
    ),
    ("send_email",),
    ["single", "nested", "emoji"],
)
add(
    F,
    "reasoning-then-call",
    build(
        "\n<think>The user asked for the time in Berlin. I'll call get_time.</think>\n",
        glm("get_time", {"timezone": "Europe/Berlin"}),
    ),
    tags=["reasoning-then-tools", "single", "whitespace"],
    reasoning_family="glm45",
    reasoning="The user asked for the time in Berlin. I'll call get_time.",
    content=None,
)

# --------------------------------------------------------------------------- granite (3.x)
# <|tool_call|>[{"name": ..., "arguments": {...}}, ...]


def granite(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_granite.render(calls), *(C(n, a) for n, a in calls))


F = "granite"
add(
    F,
    "single",
    build(granite(("get_weather", {"location": "Boston, MA", "unit": "fahrenheit"}))),
    tags=["single"],
)
add(
    F,
    "parallel-two",
    build(granite(("get_stock_price", {"symbol": "IBM"}), ("get_stock_price", {"symbol": "RHT"}))),
    ("get_stock_price",),
    ["parallel", "multi-call"],
)
add(F, "no-call", build("Granite models are released under the Apache 2.0 license."), tags=["no-call"])
add(
    F,
    "nested",
    build(
        granite(
            (
                "create_ticket",
                {"title": "Upgrade cluster", "priority": 2, "labels": ["ops"], "metadata": NESTED_METADATA},
            )
        )
    ),
    ("create_ticket",),
    ["single", "nested"],
)
add(
    F,
    "unicode-emoji",
    build(
        granite(
            ("translate_text", {"text": "Grüße aus München! 🍺", "target_language": "it", "formal": True})
        )
    ),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(F, "empty-args", build(granite(("list_files", {}))), ("list_files",), ["single", "empty-args"])

# --------------------------------------------------------------------------- internlm (InternLM2 / 2.5)
# text<|action_start|><|plugin|>\n{"name": ..., "parameters": {...}}<|action_end|>


def internlm(name: str, args: dict[str, Any], key: str = "parameters") -> Span:
    return Span(fmt_internlm.render_call(name, args, key=key), C(name, args))


F = "internlm"
add(F, "single", build(internlm("get_weather", {"location": "Shanghai, China"})), tags=["single"])
add(
    F,
    "content-before",
    build(
        "I need to check the weather first.", internlm("get_weather", {"location": "Wuxi, China", "days": 2})
    ),
    tags=["single", "content-before"],
)
add(F, "no-call", build("InternLM2.5 supports a 1M-token context window."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(
        internlm(
            "send_email",
            {"to": ["wang@example.cn"], "subject": "会议纪要 📝", "body": "王老师您好，附件是会议纪要。"},
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "nested",
    build(internlm("update_settings", {"settings": NESTED_SETTINGS})),
    ("update_settings",),
    ["single", "nested"],
)
add(
    F,
    "arguments-key-empty",
    build("Let me list them.", internlm("list_files", {}, key="arguments")),
    ("list_files",),
    ["single", "empty-args", "content-before"],
    notes="'arguments' is accepted as well as 'parameters'.",
)

# --------------------------------------------------------------------------- xlam
# [{"name": ..., "arguments": {...}}, ...]   (bare, or in a ```json fence)


def xlam(*calls: tuple[str, dict[str, Any]]) -> str:
    return fmt_xlam.render(calls)


F = "xlam"
add(
    F,
    "single",
    build(
        Span(
            xlam(("get_weather", {"location": "New York, NY"})),
            C("get_weather", {"location": "New York, NY"}),
        )
    ),
    tags=["single"],
)
add(
    F,
    "parallel-two",
    build(
        Span(
            xlam(("get_weather", {"location": "Chicago, IL"}), ("get_time", {"timezone": "America/Chicago"})),
            C("get_weather", {"location": "Chicago, IL"}),
            C("get_time", {"timezone": "America/Chicago"}),
        )
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "fenced-content-before",
    build(
        "Here is the call:\n",
        Span(
            "```json\n" + xlam(("search_web", {"query": "xLAM function calling benchmark"})) + "\n```",
            C("search_web", {"query": "xLAM function calling benchmark"}),
        ),
    ),
    tags=["single", "content-before"],
    notes="The array inside a ```json fence; the fence belongs to the call span.",
)
add(F, "no-call", build("I don't have a tool for that, but 1 mile is about 1.609 km."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(
        Span(
            xlam(("translate_text", {"text": "Bon appétit! 🥐", "target_language": "es"})),
            C("translate_text", {"text": "Bon appétit! 🥐", "target_language": "es"}),
        )
    ),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "nested",
    build(
        Span(
            xlam(("update_settings", {"settings": NESTED_SETTINGS})),
            C("update_settings", {"settings": NESTED_SETTINGS}),
        )
    ),
    ("update_settings",),
    ["single", "nested"],
)

# --------------------------------------------------------------------------- step3
# <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N"><steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>


def step3(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_step3.render(calls), *(C(n, a) for n, a in calls))


F = "step3"
add(F, "single", build(step3(("get_weather", {"location": "Suzhou, China"}))), tags=["single"])
add(
    F,
    "content-before",
    build("I'll check the stock price.", step3(("get_stock_price", {"symbol": "BABA", "exchange": "XNYS"}))),
    ("get_stock_price",),
    ["single", "content-before"],
)
add(
    F,
    "parallel-two",
    build(
        step3(("get_weather", {"location": "Qingdao, China"}), ("get_time", {"timezone": "Asia/Shanghai"}))
    ),
    tags=["parallel", "multi-call"],
)
add(F, "no-call", build("Step3 is a multimodal reasoning model from StepFun."), tags=["no-call"])
add(
    F,
    "typed-args",
    build(step3(("search_web", {"query": "StepFun Step3 技术报告", "max_results": 8, "safe_search": True}))),
    tags=["single", "unicode"],
    notes="Non-string parameters are converted with the schema.",
)
add(
    F,
    "reasoning-then-call",
    build(
        "The user needs the local time in Hong Kong.</think>",
        step3(("get_time", {"timezone": "Asia/Hong_Kong"})),
    ),
    tags=["reasoning-then-tools", "reasoning-no-start-tag", "single"],
    reasoning_family="step3",
    reasoning="The user needs the local time in Hong Kong.",
    content=None,
    notes="Step3 starts inside reasoning (no start tag) and closes it with </think>.",
)

# --------------------------------------------------------------------------- minimax_m2
# <minimax:tool_call>\n<invoke name="N">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>


def minimax(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_minimax.render(calls), *(C(n, a) for n, a in calls))


F = "minimax_m2"
add(
    F,
    "single",
    build(minimax(("get_weather", {"location": "Shanghai, China", "unit": "celsius"}))),
    tags=["single"],
)
add(
    F,
    "parallel-invokes",
    build(
        minimax(("get_weather", {"location": "Xiamen, China"}), ("get_time", {"timezone": "Asia/Shanghai"}))
    ),
    tags=["parallel", "multi-call"],
    notes="Several <invoke> elements inside one <minimax:tool_call> block.",
)
add(
    F,
    "content-before",
    build(
        "Let me search for it.\n",
        minimax(("search_web", {"query": "MiniMax M2 agent benchmark", "max_results": 5})),
    ),
    tags=["single", "content-before"],
)
add(
    F,
    "content-around",
    build(
        "Checking the forecast.\n",
        minimax(("get_weather", {"location": "Lhasa, China", "days": 3})),
        "\nThe results will follow.",
    ),
    tags=["single", "content-before", "content-after"],
)
add(F, "no-call", build("MiniMax-M2 is built for coding and agentic workflows."), tags=["no-call"])
add(
    F,
    "typed-args",
    build(
        minimax(
            (
                "book_flight",
                {
                    "origin": "CAN",
                    "destination": "HND",
                    "date": "2026-09-30",
                    "passengers": 2,
                    "flexible": False,
                },
            )
        )
    ),
    ("book_flight",),
    ["single"],
)
add(
    F,
    "large-args",
    build(minimax(("write_file", {"path": "handlers.py", "content": LARGE_FILE.strip()}))),
    ("write_file",),
    ["single", "large-args"],
    notes="Value without surrounding whitespace: whether XML values are stripped is not the point here.",
)
add(
    F,
    "reasoning-then-call",
    build(
        "User wants the weather in Guilin. One call.\n</think>\n\n",
        minimax(("get_weather", {"location": "Guilin, China"})),
    ),
    tags=["reasoning-then-tools", "reasoning-no-start-tag", "single"],
    reasoning_family="minimax_m2",
    started=True,
    reasoning="User wants the weather in Guilin. One call.",
    content=None,
    notes="The MiniMax-M2 chat template ends the prompt with <think>; the output closes it.",
)

# --------------------------------------------------------------------------- gpt_oss (harmony)
# <|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>commentary to=functions.N <|constrain|>json<|message|>{...}<|call|>

H_ANALYSIS = "<|channel|>analysis<|message|>{}<|end|>"
H_NEXT = "<|start|>assistant"


def harmony_call(name: str, args: dict[str, Any]) -> Span:
    return Span(fmt_harmony.render_call(name, args), C(name, args))


F = "gpt_oss"
HARMONY_NOTE = "Harmony is one format for reasoning, content and calls: tool transcripts chain the gpt_oss reasoning parser."
SGLANG_FIRST_MESSAGE_CALL = {
    "backend": "sglang",
    "classes": ["call_missing", "marker_leaked"],
    "chunking": None,
    "reason": "SGLang's gpt-oss tool detector only recognises a call after '<|start|>assistant<|channel|>commentary' "
    "(its bot_token); a call in the output's first message, whose '<|start|>assistant' header was part of "
    "the prompt, is left in the content.",
}


def analysis(text: str) -> Span:
    return Span(fmt_harmony.render_analysis(text))


add(
    F,
    "single",
    build(harmony_call("get_weather", {"location": "Seattle, WA"})),
    tags=["single"],
    reasoning_family="gpt_oss",
    divergences=[SGLANG_FIRST_MESSAGE_CALL],
    notes="Commentary-channel call with no analysis message (the prompt ends with <|start|>assistant). "
    + HARMONY_NOTE,
)
add(
    F,
    "analysis-then-call",
    build(
        analysis("Need current weather for Madrid. Use get_weather."),
        harmony_call("get_weather", {"location": "Madrid, Spain", "unit": "celsius"}),
    ),
    tags=["reasoning-then-tools", "single"],
    reasoning_family="gpt_oss",
    reasoning="Need current weather for Madrid. Use get_weather.",
    content=None,
    notes=HARMONY_NOTE,
)
add(
    F,
    "analysis-then-final",
    build(
        Span(
            H_ANALYSIS.format("Simple arithmetic; no tool needed.") + H_NEXT + "<|channel|>final<|message|>"
        ),
        "12 × 12 = 144.",
    ),
    tags=["no-call", "unicode"],
    reasoning_family="gpt_oss",
    reasoning="Simple arithmetic; no tool needed.",
    content="12 × 12 = 144.",
    notes=HARMONY_NOTE,
)
add(
    F,
    "final-only",
    build(Span("<|channel|>final<|message|>"), "Hello! How can I help you today?"),
    tags=["no-call"],
    content="Hello! How can I help you today?",
    reasoning_family="gpt_oss",
    notes=HARMONY_NOTE,
)
add(
    F,
    "nested",
    build(
        analysis("File a ticket with the environment details the user pasted."),
        harmony_call(
            "create_ticket",
            {"title": "Audit log gaps", "priority": 2, "labels": ["security"], "metadata": NESTED_METADATA},
        ),
    ),
    ("create_ticket",),
    ["single", "nested", "reasoning-then-tools"],
    reasoning_family="gpt_oss",
    reasoning="File a ticket with the environment details the user pasted.",
    content=None,
    notes=HARMONY_NOTE,
)
add(
    F,
    "unicode-emoji",
    build(
        analysis("Send the birthday email in Spanish."),
        harmony_call(
            "send_email",
            {
                "to": ["jose@example.mx"],
                "subject": "¡Feliz cumpleaños! 🎂",
                "body": "¡Que pases un día increíble, José! 🎉",
            },
        ),
    ),
    ("send_email",),
    ["single", "unicode", "emoji", "reasoning-then-tools"],
    reasoning_family="gpt_oss",
    reasoning="Send the birthday email in Spanish.",
    content=None,
    notes=HARMONY_NOTE,
)
add(
    F,
    "empty-args",
    build(analysis("List the workspace files; the tool takes no arguments."), harmony_call("list_files", {})),
    ("list_files",),
    ["single", "empty-args", "reasoning-then-tools"],
    reasoning_family="gpt_oss",
    reasoning="List the workspace files; the tool takes no arguments.",
    content=None,
    notes=HARMONY_NOTE,
)

# --------------------------------------------------------------------------- jamba
# <tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>


def jamba(*calls: tuple[str, dict[str, Any]], tag: str = "tool_calls") -> Span:
    return Span(fmt_jamba.render(calls, tag=tag), *(C(n, a) for n, a in calls))


F = "jamba"
add(F, "single", build(jamba(("get_weather", {"location": "Tel Aviv, Israel"}))), tags=["single"])
add(
    F,
    "parallel-two",
    build(
        jamba(("get_weather", {"location": "Haifa, Israel"}), ("get_time", {"timezone": "Asia/Jerusalem"}))
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-before",
    build("Let me search.", jamba(("search_web", {"query": "Jamba 1.5 hybrid SSM transformer"}))),
    tags=["single", "content-before"],
)
add(F, "no-call", build("Jamba combines Mamba layers with Transformer attention layers."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(jamba(("translate_text", {"text": "שלום עולם 🌍", "target_language": "en"}))),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(
    F,
    "nested",
    build(jamba(("update_settings", {"settings": NESTED_SETTINGS}))),
    ("update_settings",),
    ["single", "nested"],
)

# --------------------------------------------------------------------------- phi4_mini
# functools[{"name": ..., "arguments": {...}}]

F = "phi4_mini"


def phi(*calls: tuple[str, dict[str, Any]]) -> Span:
    return Span(fmt_phi.render(calls), *(C(n, a) for n, a in calls))


add(F, "single", build(phi(("get_weather", {"location": "Redmond, WA"}))), tags=["single"])
add(
    F,
    "parallel-two",
    build(
        phi(("get_weather", {"location": "Vancouver, BC"}), ("get_time", {"timezone": "America/Vancouver"}))
    ),
    tags=["parallel", "multi-call"],
)
add(F, "no-call", build("Phi-4-mini has 3.8 billion parameters."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(phi(("translate_text", {"text": "Καλημέρα! ☀️", "target_language": "fr"}))),
    ("translate_text",),
    ["single", "unicode", "emoji"],
)
add(F, "empty-args", build(phi(("list_files", {}))), ("list_files",), ["single", "empty-args"])
add(
    F,
    "nested-array-args",
    build(
        phi(
            (
                "send_email",
                {
                    "to": ["kim@example.com", "lee@example.com"],
                    "subject": "Standup",
                    "body": "Moved to 10:15.",
                },
            )
        )
    ),
    ("send_email",),
    ["single", "nested"],
    notes="An array inside the arguments: the first ']' is not the end of the call list.",
)

# --------------------------------------------------------------------------- hunyuan_a13b
# <tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>

F = "hunyuan_a13b"
add(F, "single", build(jamba(("get_weather", {"location": "Shenzhen, China"}))), tags=["single"])
add(
    F,
    "parallel-two",
    build(jamba(("get_weather", {"location": "Zhuhai, China"}), ("get_time", {"timezone": "Asia/Shanghai"}))),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-before",
    build("我先查一下天气。", jamba(("get_weather", {"location": "深圳", "unit": "celsius"}))),
    tags=["single", "content-before", "unicode"],
)
add(F, "no-call", build("Hunyuan-A13B activates 13B of its 80B parameters per token."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(
        jamba(
            ("send_email", {"to": ["zhao@example.cn"], "subject": "周末爬山 ⛰️", "body": "周六早上八点集合！"})
        )
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)
add(F, "empty-args", build(jamba(("list_files", {}))), ("list_files",), ["single", "empty-args"])

# --------------------------------------------------------------------------- seed_oss
# <seed:tool_call>\n<function=N>\n<parameter=K>V</parameter>\n</function>\n</seed:tool_call>


def seed(name: str, args: dict[str, Any]) -> Span:
    return Span(fmt_seed.render_call(name, args), C(name, args))


F = "seed_oss"
add(F, "single", build(seed("get_weather", {"location": "Hefei, China"})), tags=["single"])
add(
    F,
    "typed-params",
    build(
        seed("search_web", {"query": "Seed-OSS-36B thinking budget", "max_results": 6, "safe_search": False})
    ),
    tags=["single"],
)
add(
    F,
    "parallel-two",
    build(
        seed("get_weather", {"location": "Dalian, China"}),
        "\n",
        seed("get_time", {"timezone": "Asia/Shanghai"}),
    ),
    tags=["parallel", "multi-call"],
)
add(
    F,
    "content-before",
    build("Let me check that.\n", seed("get_stock_price", {"symbol": "0700.HK"})),
    ("get_stock_price",),
    ["single", "content-before"],
)
add(F, "no-call", build("Seed-OSS-36B was trained with 12T tokens."), tags=["no-call"])
add(
    F,
    "unicode-emoji",
    build(
        seed("send_email", {"to": ["chen@example.cn"], "subject": "生日快乐 🎉", "body": "祝你生日快乐！"})
    ),
    ("send_email",),
    ["single", "unicode", "emoji"],
)

# --------------------------------------------------------------------------- malformed / truncated / unknown tools
# in the framework-only families: the same policy as the builtin one (see the README).

add(
    "deepseek_v31",
    "truncated-args",
    build(
        "Checking.",
        Span(
            f'{DS_CALLS_BEGIN}{DS_CALL_BEGIN}search_web{DS_SEP}{{"query": "deepseek v3.1 tool',
            BAD("search_web", '{"query": "deepseek v3.1 tool'),
        ),
    ),
    tags=["truncated", "content-before"],
    notes="Stopped inside the arguments; the name (before <｜tool▁sep｜>) is known.",
)
add(
    "deepseek_v31",
    "malformed-args",
    build(
        Span(
            f"{DS_CALLS_BEGIN}{DS_CALL_BEGIN}get_weather{DS_SEP}{{city: 'Dalian'}}{DS_CALL_END}{DS_CALLS_END}",
            BAD("get_weather", "{city: 'Dalian'}"),
        )
    ),
    tags=["malformed"],
    notes="Python-ish, not JSON: kept with invalid_arguments.",
)
add(
    "kimi_k2",
    "truncated-args",
    build(
        Span(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.search_web:0<|tool_call_argument_begin|>"
            '{"query": "moonshot kimi k2 tech',
            BAD("search_web", '{"query": "moonshot kimi k2 tech'),
        )
    ),
    tags=["truncated"],
    notes="max_tokens inside the arguments; the name comes from the functions.NAME:IDX id.",
)
add(
    "kimi_k2",
    "unknown-tool",
    build("Let me check.", kimi(("get_air_quality", {"city": "Chengdu", "pollutant": "pm2.5"}))),
    tags=["unknown-tool", "single", "content-before"],
)
add(
    "glm45",
    "unknown-tool",
    build(glm("get_air_quality", {"city": "Chongqing", "pollutant": "ozone"})),
    tags=["unknown-tool", "single"],
    notes="No schema for an unknown tool: values stay strings (chosen so no JSON literal is involved).",
)
add(
    "glm45",
    "truncated-before-name",
    build("我来查询。\n<tool_call>get_wea"),
    tags=["truncated", "unicode"],
    notes="Cut off inside the function name (it ends at the newline): the text from <tool_call> on is content.",
)
add(
    "minimax_m2",
    "unknown-tool",
    build(minimax(("get_air_quality", {"city": "Tianjin", "pollutant": "pm10"}))),
    tags=["unknown-tool", "single"],
)
add(
    "step3",
    "unknown-tool",
    build(step3(("get_air_quality", {"city": "Jinan", "pollutant": "no2"}))),
    tags=["unknown-tool", "single"],
)
add(
    "jamba",
    "malformed-array",
    build(
        "Checking.\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"location": "Eilat, Israel"}</tool_calls>'
    ),
    tags=["malformed", "content-before"],
    notes="The call list is not valid JSON (the closing ']' is missing): no call can be recovered, the span is content.",
)
add(
    "xlam",
    "unknown-tool",
    build(
        Span(
            xlam(("get_air_quality", {"city": "Denver", "pollutant": "ozone"})),
            C("get_air_quality", {"city": "Denver", "pollutant": "ozone"}),
        )
    ),
    tags=["unknown-tool", "single"],
)
add(
    "granite",
    "unknown-tool",
    build(granite(("get_air_quality", {"city": "Raleigh, NC", "pollutant": "pm2.5"}))),
    tags=["unknown-tool", "single"],
)


# =========================================================================== REASONING FAMILIES

F = "deepseek_r1"
R(
    F,
    "no-start-tag",
    "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, total 391.\n</think>\n\n17 × 23 = 391.",
    "The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, total 391.",
    "17 × 23 = 391.",
    ["reasoning-no-start-tag", "unicode"],
)
R(
    F,
    "with-start-tag",
    "<think>\nParis is the capital of France; answer directly.\n</think>\n\nThe capital of France is Paris.",
    "Paris is the capital of France; answer directly.",
    "The capital of France is Paris.",
    [],
    notes="DeepSeek-R1-0528 emits the <think> start tag itself; it is consumed.",
)
R(
    F,
    "unclosed",
    "Let me enumerate the cases. Case 1: n is even, then n² is even. Case 2: n is odd, then",
    "Let me enumerate the cases. Case 1: n is even, then n² is even. Case 2: n is odd, then",
    None,
    ["reasoning-unclosed", "reasoning-no-start-tag", "truncated", "unicode"],
    notes="max_tokens hit while thinking: all reasoning.",
)
R(
    F,
    "unclosed-with-start-tag",
    "<think>\nFirst, recall the definition of a prime number",
    "First, recall the definition of a prime number",
    None,
    ["reasoning-unclosed", "truncated"],
)
R(
    F,
    "prompt-started",
    "The user greets me; respond politely.\n</think>\n\nHello! How can I help?",
    "The user greets me; respond politely.",
    "Hello! How can I help?",
    ["reasoning-no-start-tag"],
    started=True,
    notes="The template ended the prompt with <think>\\n; the output holds only </think>.",
)
R(
    F,
    "empty-reasoning",
    "</think>\n\nSure — here's a haiku:\nOld pond, frog leaps in.",
    None,
    "Sure — here's a haiku:\nOld pond, frog leaps in.",
    ["reasoning-no-start-tag"],
)
R(
    F,
    "unicode-emoji",
    "用户想要一首关于春天的短诗 🌸，我用中文写。\n</think>\n\n春风拂面花自开 🌸",
    "用户想要一首关于春天的短诗 🌸，我用中文写。",
    "春风拂面花自开 🌸",
    ["unicode", "emoji", "reasoning-no-start-tag"],
)
R(
    F,
    "large-reasoning",
    LARGE_REASONING + "\n</think>\n\nThe completed grid is shown above; row 0 starts with 1.",
    LARGE_REASONING,
    "The completed grid is shown above; row 0 starts with 1.",
    ["large-args", "reasoning-no-start-tag"],
)
R(
    F,
    "end-marker-in-answer",
    "Explain the tag.\n</think>\n\nThe model closes its reasoning with the literal text </think>.",
    "Explain the tag.",
    "The model closes its reasoning with the literal text </think>.",
    ["marker-in-string", "reasoning-no-start-tag"],
    notes="Only the first </think> ends reasoning; a later one is answer text.",
)
R(
    F,
    "start-tag-inside-reasoning",
    "<think>\nThe user wrote '<think>' in their question; treat it as text.\n</think>\n\nThat tag marks reasoning.",
    "The user wrote '<think>' in their question; treat it as text.",
    "That tag marks reasoning.",
    ["marker-in-string"],
)
R(
    F,
    "whitespace",
    "\n\n<think>\n\n  Quick check: 2 + 2 = 4.  \n\n</think>\n\n\n4\n\n",
    "Quick check: 2 + 2 = 4.",
    "4",
    ["whitespace"],
)
R(
    F,
    "reasoning-only-closed",
    "Nothing more to add after thinking.\n</think>",
    "Nothing more to add after thinking.",
    None,
    ["reasoning-no-start-tag"],
)
R(F, "empty-output", "", None, None, ["empty-output"])

F = "qwen3"
R(
    F,
    "basic",
    "<think>\nThe user wants a synonym for 'happy'. 'Joyful' fits.\n</think>\n\nA good synonym is \"joyful\".",
    "The user wants a synonym for 'happy'. 'Joyful' fits.",
    'A good synonym is "joyful".',
    ["escaped-quotes"],
)
R(
    F,
    "no-think",
    "Sure! The boiling point of water at sea level is 100 °C.",
    None,
    "Sure! The boiling point of water at sea level is 100 °C.",
    ["unicode"],
    notes="Thinking disabled: no tags at all.",
)
R(
    F,
    "empty-think",
    "<think>\n\n</think>\n\nHere is the answer: 42.",
    None,
    "Here is the answer: 42.",
    ["whitespace"],
    notes="Qwen3 with enable_thinking=false may echo an empty think block.",
)
R(
    F,
    "unclosed",
    "<think>\nLet me work through the integral step by step. Substituting u = x²",
    "Let me work through the integral step by step. Substituting u = x²",
    None,
    ["reasoning-unclosed", "truncated", "unicode"],
)
R(
    F,
    "prompt-started",
    "Short question, short answer.\n</think>\n\nYes.",
    "Short question, short answer.",
    "Yes.",
    ["reasoning-no-start-tag"],
    started=True,
    notes="Chat template ended the prompt with <think>\\n; bare </think> in output.",
)
R(
    F,
    "prompt-started-unclosed",
    "Still considering the trade-offs between the two designs",
    "Still considering the trade-offs between the two designs",
    None,
    ["reasoning-no-start-tag", "reasoning-unclosed", "truncated"],
    started=True,
)
R(
    F,
    "leading-whitespace",
    "\n\n<think>\nA leading newline precedes the tag.\n</think>\n\nDone.",
    "A leading newline precedes the tag.",
    "Done.",
    ["whitespace"],
)
R(
    F,
    "think-tag-mid-content",
    "In Qwen3 outputs, reasoning is wrapped in <think> and </think> tags.",
    None,
    "In Qwen3 outputs, reasoning is wrapped in <think> and </think> tags.",
    ["marker-in-string"],
    notes="The output does not start with <think>: the tags are quoted in the answer, not reasoning.",
)
R(
    F,
    "unicode-emoji",
    "<think>\nユーザーは挨拶している。丁寧に返す 🙂\n</think>\n\nこんにちは！🎌",
    "ユーザーは挨拶している。丁寧に返す 🙂",
    "こんにちは！🎌",
    ["unicode", "emoji"],
)
R(
    F,
    "large-reasoning",
    "<think>\n" + LARGE_REASONING + "\n</think>\n\nSolved.",
    LARGE_REASONING,
    "Solved.",
    ["large-args"],
)
R(
    F,
    "end-marker-in-answer",
    "<think>\nMention the closing tag.\n</think>\n\nReasoning ends at </think>; this is the answer.",
    "Mention the closing tag.",
    "Reasoning ends at </think>; this is the answer.",
    ["marker-in-string"],
)
R(
    F,
    "code-answer",
    "<think>\nWrite a one-liner.\n</think>\n\n```python\nprint(sum(range(10)))\n```",
    "Write a one-liner.",
    "```python\nprint(sum(range(10)))\n```",
    [],
)
R(F, "empty-output", "", None, None, ["empty-output"])

F = "qwen3_thinking"
R(
    F,
    "basic",
    "The user asks for the derivative of x³. It's 3x².\n</think>\n\nThe derivative of x³ is 3x².",
    "The user asks for the derivative of x³. It's 3x².",
    "The derivative of x³ is 3x².",
    ["reasoning-no-start-tag", "unicode"],
    started=True,
    notes="Qwen3-*-Thinking-2507: the template always opens <think> in the prompt.",
)
R(
    F,
    "unclosed",
    "Let me consider every divisor of 360: 1, 2, 3, 4, 5, 6, 8, 9, 10, 12",
    "Let me consider every divisor of 360: 1, 2, 3, 4, 5, 6, 8, 9, 10, 12",
    None,
    ["reasoning-no-start-tag", "reasoning-unclosed", "truncated"],
    started=True,
)
R(
    F,
    "unicode-emoji",
    "L'utilisateur parle français, je réponds en français 🇫🇷.\n</think>\n\nBien sûr, avec plaisir ! 😊",
    "L'utilisateur parle français, je réponds en français 🇫🇷.",
    "Bien sûr, avec plaisir ! 😊",
    ["reasoning-no-start-tag", "unicode", "emoji"],
    started=True,
)
R(F, "empty-reasoning", "</think>\n\nOK.", None, "OK.", ["reasoning-no-start-tag"], started=True)
R(
    F,
    "large-reasoning",
    LARGE_REASONING + "\n</think>\n\nThe puzzle is solved.",
    LARGE_REASONING,
    "The puzzle is solved.",
    ["reasoning-no-start-tag", "large-args"],
    started=True,
)
R(
    F,
    "multiparagraph",
    "First paragraph of thought.\n\nSecond paragraph: double-check units.\n</think>\n\n**Answer:** 9.81 m/s²",
    "First paragraph of thought.\n\nSecond paragraph: double-check units.",
    "**Answer:** 9.81 m/s²",
    ["reasoning-no-start-tag", "unicode"],
    started=True,
)

F = "glm45"
R(
    F,
    "basic",
    "<think>The user wants a fun fact about octopuses.</think>\nOctopuses have three hearts.",
    "The user wants a fun fact about octopuses.",
    "Octopuses have three hearts.",
    [],
)
R(
    F,
    "no-think",
    "Octopuses have blue blood.",
    None,
    "Octopuses have blue blood.",
    [],
    notes="Thinking disabled (the template put <think></think> in the prompt).",
)
R(
    F,
    "leading-newline",
    "\n<think>Recall: GLM stands for General Language Model.</think>\nGLM = General Language Model.",
    "Recall: GLM stands for General Language Model.",
    "GLM = General Language Model.",
    ["whitespace"],
)
R(
    F,
    "unclosed",
    "<think>Comparing the three options, the first one has lower latency but",
    "Comparing the three options, the first one has lower latency but",
    None,
    ["reasoning-unclosed", "truncated"],
)
R(
    F,
    "unicode-emoji",
    "<think>用户问候，简单回应即可 😀</think>\n你好！有什么可以帮你？",
    "用户问候，简单回应即可 😀",
    "你好！有什么可以帮你？",
    ["unicode", "emoji"],
)
R(F, "empty-think", "<think></think>\nThe answer is 7.", None, "The answer is 7.", [])

F = "granite"
R(
    F,
    "basic",
    "Here is my thought process:\nThe user asks for 15% of 80. 0.15 × 80 = 12.\nHere is my response:\n15% of 80 is 12.",
    "The user asks for 15% of 80. 0.15 × 80 = 12.",
    "15% of 80 is 12.",
    ["unicode"],
)
R(
    F,
    "heres-variant",
    "Here's my thought process:\nKeep it short.\nHere's my response:\nHi there!",
    "Keep it short.",
    "Hi there!",
    [],
    notes='Quantized Granite models sometimes write "Here\'s".',
)
R(
    F,
    "no-reasoning",
    "Granite 3.2 supports a thinking toggle.",
    None,
    "Granite 3.2 supports a thinking toggle.",
    [],
)
R(
    F,
    "unclosed",
    "Here is my thought process:\nI should compare both libraries on startup time and",
    "I should compare both libraries on startup time and",
    None,
    ["reasoning-unclosed", "truncated"],
)
R(
    F,
    "unicode-emoji",
    "Here is my thought process:\nL'utente scrive in italiano 🇮🇹.\nHere is my response:\nCiao! Come posso aiutarti? 😊",
    "L'utente scrive in italiano 🇮🇹.",
    "Ciao! Come posso aiutarti? 😊",
    ["unicode", "emoji"],
)
R(F, "empty-output", "", None, None, ["empty-output"])

F = "mistral"
R(
    F,
    "basic",
    "[THINK]The user asks for the capital of Australia. It's Canberra, not Sydney.[/THINK]The capital of Australia is Canberra.",
    "The user asks for the capital of Australia. It's Canberra, not Sydney.",
    "The capital of Australia is Canberra.",
    [],
)
R(
    F,
    "no-think",
    "Bonjour ! Comment puis-je vous aider ?",
    None,
    "Bonjour ! Comment puis-je vous aider ?",
    ["unicode"],
)
R(
    F,
    "unclosed",
    "[THINK]Let me factor 391. Try 17: 17 × 23 = 391, so",
    "Let me factor 391. Try 17: 17 × 23 = 391, so",
    None,
    ["reasoning-unclosed", "truncated", "unicode"],
)
R(
    F,
    "unicode-emoji",
    "[THINK]Der Nutzer schreibt auf Deutsch 🇩🇪.[/THINK]Gern helfe ich Ihnen weiter! 😊",
    "Der Nutzer schreibt auf Deutsch 🇩🇪.",
    "Gern helfe ich Ihnen weiter! 😊",
    ["unicode", "emoji"],
)
R(
    F,
    "multiparagraph",
    "[THINK]Step 1: parse the question.\n\nStep 2: check edge cases.[/THINK]\n\nIt works for n = 0 as well.",
    "Step 1: parse the question.\n\nStep 2: check edge cases.",
    "It works for n = 0 as well.",
    ["whitespace"],
)
R(F, "empty-output", "", None, None, ["empty-output"])

F = "minimax_m2"
R(
    F,
    "basic",
    "The user wants a limerick about cats.\n</think>\n\nA cat with a taste for the cream...",
    "The user wants a limerick about cats.",
    "A cat with a taste for the cream...",
    ["reasoning-no-start-tag"],
    started=True,
    notes="The MiniMax-M2 template ends the prompt with <think>.",
)
R(
    F,
    "unclosed",
    "Planning the refactor: first extract the parser, then",
    "Planning the refactor: first extract the parser, then",
    None,
    ["reasoning-no-start-tag", "reasoning-unclosed", "truncated"],
    started=True,
)
R(
    F,
    "unicode-emoji",
    "用户想要一个笑话 😄\n</think>\n\n为什么程序员分不清万圣节和圣诞节？因为 Oct 31 = Dec 25 🎃🎄",
    "用户想要一个笑话 😄",
    "为什么程序员分不清万圣节和圣诞节？因为 Oct 31 = Dec 25 🎃🎄",
    ["reasoning-no-start-tag", "unicode", "emoji"],
    started=True,
)
R(F, "empty-reasoning", "</think>\n\nDone.", None, "Done.", ["reasoning-no-start-tag"], started=True)
R(
    F,
    "large-reasoning",
    LARGE_REASONING + "\n</think>\n\nAll constraints hold.",
    LARGE_REASONING,
    "All constraints hold.",
    ["reasoning-no-start-tag", "large-args"],
    started=True,
)
R(
    F,
    "code-answer",
    "Write a bash one-liner.\n</think>\n\n```bash\nfind . -name '*.py' | xargs wc -l\n```",
    "Write a bash one-liner.",
    "```bash\nfind . -name '*.py' | xargs wc -l\n```",
    ["reasoning-no-start-tag"],
    started=True,
)

F = "step3"
R(
    F,
    "basic",
    "The image shows a red bicycle leaning on a wall.</think>It's a red bicycle.",
    "The image shows a red bicycle leaning on a wall.",
    "It's a red bicycle.",
    ["reasoning-no-start-tag"],
    notes="Step3 output starts inside reasoning; only </think> appears.",
)
R(
    F,
    "unclosed",
    "Counting the objects: one chair, two lamps, and",
    "Counting the objects: one chair, two lamps, and",
    None,
    ["reasoning-no-start-tag", "reasoning-unclosed", "truncated"],
)
R(
    F,
    "unicode-emoji",
    "图片里有一只猫 🐱。</think>这是一只橘猫。",
    "图片里有一只猫 🐱。",
    "这是一只橘猫。",
    ["reasoning-no-start-tag", "unicode", "emoji"],
)
R(
    F,
    "whitespace",
    "\nCheck the sum.\n</think>\n\n  10  \n",
    "Check the sum.",
    "10",
    ["reasoning-no-start-tag", "whitespace"],
)
R(F, "empty-reasoning", "</think>Yes.", None, "Yes.", ["reasoning-no-start-tag"])
R(F, "empty-output", "", None, None, ["empty-output"])

F = "kimi_k2"
R(
    F,
    "basic",
    "<think>The user asks how many legs a spider has. Eight.</think>Spiders have eight legs.",
    "The user asks how many legs a spider has. Eight.",
    "Spiders have eight legs.",
    [],
)
R(
    F,
    "unclosed",
    "<think>Let me outline the essay: introduction, three arguments,",
    "Let me outline the essay: introduction, three arguments,",
    None,
    ["reasoning-unclosed", "truncated"],
)
R(
    F,
    "unicode-emoji",
    "<think>用户想知道月亮的距离 🌙</think>地球到月球的平均距离约为 384,400 公里。",
    "用户想知道月亮的距离 🌙",
    "地球到月球的平均距离约为 384,400 公里。",
    ["unicode", "emoji"],
)
R(F, "empty-think", "<think></think>Hello!", None, "Hello!", [])
R(
    F,
    "multiparagraph",
    "<think>Point one.\n\nPoint two: verify.</think>\n\nBoth points check out.",
    "Point one.\n\nPoint two: verify.",
    "Both points check out.",
    ["whitespace"],
)
R(
    F,
    "large-reasoning",
    "<think>" + LARGE_REASONING + "</think>Solved.",
    LARGE_REASONING,
    "Solved.",
    ["large-args"],
)

F = "gpt_oss"
R(
    F,
    "analysis-then-final",
    "<|channel|>analysis<|message|>User asks for 2+2. Answer 4.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.",
    "User asks for 2+2. Answer 4.",
    "2 + 2 = 4.",
    [],
)
R(
    F,
    "final-with-return",
    "<|channel|>analysis<|message|>Greeting.<|end|><|start|>assistant<|channel|>final<|message|>Hi! How can I help?<|return|>",
    "Greeting.",
    "Hi! How can I help?",
    [],
    notes="<|return|> ends the final message when special tokens are kept.",
)
R(
    F,
    "analysis-unclosed",
    "<|channel|>analysis<|message|>We need to compare the two proofs carefully. The first uses",
    "We need to compare the two proofs carefully. The first uses",
    None,
    ["reasoning-unclosed", "truncated"],
)
R(
    F,
    "final-only",
    "<|channel|>final<|message|>The Pacific is the largest ocean.",
    None,
    "The Pacific is the largest ocean.",
    [],
)
R(
    F,
    "unicode-emoji",
    "<|channel|>analysis<|message|>El usuario escribe en español 🇪🇸.<|end|><|start|>assistant<|channel|>final<|message|>¡Claro! ¿En qué te ayudo? 😊",
    "El usuario escribe en español 🇪🇸.",
    "¡Claro! ¿En qué te ayudo? 😊",
    ["unicode", "emoji"],
)
R(
    F,
    "large-analysis",
    "<|channel|>analysis<|message|>"
    + LARGE_REASONING
    + "<|end|><|start|>assistant<|channel|>final<|message|>Grid solved.",
    LARGE_REASONING,
    "Grid solved.",
    ["large-args"],
)


# --------------------------------------------------------------------------- writing


def file_name(rec: dict[str, Any]) -> str:
    return f"{rec['kind']}-{rec['family']}.jsonl"


FORMATS: dict[tuple[str, str], str] = {
    (
        "tool",
        "hermes",
    ): '`<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>` (Hermes 2 Pro, Qwen2.5/Qwen3)',
    (
        "tool",
        "llama3_json",
    ): '`{"name": …, "parameters": {…}}`, optional `<|python_tag|>`, several joined by `; `',
    (
        "tool",
        "mistral",
    ): '`[TOOL_CALLS] [{"name": …, "arguments": {…}}]` (pre-v11 tokenizers); v11+ `[TOOL_CALLS]name[ARGS]{…}`',
    ("tool", "pythonic"): '`[f(a="x", b=1), g()]` (Llama 3.2 / Llama 4 pythonic)',
    (
        "tool",
        "deepseek_v3",
    ): "`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` + newline + a json code fence holding `{…}` + `<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`",
    (
        "tool",
        "deepseek_v31",
    ): "`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`",
    (
        "tool",
        "qwen3_coder",
    ): "`<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>`, values typed by schema",
    ("tool", "qwen3_xml"): "same XML as qwen3_coder",
    (
        "tool",
        "kimi_k2",
    ): "`<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`",
    (
        "tool",
        "glm45",
    ): "`<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>`, values typed by schema",
    ("tool", "granite"): '`<|tool_call|>[{"name": …, "arguments": {…}}]` (Granite 3.0/3.1)',
    (
        "tool",
        "internlm",
    ): '`text<|action_start|><|plugin|>\\n{"name": …, "parameters": {…}}<|action_end|>` (one call)',
    ("tool", "xlam"): '`[{"name": …, "arguments": {…}}]`, bare or in a json code fence',
    (
        "tool",
        "step3",
    ): '`<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N"><steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`',
    (
        "tool",
        "minimax_m2",
    ): '`<minimax:tool_call>\\n<invoke name="N">\\n<parameter name="K">V</parameter>\\n</invoke>\\n</minimax:tool_call>`',
    (
        "tool",
        "gpt_oss",
    ): "harmony: `<|channel|>commentary to=functions.N <|constrain|>json<|message|>{…}<|call|>`, analysis/final channels",
    ("tool", "jamba"): '`<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>`',
    ("tool", "phi4_mini"): '`functools[{"name": …, "arguments": {…}}]`',
    ("tool", "hunyuan_a13b"): '`<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>`',
    (
        "tool",
        "seed_oss",
    ): "`<seed:tool_call>\\n<function=N>\\n<parameter=K>V</parameter>\\n</function>\\n</seed:tool_call>`",
    ("reasoning", "deepseek_r1"): "reasoning from the first token (optional leading `<think>`) to `</think>`",
    ("reasoning", "qwen3"): "`<think>…</think>` at the start, or started in the prompt",
    ("reasoning", "qwen3_thinking"): "always started in the prompt; output holds `…</think>`",
    ("reasoning", "glm45"): "`<think>…</think>` (model emits the start tag)",
    ("reasoning", "granite"): "`Here is my thought process:` … `Here is my response:` …",
    ("reasoning", "mistral"): "`[THINK]…[/THINK]`",
    ("reasoning", "minimax_m2"): "started in the prompt (`<think>`); output holds `…</think>`",
    ("reasoning", "step3"): "reasoning from the first token to `</think>` (no start tag)",
    ("reasoning", "kimi_k2"): "`<think>…</think>`",
    ("reasoning", "gpt_oss"): "harmony `analysis` channel, `final` channel is content",
}

README_HEAD = """# Conformance fixtures

Shared transcripts that the conformance suite runs through every backend
(`builtin`, `vllm`, `sglang`), one-shot and at every chunking. Generated by
`tools/make_fixtures.py` from per-family format renderers and hand-picked
cases: edit the script, not the JSONL, then run
`python tools/make_fixtures.py` (and `--check` in CI). Validated by
`tests/conformance/test_fixtures_valid.py`.

All outputs were written for this project from our reading of each model
family's output format (checked against the frameworks' parser sources for
markers, spacing and JSON shape); no framework's test data was copied.

## Schema (one JSON object per line)

| field | meaning |
|---|---|
| `id` | unique across all files: `<family>-<slug>` (reasoning transcripts: `<family>-reasoning-<slug>`) |
| `family` | a family-table name (`protocol/families.toml`); for `kind: reasoning` a `[reasoning.X]` name |
| `kind` | `tool` or `reasoning` |
| `reasoning_family` | tool transcripts whose output begins with reasoning: the reasoning family chained first |
| `output` | raw model output |
| `tools` | OpenAI function tools of the request (typed JSON-schema parameters) |
| `reasoning_started_in_prompt` | the chat template ended the prompt with the reasoning start marker |
| `expected` | `{reasoning, content, tool_calls: [{name, arguments} or {name, invalid_arguments}]}` |
| `expected_by_backend` | optional per-backend reading where a backend documents a different one |
| `known_divergences` | optional `[{backend, classes, chunking, reason}]` documented limitations |
| `tags` | case categories (below) |
| `notes` | why the case exists |

## Conventions

* `expected` is the **correct reading** of the output per the family's
  format (what a careful server returns), not what a framework happens to
  return. Divergences are what the suite exists to show; none are recorded
  as known here unless verified.
* Comparison: content and reasoning after stripping surrounding whitespace,
  `null` ≡ `""`; tool calls in order, by name and arguments (dict equality)
  or `invalid_arguments` (stripped); call ids never compared.
* Content is the text outside call spans, verbatim, except whitespace-only
  runs between calls or between a call and the start/end of the output.
  Empty content is `null`.
* A complete call block whose name cannot be recovered stays in content
  verbatim, markers included. A named call whose arguments are not a JSON
  object is kept with `invalid_arguments` (the verbatim arguments text).
  Truncated output: a call whose name is known is kept (arguments flagged
  unless already a complete object); otherwise the text from the start
  marker on is content. Calls to tools not in `tools` are kept. Marker text
  inside a JSON string does not end a call. (The builtin policy; the
  builtin families' fixtures only use cases whose reading is unambiguous
  under it.)
* XML-style formats (qwen3_coder, qwen3_xml, glm45, step3, minimax_m2,
  seed_oss) carry values as text: they are typed with the tool's JSON
  schema (integer, number, boolean, object/array as JSON); string values are
  verbatim (qwen3_coder/qwen3_xml: the newline right after `<parameter=…>`
  and right before `</parameter>` belongs to the format). Tools not in the
  request keep string values.
* Reasoning: `qwen3`/`glm45` reason only when the output starts (after
  whitespace) with `<think>` or the prompt started it; `deepseek_r1`/`step3`
  are inside reasoning from the first token (a leading `<think>` is
  consumed); reasoning never closed → everything (after the start tag) is
  reasoning. A second end marker is answer text.
* Large arguments/reasoning are > 4 KB (`large-args`).
"""


def readme() -> str:
    from collections import Counter

    lines = [
        README_HEAD,
        "## Files\n",
        "| file | kind | family | format | transcripts | tags |",
        "|---|---|---|---|---|---|",
    ]
    by_file: dict[str, list[dict[str, Any]]] = {}
    for rec in CASES:
        by_file.setdefault(file_name(rec), []).append(rec)
    for name in sorted(by_file):
        recs = by_file[name]
        kind, fam = recs[0]["kind"], recs[0]["family"]
        tags = sorted({t for r in recs for t in r["tags"]})
        fmt = FORMATS.get((kind, fam), "").replace("|", "\\|")
        lines.append(f"| `{name}` | {kind} | `{fam}` | {fmt} | {len(recs)} | {', '.join(tags)} |")
    total = Counter(t for r in CASES for t in r["tags"])
    tool_fams = sorted({r["family"] for r in CASES if r["kind"] == "tool"})
    rea_fams = sorted({r["family"] for r in CASES if r["kind"] == "reasoning"})
    lines += [
        "",
        f"{len(CASES)} transcripts: {len(tool_fams)} tool families, {len(rea_fams)} reasoning families.",
        "",
        "## Tags\n",
        "| tag | meaning | transcripts |",
        "|---|---|---|",
    ]
    meaning = {
        "single": "exactly one call",
        "multi-call": "more than one call",
        "parallel": "several calls emitted together",
        "content-before": "text before the first call",
        "content-between": "text between calls",
        "content-after": "text after the last call",
        "no-call": "no tool call at all",
        "unicode": "non-ASCII text",
        "emoji": "emoji (astral-plane characters)",
        "escaped-quotes": "quotes/backslashes inside argument strings",
        "nested": "nested objects/arrays in arguments",
        "large-args": "arguments or reasoning larger than 4 KB",
        "empty-args": "a call with no arguments",
        "truncated": "generation stopped mid-call or mid-reasoning",
        "malformed": "invalid call body or arguments",
        "unknown-tool": "a call to a tool not in the request",
        "reasoning-no-start-tag": "reasoning without a start marker in the output",
        "reasoning-unclosed": "reasoning never closed",
        "reasoning-then-tools": "reasoning followed by tool calls",
        "empty-output": "the output is empty",
        "marker-in-string": "marker text inside a string or answer",
        "whitespace": "significant leading/trailing/inner whitespace",
    }
    for tag, text in meaning.items():
        lines.append(f"| `{tag}` | {text} | {total.get(tag, 0)} |")
    return "\n".join(lines) + "\n"


# =========================================================================== CASES AS DATA

CASES_DIR = ROOT / "src" / "parsebridge" / "formats" / "cases"


def _segment(family: str, seg: Any) -> str | Span:
    """A YAML segment: ``{text}``, ``{calls, options}`` (rendered by the family's format) or ``{raw, expect}``."""
    from parsebridge.formats import tool_format

    if isinstance(seg, str):
        return seg
    if "text" in seg:
        return str(seg["text"])
    if "calls" in seg:
        calls = [
            (c[0], c[1]) if isinstance(c, list) else (c["name"], c.get("arguments", {})) for c in seg["calls"]
        ]
        text = tool_format(seg.get("format", family)).render(calls, **seg.get("options", {}))
        return Span(text, *(C(n, a) for n, a in calls))
    if "raw" in seg:
        return Span(str(seg["raw"]), *seg.get("expect", []))
    raise SystemExit(f"{family}: segment without text/calls/raw: {seg!r}")


def load_case_files() -> None:
    """Add every case of ``formats/cases/*.yaml`` (one file per kind and family) to CASES."""
    import yaml

    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        family, kind = doc["family"], doc.get("kind", "tool")
        for case in doc["cases"]:
            if "output" in case:
                built: tuple[str, str | None, list[dict[str, Any]]] = (case["output"], None, [])
            else:
                built = build(*(_segment(family, seg) for seg in case["segments"]))
            extra: dict[str, Any] = {}
            for key in ("content", "calls"):
                if key in case:
                    extra[key] = case[key]
            if kind == "reasoning" and "output" in case:
                extra.setdefault("content", case.get("content"))
            slug = case["slug"] if kind == "tool" else f"reasoning-{case['slug']}"
            add(
                family,
                slug,
                built,
                tuple(case.get("tools", DEFAULT)) if kind == "tool" else None,
                case.get("tags", []),
                kind=kind,
                reasoning=case.get("reasoning"),
                reasoning_family=case.get("reasoning_family", doc.get("reasoning_family")),
                started=case.get("started", False),
                notes=case.get("notes", ""),
                divergences=case.get("known_divergences"),
                **extra,
            )
        if doc.get("summary"):
            FORMATS[(kind, family)] = doc["summary"]


def render() -> dict[str, str]:
    files: dict[str, list[str]] = {}
    seen: set[str] = set()
    for rec in CASES:
        if rec["id"] in seen:
            raise SystemExit(f"duplicate id {rec['id']}")
        seen.add(rec["id"])
        files.setdefault(file_name(rec), []).append(json.dumps(rec, ensure_ascii=False))
    out = {name: "\n".join(lines) + "\n" for name, lines in files.items()}
    out["README.md"] = readme()
    return out


def main(argv: list[str] | None = None) -> int:
    load_case_files()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check", action="store_true", help="fail if the fixture files differ from what would be written"
    )
    args = ap.parse_args(argv)
    files = render()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, text in sorted(files.items()):
        path = FIXTURES / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if args.check:
        extra = sorted(p.name for p in FIXTURES.glob("*.jsonl") if p.name not in files)
        if stale or extra:
            print("stale:", stale, "unexpected:", extra, file=sys.stderr)
            return 1
        print(f"{len(files)} files up to date ({len(CASES)} transcripts)")
        return 0
    print(f"wrote {len(files)} files, {len(CASES)} transcripts to {FIXTURES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

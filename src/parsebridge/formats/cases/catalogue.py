"""The shared tool catalogue of the fixture cases: the OpenAI tools a case's `tools:` names.

A case lists tool names (`tools: [get_weather]`); the transcript carries
these full definitions, with typed JSON-schema parameters, because XML-style
formats type their text values by the schema.
"""

from __future__ import annotations

from typing import Any


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
    "book_room": _fn(
        "book_room",
        "Book a meeting room; no room number lets the office choose.",
        {"title": S, "room": {"type": ["integer", "null"]}, "projector": B},
        ["title"],
    ),
    "set_reminder": _fn(
        "set_reminder",
        "Remind the user of something; a note and a delay are optional (null: none).",
        {
            "text": _d(S, "What to remind of."),
            "note": {"anyOf": [S, {"type": "null"}], "description": "Extra detail, or null."},
            "minutes": {"type": ["integer", "null"], "description": "Delay in minutes, or null: now."},
        },
        ["text"],
    ),
    "run_sql": _fn(
        "run_sql",
        "Run a read-only SQL query.",
        {"query": S, "params": {"type": "array", "items": {}}, "timeout_s": N},
        ["query"],
    ),
}


def tools(*names: str) -> list[dict[str, Any]]:
    """The catalogue definitions of `names`, in that order."""
    return [TOOLS[n] for n in names]


#: The tools of a case that names none.
DEFAULT = ("get_weather", "search_web", "get_time")

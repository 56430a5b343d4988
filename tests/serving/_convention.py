"""Checks of the OpenAI streaming convention over `chat.completion.chunk` dicts."""

from __future__ import annotations

import json
from typing import Any

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
            },
        },
    },
]


def choice_chunks(chunks: list[dict[str, Any]], index: int = 0) -> list[dict[str, Any]]:
    """The `choices[0]` entries of the chunks that belong to choice `index`."""
    out = []
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        for choice in chunk["choices"]:
            if choice["index"] == index:
                out.append(choice)
    return out


def check_convention(
    chunks: list[dict[str, Any]], index: int = 0, *, valid_json: bool = True
) -> dict[str, Any]:
    """Assert the convention for one choice; return what a client assembles (and the finish reason)."""
    choices = choice_chunks(chunks, index)
    assert choices, "no chunk for this choice"
    first = choices[0]["delta"]
    assert first.get("role") == "assistant", f"first delta must carry the role: {first}"
    roles = [c for c in choices if "role" in c["delta"]]
    assert len(roles) == 1, "role sent more than once"
    last = choices[-1]
    assert last["finish_reason"] is not None and last["delta"] == {}, f"bad final chunk: {last}"
    assert all(c["finish_reason"] is None for c in choices[:-1]), "finish_reason before the end"
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for c in choices[1:-1]:
        delta = c["delta"]
        assert delta, "an empty delta that is neither the role chunk nor the final one"
        assert "role" not in delta
        if delta.get("content") is not None:
            assert delta["content"], "empty content delta"
            content.append(delta["content"])
        if delta.get("reasoning_content") is not None:
            assert delta["reasoning_content"], "empty reasoning delta"
            reasoning.append(delta["reasoning_content"])
        for tc in delta.get("tool_calls") or []:
            i = tc["index"]
            if i not in calls:
                assert i == len(calls), (
                    f"call indices must be dense and ordered, got {i} after {sorted(calls)}"
                )
                assert tc.get("id") and tc.get("type") == "function", f"first call delta lacks id/type: {tc}"
                assert tc["function"].get("name"), f"first call delta lacks the name: {tc}"
                calls[i] = {
                    "id": tc["id"],
                    "name": tc["function"]["name"],
                    "arguments": [tc["function"].get("arguments", "")],
                }
            else:
                assert "id" not in tc and "type" not in tc, f"later call delta repeats the id: {tc}"
                assert "name" not in tc["function"], f"later call delta repeats the name: {tc}"
                assert tc["function"]["arguments"], f"empty argument fragment: {tc}"
                calls[i]["arguments"].append(tc["function"]["arguments"])
    assembled_calls = []
    for i in sorted(calls):
        text = "".join(calls[i]["arguments"])
        if valid_json:
            args = json.loads(text)
            assert isinstance(args, dict), f"call {i} arguments are not an object: {text!r}"
        else:
            try:
                args = json.loads(text)
            except ValueError:
                args = text
        assembled_calls.append({"name": calls[i]["name"], "arguments": args, "id": calls[i]["id"]})
    finish = last["finish_reason"]
    if assembled_calls and finish not in ("length",):
        assert finish in ("tool_calls", "stop"), finish
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": assembled_calls,
        "finish_reason": finish,
    }


def norm_text(value: str | None) -> str:
    return (value or "").strip()


def norm_calls(calls: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in calls]

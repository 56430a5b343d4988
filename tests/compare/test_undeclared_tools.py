"""A call Dynamo's frontend (or smg's streaming gateway) does not read because the request declares
no such tool is named `tools_undeclared` in compare, with the server's rule as its detail: what
that server does, not a silent `call_missing`. (The rule itself was measured against Dynamo's
frontend over HTTP, tests/adapters/_dynamo_reference.py, and smg's gateway.)"""

from __future__ import annotations

from parsebridge.comparison.undeclared import name_undeclared
from parsebridge.conformance.observation import Observation
from parsebridge.conformance.record import Transcript

CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}


def _obs(mode: str, calls: int, content: str = "") -> Observation:
    return Observation(mode=mode, chunking=mode, content=content, tool_calls=[CALL] * calls)


def _diffs(a: str, b: str) -> list[dict[str, str]]:
    return [
        {"class": "call_missing", "a": a, "b": b, "detail": "call 0 'get_weather' is missing"},
        {"class": "marker_leaked", "a": a, "b": b, "detail": "content holds '<tool_call>'"},
    ]


def test_dynamo_without_declared_tools_is_named() -> None:
    t = Transcript(id="r1", family="hermes", output="Sure.<tool_call>…</tool_call>")
    observed = {
        "builtin:hermes": {"oneshot": _obs("oneshot", 1)},
        "dynamo:hermes": {"oneshot": _obs("oneshot", 0)},
    }
    diffs = _diffs("builtin:hermes/oneshot", "dynamo:hermes/oneshot")
    name_undeclared(t, diffs, observed)
    assert [d["class"] for d in diffs] == ["tools_undeclared", "tools_undeclared"]
    assert "Dynamo's frontend reads tool calls only when the request declares tools" in diffs[0]["detail"]
    assert diffs[0]["detail"].endswith("this transcript declares none")


def test_declared_tools_leave_a_real_difference_alone() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    t = Transcript(id="r1", family="hermes", output="…", tools=tools)
    observed = {
        "builtin:hermes": {"oneshot": _obs("oneshot", 1)},
        "dynamo:hermes": {"oneshot": _obs("oneshot", 0)},
    }
    diffs = _diffs("builtin:hermes/oneshot", "dynamo:hermes/oneshot")
    name_undeclared(t, diffs, observed)
    assert [d["class"] for d in diffs] == ["call_missing", "marker_leaked"]


def test_smg_is_named_only_for_streams_its_one_shot_read() -> None:
    """smg one-shot reads a call to any tool (parsebridge declares a placeholder); streamed, only a
    declared one. A stream missing a call its own one-shot read is the rule; a call the one-shot
    missed too is a real difference (a format smg does not read)."""
    t = Transcript(id="r1", family="hermes", output="…")
    read = {"oneshot": _obs("oneshot", 1), "stream": _obs("stream", 0)}
    observed = {"builtin:hermes": {"stream": _obs("stream", 1)}, "smg:qwen": read}
    diffs = _diffs("builtin:hermes/stream", "smg:qwen/stream")
    name_undeclared(t, diffs, observed)
    assert diffs[0]["class"] == "tools_undeclared" and "smg's gateway streams" in diffs[0]["detail"]
    missed = {"oneshot": _obs("oneshot", 0), "stream": _obs("stream", 0)}
    observed = {"builtin:hermes": {"stream": _obs("stream", 1)}, "smg:qwen": missed}
    diffs = _diffs("builtin:hermes/stream", "smg:qwen/stream")
    name_undeclared(t, diffs, observed)
    assert diffs[0]["class"] == "call_missing"

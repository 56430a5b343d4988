"""A call Dynamo's frontend (or smg's streaming gateway, or SGLang's chat server) does not read
because the request declares no such tool is named `tools_undeclared` in compare, with the
server's rule as its detail: what that server does, not a silent `call_missing`. (The rule itself
was measured against Dynamo's frontend over HTTP, tests/adapters/_dynamo_reference.py, and smg's
gateway; SGLang's is its chat server's, which `adapters/sglang/_driver.py` restates.)"""

from __future__ import annotations

import pytest

import parsebridge as pb
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


def _needs_sglang() -> None:
    reason = pb.get_backend("sglang").unavailable_reason()
    if reason is not None:
        pytest.skip(f"sglang: {reason}")


def test_sglang_without_declared_tools_is_named() -> None:
    """SGLang's server runs no tool parser for a request without tools: its reading is the whole
    output as content, one-shot and streamed (it was `call_missing` + `marker_leaked`). A request
    that declares some other tool is not that rule."""
    _needs_sglang()
    t = Transcript(id="r1", family="hermes", output="Sure.<tool_call>…</tool_call>")
    for mode in ("oneshot", "stream"):
        observed = {"builtin:hermes": {mode: _obs(mode, 1)}, "sglang:qwen25": {mode: _obs(mode, 0)}}
        diffs = _diffs(f"builtin:hermes/{mode}", f"sglang:qwen25/{mode}")
        name_undeclared(t, diffs, observed)
        assert [d["class"] for d in diffs] == ["tools_undeclared", "tools_undeclared"], mode
        assert diffs[0]["detail"] == (
            "sglang:qwen25: SGLang's server runs its tool parser only when the request declares tools; "
            "this transcript declares none"
        )
    # With tools declared SGLang's server does run its parser: a call it misses is a difference of
    # the parser (here: the marker without the newline its detector wants).
    tools = [{"type": "function", "function": {"name": "other", "parameters": {}}}]
    t = Transcript(id="r1", family="hermes", output="…", tools=tools)
    observed = {
        "builtin:hermes": {"oneshot": _obs("oneshot", 1)},
        "sglang:qwen25": {"oneshot": _obs("oneshot", 0)},
    }
    diffs = _diffs("builtin:hermes/oneshot", "sglang:qwen25/oneshot")
    name_undeclared(t, diffs, observed)
    assert [d["class"] for d in diffs] == ["call_missing", "marker_leaked"]


def test_an_sglang_parser_that_runs_without_tools_has_no_rule() -> None:
    """SGLang 0.5.23 runs a detector that `parses_without_tools()` even for a request without
    tools: a call it misses then is the parser's."""
    _needs_sglang()
    from parsebridge.adapters.sglang._compat import get_api  # SGLang itself: only where installed

    backend = pb.get_backend("sglang")
    for name in get_api().tool_parser_names():
        runs = get_api().tool_parsing_active(name, [], "auto")
        rule = backend.undeclared_tools_rule(name, "oneshot", any_declared=False)
        assert (rule is None) == runs, name


def test_compare_names_sglang_reading_no_call_without_tools() -> None:
    """The report a user gets: `compare` of builtin and SGLang on an output whose record declares
    no tools counts `tools_undeclared`, not `call_missing` / `marker_leaked`."""
    _needs_sglang()
    text = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    result = pb.compare(text, ["builtin:hermes", "sglang:qwen25"], chunkings=["token"])
    classes = {d.class_ for c in result.comparisons for d in c.differences}
    assert classes == {"tools_undeclared"}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    declared = pb.compare({"output": text, "tools": tools}, ["builtin:hermes", "sglang:qwen25"])
    assert not [d for c in declared.comparisons for d in c.differences]

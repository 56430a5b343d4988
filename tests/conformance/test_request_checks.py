"""Checks against the request and across token groupings: schema, tool names, call order, truncation, split."""

from __future__ import annotations

from parsebridge.conformance import Runner, Target, transcript_from
from parsebridge.conformance.observation import Observation
from parsebridge.conformance.request_checks import request_checks, schema_problem, truncation_outcome

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]


def _t(**extra):
    return transcript_from({"output": "x", "tools": TOOLS, **extra})


def _obs(calls, mode="oneshot", **kw):
    o = Observation(mode, "oneshot" if mode == "oneshot" else "token", **kw)
    o.tool_calls = calls
    return o


def _classes(diffs):
    return [d.cls.value for d in diffs]


def test_arguments_that_break_the_declared_schema():
    assert schema_problem(TOOLS[0]["function"]["parameters"], {"city": "Paris"}) is None
    assert "integer" in schema_problem(TOOLS[0]["function"]["parameters"], {"city": "Paris", "days": "2"})
    bad = _obs([{"name": "get_weather", "arguments": {"days": 2}}])
    assert _classes(request_checks(_t(), bad)) == ["arguments_schema"]


def test_a_schema_the_correct_reading_breaks_too_is_the_models_not_the_parsers():
    t = _t(expected={"tool_calls": [{"name": "get_weather", "arguments": {"days": 2}}]})
    assert request_checks(t, _obs([{"name": "get_weather", "arguments": {"days": 2}}])) == []


def test_call_names_among_the_tools_offered():
    assert _classes(request_checks(_t(), _obs([{"name": "search", "arguments": {}}]))) == ["unknown_tool"]
    t = _t(expected={"tool_calls": [{"name": "search", "arguments": {}}]})
    assert request_checks(t, _obs([{"name": "search", "arguments": {}}])) == []
    assert request_checks(transcript_from({"output": "x"}), _obs([{"name": "search", "arguments": {}}])) == []


def test_parallel_calls_in_order():
    ok = _obs([], "stream", call_order=[0, 1, 2])
    assert request_checks(_t(), ok) == []
    assert _classes(request_checks(_t(), _obs([], "stream", call_order=[1, 0]))) == ["parallel_calls"]
    assert _classes(request_checks(_t(), _obs([], "stream", call_order=[0, 2]))) == ["parallel_calls"]


def test_truncation_outcomes_against_the_policy():
    out = 'Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
    assert truncation_outcome(out, _obs([{"name": "get_weather", "invalid_arguments": '{"city": "Par'}])) == (
        "flagged call"
    )
    kept = _obs([])
    kept.content = out
    assert truncation_outcome(out, kept) == "content"
    lost = _obs([])
    lost.content = "Sure."
    t = transcript_from({"output": out, "finish_reason": "length"})
    assert _classes(request_checks(t, lost)) == ["truncation_lost"] and lost.truncation == "lost"
    assert request_checks(transcript_from({"output": out}), lost) == []  # no finish_reason: no policy


def test_split_invariance_compares_each_grouping_with_the_one_token_reading():
    ref, other = _obs([], "stream"), _obs([], "stream")
    ref.content, other.content = "Hello world", "Hello"
    diffs = request_checks(_t(), other, ref)
    assert _classes(diffs) == ["split_variant"] and "content_lost" in diffs[0].detail


def test_runner_reports_tokenizer_and_new_classes_for_builtin():
    t = transcript_from(
        {
            "id": "cut",
            "family": "hermes",
            "output": 'Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
            "tools": TOOLS,
            "finish_reason": "length",
        }
    )
    rows = Runner(["oneshot", "token", "special", "token-random-1"]).run_transcript(
        Target.explicit(tool="builtin:hermes"), t
    )
    assert [r.chunking for r in rows] == ["oneshot", "token", "special", "token-random-1"]
    for r in rows:
        assert r.observation is not None and r.observation.tokenizer
        assert r.observation.truncation in ("call", "flagged call", "content")
    assert rows[0].observation.tokenizer == "none"

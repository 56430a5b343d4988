"""Divergence classes on synthetic readings, statuses, documented divergences."""

from __future__ import annotations

import pytest

from parsebridge.conformance import (
    DESCRIPTIONS,
    Difference,
    DivergenceClass,
    Observation,
    compare_calls,
    compare_readings,
    compare_text,
    evaluate,
    same_json,
    status_of,
    transcript_from,
)

DC = DivergenceClass


def cls_of(d):
    return d.cls if d is not None else None


@pytest.mark.parametrize(
    ("ref", "got", "expected"),
    [
        ("Hello world", "Hello world", None),
        ("Hello world", "Hello world\n", DC.WHITESPACE_ONLY),
        ("Hello world", None, DC.CONTENT_LOST),
        ("Hello world", "Hello", DC.CONTENT_LOST),
        ("Hello world", "Hello worldHello world", DC.CONTENT_DUPLICATED),
        ("Hello world", "Hello world<tool_call>", DC.MARKER_LEAKED),
        ("Hello world", "Goodbye", DC.CONTENT_DIFFERS),
        (None, "", None),
    ],
)
def test_content_classes(ref, got, expected):
    assert cls_of(compare_text("content", ref, got, markers=["<tool_call>"])) == expected


def test_comparison_against_expected_strips_whitespace():
    assert compare_text("content", "Hi", "\n Hi \n", exact=False) is None
    assert cls_of(compare_text("reasoning", "think hard", "think", exact=False)) == DC.REASONING_LOST
    assert cls_of(compare_text("reasoning", "a", "b")) == DC.REASONING_DIFFERS


def test_reasoning_misplaced_both_ways():
    into_content = compare_readings(
        {"reasoning": "hmm", "content": "4"}, {"reasoning": None, "content": "hmm4"}
    )
    assert [d.cls for d in into_content] == [DC.REASONING_MISPLACED]
    swallowed = compare_readings(
        {"reasoning": "hmm", "content": "the answer"}, {"reasoning": "hmm the answer"}
    )
    assert [d.cls for d in swallowed] == [DC.REASONING_MISPLACED]


def call(name, **args):
    return {"name": name, "arguments": args}


def test_calls_are_aligned_by_name():
    ref = [call("a", x=1), call("b"), call("c")]
    assert [d.cls for d in compare_calls(ref, [call("a", x=1), call("c")])] == [DC.CALL_MISSING]
    assert "'b'" in compare_calls(ref, [call("a", x=1), call("c")])[0].detail
    assert [d.cls for d in compare_calls(ref[:1], ref[:2])] == [DC.EXTRA_CALL]
    assert [d.cls for d in compare_calls([call("a")], [call("A")])] == [DC.NAME_DIFFERS]
    assert [d.cls for d in compare_calls([call("a", x=1)], [call("a", x=2)])] == [DC.ARGUMENTS_DIFFER]
    bad = {"name": "a", "invalid_arguments": '{"x": '}
    assert [d.cls for d in compare_calls([call("a", x=1)], [bad])] == [DC.ARGUMENTS_INVALID]
    assert compare_calls([{"name": "a", "invalid_arguments": ' {"x": '}], [bad]) == []
    assert [d.cls for d in compare_calls([bad], [call("a")])] == [DC.ARGUMENTS_DIFFER]


def test_json_equality_keeps_booleans_apart_from_numbers():
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json({"a": True}, {"a": 1})
    assert not same_json({"a": None}, {})
    assert not same_json(["1"], [1])


def test_every_class_has_a_description():
    assert set(DESCRIPTIONS) == set(DivergenceClass)
    assert all(c.description for c in DivergenceClass)


def test_status_precedence():
    e = Difference(DC.CONTENT_LOST, "", "expected")
    s = Difference(DC.CONTENT_LOST, "", "stream")
    i = Difference(DC.ID_PROTOCOL, "", "invariant")
    b = Difference(DC.BACKEND_ERROR, "", "backend")
    known = Difference(DC.CONTENT_LOST, "", "expected", known=True, reason="r")
    assert status_of([]) == "pass"
    assert status_of([e]) == "fail"
    assert status_of([e, s]) == "diverge"
    assert status_of([i]) == "diverge"
    assert status_of([b, e]) == "error"
    assert status_of([known]) == "diverge"
    assert status_of([known, e]) == "fail"


def obs(mode="oneshot", chunking="oneshot", **kw):
    return Observation(mode, chunking, **kw)


T = transcript_from(
    {
        "id": "t",
        "family": "hermes",
        "output": "Hi <tool_call>…</tool_call>",
        "expected": {"content": "Hi", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
        "known_divergences": [
            {
                "backend": "sglang",
                "classes": ["content_lost"],
                "chunking": "token-*",
                "reason": "sglang bug #1",
            }
        ],
        "expected_by_backend": {"vllm": {"content": "Hi ", "tool_calls": []}},
    }
)
GOOD = {"content": "Hi", "tool_calls": [call("f", a=1)]}


def test_evaluate_pass_fail_and_stream_divergence():
    one = obs(**GOOD)
    assert evaluate(T, one, None, backend="builtin").status == "pass"
    wrong = obs(content="Hi", tool_calls=[call("f", a=2)])
    v = evaluate(T, wrong, None, backend="builtin")
    assert (v.status, v.classes) == ("fail", ["arguments_differ"])
    lost = obs("stream", "char", content=None, tool_calls=[call("f", a=1)])
    v = evaluate(T, lost, one, backend="builtin")
    assert (v.status, v.classes) == ("diverge", ["content_lost"])
    assert [d.source for d in v.differences] == ["stream"]


def test_known_divergence_matches_backend_class_and_chunking_pattern():
    one = obs(**GOOD)
    lost = obs("stream", "token-5", content=None, tool_calls=[call("f", a=1)])
    v = evaluate(T, lost, one, backend="sglang", spec="sglang:qwen25")
    assert v.status == "diverge" and v.known and v.reason == "sglang bug #1"
    other_chunking = obs("stream", "char", content=None, tool_calls=[call("f", a=1)])
    assert not evaluate(T, other_chunking, one, backend="sglang").known
    assert not evaluate(T, lost, one, backend="vllm").known


def test_expected_by_backend_is_a_documented_divergence_not_a_silent_pass():
    vllm_reading = obs(content="Hi ", tool_calls=[])
    v = evaluate(T, vllm_reading, None, backend="vllm")
    assert v.status == "diverge" and v.known
    assert "call_missing" in v.classes
    assert evaluate(T, obs(**GOOD), None, backend="vllm").status == "fail"


def test_errors_and_protocol_anomalies():
    v = evaluate(T, obs(error="vllm:hermes raised in parse on transcript 't': boom"), None, backend="vllm")
    assert (v.status, v.classes) == ("error", ["backend_error"])
    anomalous = obs("stream", "char", anomalies=["call 0: id sent 2 times"], **GOOD)
    v = evaluate(T, anomalous, obs(**GOOD), backend="builtin")
    assert (v.status, v.classes) == ("diverge", ["id_protocol"])


def test_markers_without_expected_are_flagged_absolutely():
    log = transcript_from({"id": "log", "family": "hermes", "output": "x"})
    v = evaluate(log, obs(content="x <tool_call> y"), None, backend="builtin", markers=["<tool_call>"])
    assert (v.status, v.classes) == ("diverge", ["marker_leaked"])


CUT_AFTER_A_CALL = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": {"a": "b'


@pytest.mark.parametrize(
    ("content", "classes"),
    [
        # the policy's reading: the cut call kept as text (a trailing newline stripped or not)
        (CUT_AFTER_A_CALL[CUT_AFTER_A_CALL.rindex("<tool_call>") :], []),
        ("\n" + CUT_AFTER_A_CALL[CUT_AFTER_A_CALL.rindex("<tool_call>") :] + "  ", []),
        # the whole call before it left as text is still a leak
        (CUT_AFTER_A_CALL, ["marker_leaked"]),
        # a marker that is not the output's end is a leak
        ('<tool_call>\n{"name": "g"', ["marker_leaked"]),
    ],
)
def test_a_cut_call_kept_as_content_is_not_a_leak(content, classes):
    """`finish_reason: length`: the truncation policy keeps the cut call's text, markers and all,
    as content; with no expected reading that was flagged `marker_leaked` on every backend."""
    cut = transcript_from(
        {"id": "cut", "family": "hermes", "output": CUT_AFTER_A_CALL, "finish_reason": "length"}
    )
    v = evaluate(cut, obs(content=content), None, backend="builtin", markers=["<tool_call>", "</tool_call>"])
    assert v.classes == classes

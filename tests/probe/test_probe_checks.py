"""Each check on hand-made answers: the failures servers have been seen to produce, and the
right answer beside each (so no check can pass or fail regardless)."""

from __future__ import annotations

from typing import Any

import pytest

from parsebridge.probe.assemble import from_events, from_message
from parsebridge.probe.checks import all_markers, evaluate
from parsebridge.probe.run import Row
from parsebridge.probe.scenarios import SCENARIOS, select
from parsebridge.probe.schema import problems

SINGLE, NAMED, REQUIRED = (select([n])[0] for n in ("single-call", "named-choice", "required-choice"))


def _event(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _call(
    index: Any = 0, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict[str, Any]:
    part: dict[str, Any] = {"function": {}}
    if index is not None:
        part["index"] = index
    if id:
        part["id"] = id
    if name:
        part["function"]["name"] = name
    if args is not None:
        part["function"]["arguments"] = args
    return _event({"tool_calls": [part]})


def _stream(*events: dict[str, Any], finish: str = "tool_calls") -> list[dict[str, Any]]:
    return [_event({"role": "assistant"}), *events, _event({}, finish)]


GOOD = _stream(_call(0, "c1", "get_weather", ""), _call(0, args='{"city": '), _call(0, args='"Paris"}'))


def _failed(scenario: Any, events: list[dict[str, Any]]) -> dict[str, str]:
    out = evaluate(scenario, from_events(events))
    return {k: o.detail for k, o in out.items() if o.status == "fail"}


def test_a_right_stream_passes() -> None:
    assert _failed(SINGLE, GOOD) == {}


@pytest.mark.parametrize(
    ("events", "check", "detail"),
    [
        (_stream(_call(None, "c1", "get_weather", '{"city": "Paris"}')), "index", "with no index"),
        (_stream(_call("0", "c1", "get_weather", '{"city": "Paris"}')), "index", "index '0'"),
        (_stream(_call(1, "c1", "get_weather", '{"city": "Paris"}')), "index", "at index 1 after 0"),
        (
            _stream(
                _call(0, "c1", "get_weather", '{"city": "Oslo"}'),
                _call(0, "c2", "get_weather", '{"city": "Rome"}'),
            ),
            "index",
            "event 3: a call with a new id 'c2' at index 0, which the call 'c1' already holds",
        ),
        (
            _stream(_call(0, "c1", "get_weather", '{"city"'), _call(0, "c2", args=': "Paris"}')),
            "ids",
            "changed its id",
        ),
        (_stream(_call(0, None, "get_weather", '{"city": "Paris"}')), "ids", "has no id"),
        (
            _stream(_call(0, "c1", "get_weather", '{"city": '), _call(0, "c1", args='"Paris"}')),
            "ids",
            "its id 'c1' came in 2 deltas; clients that join a call's delta strings (the openai "
            "package's stream helper) read 'c1c1'",
        ),
        (
            _stream(_call(0, "c1", "get_weather", '{"city": '), _call(0, None, "get_weather", '"Paris"}')),
            "name-first",
            "read 'get_weatherget_weather'",
        ),
        (
            _stream(_call(0, "c1", None, '{"city": '), _call(0, None, "get_weather", '"Paris"}')),
            "name-first",
            "arguments at event 2",
        ),
        (_stream(_call(0, "c1", "get_weather", '{"city": "Paris"')), "arguments", "not JSON"),
        (
            _stream(_call(0, "c1", "get_weather", '{"town": "Paris"}')),
            "arguments",
            "'city' is a required property",
        ),
        (
            _stream(_call(0, "c1", "get_weather", '{"city": "Paris", "unit": "kelvin"}')),
            "arguments",
            "not one of",
        ),
        (_stream(_call(0, "c1", "get_news", "{}")), "arguments", "not one of the tools offered"),
        (_stream(_call(0, "c1", "get_weather", '["Paris"]')), "arguments", "not an object"),
        (_stream(_call(0, "c1", "get_weather", "")), "arguments", "call 0: no arguments (an empty string"),
        (
            _stream(_call(0, "c1", "get_weather")),
            "arguments",
            "call 0: no arguments (an empty string or none)",
        ),
        (_stream(_event({"content": "</tool_call>"}), finish="stop"), "markers", "'</tool_call>' in content"),
        (_stream(_call(0, "c1", "get_weather", '{"city": "<|python_tag|>"}')), "markers", "call 0 arguments"),
        (
            _stream(_event({"content": "Hello!<|im_end|>"}), finish="stop"),
            "markers",
            "'<|im_end|>' in content",
        ),
        (
            _stream(_event({"content": "Hi<｜end▁of▁sentence｜>"}), finish="stop"),
            "markers",
            "'<｜end▁of▁sentence｜>' in content",
        ),
        (
            _stream(_call(0, "c1", "get_weather", '{"city": "Paris"}'), finish="stop"),
            "finish",
            "'stop' with 1 call",
        ),
        (_stream(_event({"content": "hi"}), finish="tool_calls"), "finish", "'tool_calls' with 0 call"),
        (_stream(_event({"content": "hi"}), finish="length"), "finish", "was cut"),
    ],
)
def test_each_failure_is_named(events: list[dict[str, Any]], check: str, detail: str) -> None:
    failed = _failed(SINGLE, events)
    assert check in failed and detail in failed[check], failed


def test_counts_in_the_details_agree_with_their_nouns() -> None:
    """One call is "1 call", not "1 calls" nor "1 call(s)"."""
    skipped = _stream(_call(0, "c1", "get_weather", '{"city": "Oslo"}'), _call(2, "c2", "get_weather", "{}"))
    assert "a new call at index 2 after 1 call" in _failed(SINGLE, skipped)["index"]
    assert "after 1 calls" not in _failed(SINGLE, skipped)["index"]
    assert (
        "after 0 calls"
        in _failed(SINGLE, _stream(_call(1, "c1", "get_weather", '{"city": "Paris"}')))["index"]
    )
    stopped = _stream(_call(0, "c1", "get_weather", '{"city": "Paris"}'), finish="stop")
    assert "'stop' with 1 call;" in _failed(SINGLE, stopped)["finish"]
    two = select(["parallel-calls"])[0]
    one = from_events(_stream(_call(0, "c1", "get_weather", '{"city": "Paris"}')))
    assert Row(two, "stream", {}, one).expectation() == ("the model made 1 call where two were asked for")
    none = select(["no-call"])[0]
    assert Row(none, "stream", {}, one).expectation() == ("the model called 1 tool where none was needed")


def test_a_call_without_arguments_gives_an_empty_object() -> None:
    """'' is what the arguments check refuses, not '{}' (the right answer for get_time)."""
    time_scenario = select(["empty-arguments"])[0]
    assert _failed(time_scenario, _stream(_call(0, "c1", "get_time", "{}"))) == {}
    empty = {"choices": [{"message": {"tool_calls": [{"id": "c1", "function": {"name": "get_time"}}]}}]}
    out = evaluate(
        time_scenario,
        from_message({**empty, "choices": [{**empty["choices"][0], "finish_reason": "tool_calls"}]}),
    )
    assert out["arguments"].status == "fail" and "no arguments" in out["arguments"].detail


def test_forced_choices() -> None:
    other = _stream(_call(0, "c1", "get_time", "{}"))
    assert "named 'get_weather' but the answer called 'get_time'" in _failed(NAMED, other)["forced"]
    assert (
        "no call came back" in _failed(REQUIRED, _stream(_event({"content": "x"}), finish="stop"))["forced"]
    )
    assert _failed(REQUIRED, other) == {}
    assert _failed(NAMED, _stream(_call(0, "c1", "get_weather", '{"city": "Rome"}'), finish="stop")) == {}


def test_the_stream_is_compared_with_the_non_streamed_answer() -> None:
    message = {"choices": [{"message": {"content": None, "tool_calls": []}, "finish_reason": "stop"}]}
    out = evaluate(SINGLE, from_events(GOOD), from_message(message))
    assert out["same-shape"].status == "fail" and "calls" in out["same-shape"].detail
    right = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert evaluate(SINGLE, from_events(GOOD), from_message(right))["same-shape"].status == "pass"
    as_object = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": "x", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert "not a string" in evaluate(SINGLE, from_message(as_object))["arguments"].detail


def test_markers_come_from_the_formats_and_skip_plain_words() -> None:
    markers = all_markers()
    assert {"<tool_call>", "</think>", "[TOOL_CALLS]", "<|python_tag|>"} <= set(markers)
    assert "functools" not in markers and not any(m.startswith("Here") for m in markers)


def test_schema_problems() -> None:
    schema = next(s for s in SCENARIOS if s.name == "nested-arguments").schema_of("create_event")
    good = {"title": "t", "when": {"date": "d", "hour": 14}, "attendees": [{"name": "Ana"}]}
    assert problems(good, schema) == []
    bad = {"title": "t", "when": {"hour": 1.5}, "attendees": [{"email": "x"}]}
    assert problems(bad, schema) == [
        "$.attendees[0]: 'name' is a required property",
        "$.when: 'date' is a required property",
        "$.when.hour: 1.5 is not of type 'integer'",
    ]
    assert problems(True, {"type": "integer"}) and not problems(2, {"type": "integer"})
    assert "not valid JSON Schema" in problems({}, {"type": "thing"})[0]


def test_the_reread_section_tells_the_named_spec_from_other_backends() -> None:
    import io

    from parsebridge.probe.render import render
    from parsebridge.probe.run import ProbeReport

    report = ProbeReport("http://127.0.0.1:1/v1", "m")
    diff = {"transcript": "probe-no-call", "a": "server/oneshot", "class": "content_differs", "detail": "x"}
    report.reread = {
        "how": "logprobs",
        "differences": [
            {**diff, "b": "dynamo:hermes/oneshot", "named": True},
            {**diff, "b": "vllm:hermes/oneshot", "named": False},
        ],
        "agree": [],
        "saved": "probe.jsonl",
    }
    out = io.StringIO()
    render(report, file=out)
    text = out.getvalue()
    assert "differs from --parser: probe-no-call: server/oneshot vs dynamo:hermes/oneshot" in text
    assert "another backend: probe-no-call: server/oneshot vs vllm:hermes/oneshot" in text
    assert report.reread_differs
    report.reread["differences"] = report.reread["differences"][1:]
    assert not report.reread_differs
    assert "0 transcripts saved to probe.jsonl" in text  # (none came: the file is no input for compare)
    report.reread["transcripts"] = 1
    out = io.StringIO()
    render(report, file=out)
    assert "1 transcript saved to probe.jsonl" in out.getvalue()


def test_arguments_sent_as_an_object_fail_that_check_only() -> None:
    """Streamed arguments given as a JSON object were dropped from the assembled call, so the
    stream also failed same-shape ("streamed [('get_weather', [])]") for arguments it did send."""
    call = {"id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    message = {"choices": [{"message": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]}
    stream = _stream(_event({"tool_calls": [{"index": 0, **call}]}))
    out = evaluate(SINGLE, from_events(stream), from_message(message))
    assert {k for k, o in out.items() if o.status == "fail"} == {"arguments"}
    assert "not a string" in out["arguments"].detail


def test_reasoning_in_both_fields_counts_once() -> None:
    """A server moving from reasoning_content to reasoning may send both with the same text; a
    client reads one. Joined, the reasoning read doubled ('thinkthink'), unlike any parser's
    reading of the raw output (a --parser difference, exit 1); two different texts are named."""
    both = {"reasoning_content": "think", "reasoning": "think"}
    message = {"choices": [{"message": {"content": "hi", **both}, "finish_reason": "stop"}]}
    assert from_message(message).reasoning == "think"
    stream = from_events(_stream(_event(both), _event({"content": "hi"}), finish="stop"))
    assert stream.reasoning == "think" and not stream.malformed
    other = from_events(_stream(_event({"reasoning_content": "a", "reasoning": "b"}), finish="stop"))
    assert other.malformed == [
        'event 2\'s delta reasoning_content and reasoning differ (a string ("a") vs a string ("b")): '
        "a client reads one of them"
    ]


NO_CALL = select(["no-call"])[0]


def _texts(*parts: str, key: str = "content") -> list[dict[str, Any]]:
    return _stream(*(_event({key: p}) for p in parts), finish="stop")


@pytest.mark.parametrize(
    ("scenario", "events", "said"),
    [
        (NO_CALL, _texts("Hel", "Hello", "Hello there", "Hello there!"), "content: each of its 4 deltas"),
        (
            NO_CALL,
            _texts("Let", "Let me", "Let me think", key="reasoning_content") + _texts("Hi"),
            "reasoning: each of its 3 deltas",
        ),
        (
            SINGLE,
            _stream(
                _call(0, "c1", "get_weather", '{"ci'),
                _call(0, args='{"city": "Pa'),
                _call(0, args='{"city": "Paris"}'),
            ),
            "call 0 arguments: each of its 3 deltas",
        ),
    ],
)
def test_cumulative_deltas_fail_increments(scenario: Any, events: list[dict[str, Any]], said: str) -> None:
    """A server whose deltas each repeat all the text so far passed every check: a client joining
    them shows 'HelHelloHello there...' (the arguments here also fail to parse, and did before)."""
    assert _failed(scenario, events)["increments"].startswith(said)


def test_cumulative_content_is_set_beside_the_non_streamed_answer() -> None:
    oneshot = from_message(
        {"choices": [{"index": 0, "message": {"content": "Hello there!"}, "finish_reason": "stop"}]}
    )
    stream = from_events(_texts("Hel", "Hello", "Hello there!"))
    detail = evaluate(NO_CALL, stream, oneshot)["increments"].detail
    assert detail.endswith("(the non-streamed answer is the last delta alone)")
    assert "'HelHelloHello there!'" in detail


@pytest.mark.parametrize(
    ("scenario", "events", "said"),
    [
        (NO_CALL, _texts("Hel", "lo", " there", "Hello there"), "content: its last delta repeats"),
        (
            NO_CALL,
            _texts("Let", " me", " think", "Let me think", key="reasoning") + _texts("Hi"),
            "reasoning: its last delta repeats",
        ),
        (
            SINGLE,
            _stream(
                _call(0, "c1", "get_weather", '{"city": '),
                _call(0, args='"Paris"}'),
                _call(0, args='{"city": "Paris"}'),
            ),
            "call 0 arguments: its last delta repeats",
        ),
    ],
)
def test_a_last_delta_that_repeats_the_whole_text_fails_increments(
    scenario: Any, events: list[dict[str, Any]], said: str
) -> None:
    """A server that streams increments and then sends the whole text again in its last delta
    passed `increments` (it wants three growing deltas): a client joining the deltas shows the
    text twice, 'Hello thereHello there'."""
    failed = _failed(scenario, events)
    assert failed["increments"].startswith(said)
    assert "shows it twice" in failed["increments"]


def test_one_delta_then_the_same_again_fails_where_the_non_streamed_answer_is_it() -> None:
    oneshot = from_message(
        {"choices": [{"index": 0, "message": {"content": "Hello there"}, "finish_reason": "stop"}]}
    )
    stream = from_events(_texts("Hello there", "Hello there"))
    assert evaluate(NO_CALL, stream, oneshot)["increments"].status == "fail"
    assert evaluate(NO_CALL, stream)["increments"].status == "pass"  # alone: a model may say it twice


@pytest.mark.parametrize(
    "parts",
    [
        ("ha", "ha", "haha"),  # one unit again and again: text a model writes
        ("=", "=", "=="),
        ("Hel", "lo", "Hel"),  # the last delta repeats only part of the text
        ("ha", "ha", "ha", "ha"),  # the same delta again is text a model writes, not a repeat of all
        ("Hel", "Hello"),  # two deltas: too little to tell
        ("a", "ab", "c", "cd"),  # one chain broken
        ("Hello", " there", ",", " friend"),
        ("=", "==", "=", "=="),
    ],
)
def test_increments_that_look_alike_pass(parts: tuple[str, ...]) -> None:
    assert evaluate(NO_CALL, from_events(_texts(*parts)))["increments"].status == "pass"

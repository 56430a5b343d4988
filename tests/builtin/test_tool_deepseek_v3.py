"""builtin:deepseek_v3 — V3 fenced and V3.1 bodies, section markers, streaming equivalence."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _streaming import (
    EXAMPLES,
    assert_no_text_lost,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    dumps_style,
    expected_content,
    json_args,
    max_held,
    mixed_outputs,
    names,
    norm,
    random_chunkings,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.deepseek_v3 import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    SEP,
    DeepSeekV3ToolParser,
)

P = DeepSeekV3ToolParser(conventions="lossless")
MARKERS = (CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END)


def v3(name: str, args: str) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{args}\n```{CALL_END}"


def v31(name: str, args: str) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{args}{CALL_END}"


def section(*calls: str, sep: str = "\n") -> str:
    return CALLS_BEGIN + sep.join(calls) + CALLS_END


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity_and_result_format() -> None:
    assert P.spec == "builtin:deepseek_v3" and P.markers[0] == CALLS_BEGIN
    assert P.format_tool_result("c", {"a": 1}) == '<｜tool▁output▁begin｜>{"a": 1}<｜tool▁output▁end｜>'


def test_v3_one_and_several() -> None:
    check(section(v3("get", '{"city": "Rome"}')), None, [("get", {"city": "Rome"}, None)])
    text = "Let me look.\n" + section(v3("a", '{"x": 1}'), v3("b", "{}")) + "\nDone"
    check(text, "Let me look.\n\nDone", [("a", {"x": 1}, None), ("b", {}, None)])


def test_v31_body_and_function_name() -> None:
    check(
        section(v31("a", '{"x": [1]}'), v31("b", "{}"), sep=""),
        None,
        [("a", {"x": [1]}, None), ("b", {}, None)],
    )
    check(section(v31("function", '{"k": 1}')), None, [("function", {"k": 1}, None)])
    check(v31("bare", "{}"), None, [("bare", {}, None)])


def test_no_call() -> None:
    check("hello", "hello", [])
    check("", None, [])


def test_unicode_nested_marker_in_string() -> None:
    args = {"s": 'a"b\\c 😀 漢 ' + CALL_END + CALLS_END, "n": {"l": [1, {"z": None}]}, "e": {}}
    body = json.dumps(args, ensure_ascii=False)
    check(section(v3("f", body)), None, [("f", args, None)])
    check(section(v31("f", body)), None, [("f", args, None)])


def test_unrecoverable_is_content() -> None:
    bad = CALL_BEGIN + "junk" + CALL_END
    check(section(bad), section(bad), [])
    check(CALLS_BEGIN + CALLS_END, CALLS_BEGIN + CALLS_END, [])
    check(section(v3("a", "{}"), bad), "\n" + bad, [("a", {}, None)])


def test_invalid_arguments() -> None:
    check(
        section(v3("a", "[1, 2]")),
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n[1, 2]\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [],
    )
    check(
        section(v31("a", "not json")),
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>not json<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [],
    )
    check(
        section(v3("a", '{"x": 1,}')),
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{"x": 1,}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [],
    )


def test_truncated() -> None:
    check(
        CALLS_BEGIN + CALL_BEGIN + "function" + SEP + 'get\n```json\n{"a": [1',
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get\n```json\n{"a": [1',
        [],
    )
    check(CALLS_BEGIN + v31("a", '{"x": 1}'), None, [("a", {"x": 1}, None)])
    check("x" + CALLS_BEGIN + CALL_BEGIN + "func", "x" + CALLS_BEGIN + CALL_BEGIN + "func", [])
    check(CALLS_BEGIN, CALLS_BEGIN, [])
    check("a<｜tool▁ca", "a<｜tool▁ca", [])


def test_never_raises() -> None:
    for text in [
        CALLS_END * 2,
        SEP,
        CALL_BEGIN * 3,
        "\ud800" + CALL_BEGIN + "\x00",
        CALL_BEGIN + "function" + SEP + "```",
    ]:
        assert_streams_like_oneshot(P, text)


def _section(draw: Any) -> list[tuple[str, Any]]:
    calls = draw(st.lists(st.tuples(names, json_args(MARKERS), st.booleans()), min_size=1, max_size=3))
    rendered = [(v3 if new else v31)(n, draw(dumps_style)(a)) for n, a, new in calls]
    gap = draw(st.sampled_from(["", "\n"]))
    return [
        ("call", (calls[0][0], calls[0][1], CALLS_BEGIN + gap.join(rendered) + CALLS_END)),
        *(("call", (n, a, "")) for n, a, _ in calls[1:]),
    ]


def outputs() -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
    return mixed_outputs(
        [_section],
        bad=[section(CALL_BEGIN + "x" + CALL_END), SEP, CALLS_END, "<｜tool"],
        cut=[CALLS_BEGIN + CALL_BEGIN + "function" + SEP + "t\n```json\n{", CALL_BEGIN],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    chunks = data.draw(chunk_plan(text))
    one = assert_streams_like_oneshot(P, text, [chunks])
    assert_no_text_lost(P, text, (*MARKERS, "function", "```json", "```"), structural='{}[]:,"\\')
    if items is not None:
        assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (*MARKERS, "function", "```json\n", "```"))


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and name."""
    text = section(v3("f", json.dumps({"s": "x" * 20000})))
    assert max_held(P, text) < 128


@pytest.mark.parametrize(
    "body", [v3("get_weather", '{"city": "Paris"}'), v31("get_weather", '{"city": "Paris"}')]
)
def test_servers_show_a_call_outside_a_section_as_text(body: str) -> None:
    """vLLM 0.33 and SGLang 0.5.23 read no call in a call marker without its section (issue 39);
    lossless reads it. Streamed whole tokens (the exact acts) and at random chunkings alike."""
    servers = DeepSeekV3ToolParser()
    text = "Sure. " + body + CALLS_END
    tokens = [piece for part in text.split(CALL_BEGIN) for piece in (CALL_BEGIN, part)][1:]
    for chunks in [tokens, *random_chunkings(text, seed=len(text))]:
        stream = servers.stream()
        for chunk in chunks:
            stream.feed(chunk)
        result = stream.finish()
        assert (result.content, result.tool_calls) == (text, [])
    inside = servers.parse("Sure. " + section(body))
    assert [c.name for c in inside.tool_calls] == ["get_weather"]
    assert [c.name for c in P.parse(text).tool_calls] == ["get_weather"]

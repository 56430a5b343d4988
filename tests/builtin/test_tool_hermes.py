"""builtin:hermes — one-shot behaviour, the malformed-output policy, streaming equivalence."""

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
    run_stream,
    ws,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.hermes import HermesToolParser

P = HermesToolParser(conventions="lossless")
MARKERS = ("<tool_call>", "</tool_call>")


def block(name: str, args: Any, key: str = "arguments") -> str:
    return "<tool_call>\n" + json.dumps({"name": name, key: args}, ensure_ascii=False) + "\n</tool_call>"


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity() -> None:
    assert P.spec == "builtin:hermes"
    assert P.markers[0] == "<tool_call>"
    assert P.has_tool_calls("x <tool_call>")


def test_one_call() -> None:
    check(block("get_weather", {"city": "Paris"}), None, [("get_weather", {"city": "Paris"}, None)])


def test_several_calls_and_content() -> None:
    text = "Let me check.\n" + block("a", {"x": 1}) + "\n" + block("b", {}) + "\n"
    check(text, "Let me check.\n", [("a", {"x": 1}, None), ("b", {}, None)])


def test_content_after() -> None:
    check(block("a", {}) + "\n\nDone.", "\n\nDone.", [("a", {}, None)])


def test_no_call() -> None:
    check("just text\n", "just text\n", [])
    check("", None, [])
    check("   ", "   ", [])


def test_unicode_escapes_nested() -> None:
    args = {"q": 'he said "hi" \\ 😀 漢字', "nested": {"a": [1, {"b": None}], "t": True}, "e": ""}
    check(block("f", args), None, [("f", args, None)])
    text = '<tool_call>{"name": "f", "arguments": {"s": "\\u00e9\\"\\n"}}</tool_call>'
    check(text, None, [("f", {"s": 'é"\n'}, None)])


def test_parameters_synonym_and_missing_arguments() -> None:
    check(block("f", {"a": 1}, key="parameters"), None, [("f", {"a": 1}, None)])
    check('<tool_call>{"name": "f"}</tool_call>', None, [("f", {}, None)])
    check('<tool_call>{"name": "f", "arguments": {}}</tool_call>', None, [("f", {}, None)])


def test_name_after_arguments() -> None:
    check(
        '<tool_call>{"arguments": {"a": [1]}, "name": "late"}</tool_call>', None, [("late", {"a": [1]}, None)]
    )


def test_marker_inside_argument_string() -> None:
    args = {"code": "print('</tool_call>')", "x": "<tool_call>"}
    check(block("run", args) + " tail", " tail", [("run", args, None)])


def test_unrecoverable_name_is_content() -> None:
    for text in [
        "<tool_call>not json</tool_call>",
        '<tool_call>{"foo": 1}</tool_call>',
        "<tool_call></tool_call>",
    ]:
        check(text + "\n" + block("a", {}), text + "\n", [("a", {}, None)])
    check(
        '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
        '<tool_call>{"name": 5, "arguments": {}}</tool_call>',
        [],
    )


def test_invalid_arguments_flagged() -> None:
    check(
        '<tool_call>{"name": "f", "arguments": [1, 2]}</tool_call>',
        '<tool_call>{"name": "f", "arguments": [1, 2]}</tool_call>',
        [],
    )
    check(
        '<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>',
        '<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>',
        [],
    )
    check(
        '<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>',
        [],
    )
    # body breaks after the name: the raw rest of the body is the flagged text
    check(
        '<tool_call>{"name": "f", arguments: {"a": 1}}</tool_call>',
        '<tool_call>{"name": "f", arguments: {"a": 1}}</tool_call>',
        [],
    )
    # missing closing brace of the outer object: arguments are complete, call is valid
    check(
        '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>',
        [],
    )
    # stray extra brace after the object is ignored
    check('<tool_call>{"name": "f", "arguments": {"a": 1}}}</tool_call>', None, [("f", {"a": 1}, None)])


def test_truncated() -> None:
    check(
        '<tool_call>\n{"name": "f", "arguments": {"a": "x',
        '<tool_call>\n{"name": "f", "arguments": {"a": "x',
        [],
    )
    # (the call object closed: a call, though </tool_call> never came)
    check('<tool_call>\n{"name": "f", "arguments": {"a": 1}}', None, [("f", {"a": 1}, None)])
    check('<tool_call>\n{"name": "f"', '<tool_call>\n{"name": "f"', [])
    check('ok <tool_call>\n{"na', 'ok <tool_call>\n{"na', [])
    check("<tool_call>", "<tool_call>", [])
    check("x <tool_ca", "x <tool_ca", [])


def test_new_block_inside_block_ends_it() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"a": ' + block("g", {})
    check(text, '<tool_call>{"name": "f", "arguments": {"a": ', [("g", {}, None)])


def test_never_raises_on_odd_input() -> None:
    for text in [
        "</tool_call></tool_call>",
        "\ud800<tool_call>\x00",
        "<tool_call>" * 3,
        '<tool_call>{"name": "\\ud800"}',
    ]:
        assert_streams_like_oneshot(P, text)


def test_raw_text_and_format_tool_result() -> None:
    text = "hi " + block("a", {"x": 1})
    assert P.parse(text).tool_calls[0].raw_text == block("a", {"x": 1})
    assert P.format_tool_result("call_1", {"t": 20}) == '<tool_response>\n{"t": 20}\n</tool_response>'


def test_a_call_is_shown_once_whole() -> None:
    """A call is held until its block ends (`whole_calls`: a client never sees a call it will not get the
    rest of), then shown in one delta; while held, its text is what the stream holds back."""
    s = P.stream()
    d = s.feed('<tool_call>\n{"name": "f", "arguments": {"a": "lo')
    assert not d.tool_calls
    assert s.pending_text() == '<tool_call>\n{"name": "f", "arguments": {"a": "lo'
    assert not s.feed("ng").tool_calls
    assert not s.feed('"}}\n</tool_').tool_calls
    (call,) = s.feed("call>").tool_calls
    assert (call.name, call.arguments) == ("f", '{"a": "long"}')
    assert s.pending_text() == ""
    result, _d, _s = run_stream(P, [block("f", {"a": "long"})])
    assert s.finish().tool_calls[0].arguments == result.tool_calls[0].arguments == {"a": "long"}


def _call(draw: Any) -> list[tuple[str, Any]]:
    name, args = draw(names), draw(json_args(MARKERS))
    key = draw(st.sampled_from(["arguments", "parameters"]))
    body = draw(dumps_style)({"name": name, key: args})
    return [("call", (name, args, f"<tool_call>{draw(ws)}{body}{draw(ws)}</tool_call>"))]


def outputs() -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
    return mixed_outputs(
        [_call, _call],
        bad=[
            "<tool_call>oops</tool_call>",
            '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
            '<tool_call>{"name": "g", "arguments": {"a": </tool_call>',
            '<tool_call>{"x": "</tool_call>"}</tool_call>',
            "</tool_call>",
            "<tool_",
        ],
        cut=['<tool_call>{"name": "t", "arguments": {"a": "x', "<tool_call>{"],
        most=4,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    chunks = data.draw(chunk_plan(text))
    one = assert_streams_like_oneshot(P, text, [chunks])
    assert_no_text_lost(P, text, (*MARKERS, "name", "arguments", "parameters"), structural='{}[]:,"\\')
    if items is not None:
        assert norm(one) == (
            expected_content(items),
            [(v[0], v[1], None) for k, v in items if k == "call"],
        )


@pytest.mark.parametrize("n", [1, 3])
def test_many_calls_per_chunk(n: int) -> None:
    text = "".join(block(f"f{i}", {"i": i}) for i in range(n))
    assert_streams_like_oneshot(P, text, [[text[: len(text) // 2], text[len(text) // 2 :]]])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, MARKERS)


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and name."""
    text = (
        "<tool_call>\n"
        + json.dumps({"name": "f", "arguments": {"s": "x</tool_call>" * 2000}})
        + "\n</tool_call>" * 2
    )
    assert max_held(P, text) < 128

"""builtin:mistral — array, single-object and name{json} forms, streaming equivalence."""

from __future__ import annotations

import json
from typing import Any

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

from parsebridge.adapters.builtin.mistral import MistralToolParser

P = MistralToolParser(conventions="lossless")
TC = "[TOOL_CALLS]"


def arr(*calls: tuple[str, Any]) -> str:
    return TC + json.dumps([{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False)


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity_and_result_format() -> None:
    assert P.spec == "builtin:mistral" and P.markers[0] == TC
    assert (
        P.format_tool_result("abc123def", {"t": 1})
        == '[TOOL_RESULTS]{"call_id": "abc123def", "content": {"t": 1}}[/TOOL_RESULTS]'
    )


def test_array_form() -> None:
    check(arr(("a", {"x": 1})), None, [("a", {"x": 1}, None)])
    check(
        "Sure.\n" + arr(("a", {}), ("b", {"y": [1, 2]})) + "\nok",
        "Sure.\n\nok",
        [("a", {}, None), ("b", {"y": [1, 2]}, None)],
    )


def test_name_form_and_args_form() -> None:
    check(TC + 'a{"x": 1}' + TC + "b{}", None, [("a", {"x": 1}, None), ("b", {}, None)])
    check(TC + 'get_weather[ARGS]{"city": "Paris"}', None, [("get_weather", {"city": "Paris"}, None)])
    check("pre " + TC + 'a{"x": 1} post', "pre  post", [("a", {"x": 1}, None)])


def test_single_object_form() -> None:
    check(TC + ' {"name": "a", "arguments": {"k": 2}}', None, [("a", {"k": 2}, None)])


def test_no_call() -> None:
    check("plain [TOOL] text", "plain [TOOL] text", [])
    check("", None, [])


def test_unicode_nested_empty_and_marker_in_string() -> None:
    args = {"s": 'a "q" \\ 😀 漢 [TOOL_CALLS]x{}', "n": {"l": [{"m": None}]}}
    check(arr(("f", args)), None, [("f", args, None)])
    check(TC + "f" + json.dumps(args), None, [("f", args, None)])
    check(TC + "f{}", None, [("f", {}, None)])


def test_unrecoverable_and_invalid() -> None:
    check(TC + " sorry", TC + " sorry", [])
    check(TC + "[]", TC + "[]", [])
    check(TC + '[{"foo": 1}]', TC + '[{"foo": 1}]', [])
    check(TC + '[{"name": "a", "arguments": {}}, {"foo": 1}]', ', {"foo": 1}]', [("a", {}, None)])
    check(TC + '[{"name": "a", "arguments": [1]}]', '[TOOL_CALLS][{"name": "a", "arguments": [1]}]', [])
    check(TC + "a[ARGS]nope", "[TOOL_CALLS]a[ARGS]nope", [])


def test_truncated() -> None:
    check(TC + 'a{"x": [1', '[TOOL_CALLS]a{"x": [1', [])
    check(TC + '[{"name": "a", "arguments": {"x": "y', '[TOOL_CALLS][{"name": "a", "arguments": {"x": "y', [])
    check(TC + '[{"name": "a", "arguments": {}},', None, [("a", {}, None)])
    check(TC + '[{"na', TC + '[{"na', [])
    check(TC + "get_wea", TC + "get_wea", [])
    check("x [TOOL_CA", "x [TOOL_CA", [])


def test_never_raises() -> None:
    for text in [TC * 3, "[ARGS]", "\ud800" + TC + "\x00", TC + "[" * 40, TC + "a[ARGS"]:
        assert_streams_like_oneshot(P, text)


def _named(draw: Any) -> list[tuple[str, Any]]:
    name, args = draw(names), draw(json_args([TC]))
    sep = draw(st.sampled_from(["", "[ARGS]"]))
    return [("call", (name, args, TC + name + sep + draw(dumps_style)(args)))]


def _array(draw: Any) -> list[tuple[str, Any]]:
    calls = draw(st.lists(st.tuples(names, json_args([TC])), min_size=1, max_size=3))
    body = draw(dumps_style)([{"name": n, "arguments": a} for n, a in calls])
    first = ("call", (calls[0][0], calls[0][1], TC + draw(st.sampled_from(["", " "])) + body))
    return [first, *(("call", (n, a, "")) for n, a in calls[1:])]


def outputs() -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
    return mixed_outputs(
        [_named, _array],
        bad=[TC + " no", TC + "[]", TC + '[{"x": 1}]', "[ARGS]", "[TOOL_"],
        cut=[TC + 'f{"a": "x', TC + "[{", TC + "fn"],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    chunks = data.draw(chunk_plan(text))
    one = assert_streams_like_oneshot(P, text, [chunks])
    assert_no_text_lost(P, text, (TC, "[ARGS]", "name", "arguments"), structural='{}[]:,"\\')
    if items is not None:
        assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (TC, "[ARGS]", '{"name": "f", "arguments": ', "f{", "[{"))


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and name."""
    text = TC + "f" + json.dumps({"s": "[TOOL_CALLS]" * 2000})
    assert max_held(P, text) < 128

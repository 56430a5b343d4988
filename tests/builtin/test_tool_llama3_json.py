"""builtin:llama3_json — leading JSON call objects, python_tag, streaming equivalence."""

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
    names,
    noise,
    norm,
    random_chunkings,
    ws,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.llama3_json import Llama3JsonToolParser

P = Llama3JsonToolParser(conventions="lossless")
TAG = "<|python_tag|>"


def obj(name: str, args: Any, key: str = "parameters") -> str:
    return json.dumps({"name": name, key: args}, ensure_ascii=False)


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity_and_result_format() -> None:
    assert P.spec == "builtin:llama3_json" and P.markers == (TAG,)
    assert P.has_tool_calls('  {"name": "x"}') and not P.has_tool_calls("hi {")
    assert P.format_tool_result("c", {"a": 1}) == '{"a": 1}'
    assert P.format_tool_result("c", "plain") == "plain"


def test_one_call_with_and_without_tag() -> None:
    check(obj("get", {"city": "Oslo"}), None, [("get", {"city": "Oslo"}, None)])
    check(TAG + obj("get", {"city": "Oslo"}, "arguments"), None, [("get", {"city": "Oslo"}, None)])
    check("\n  " + TAG + " " + obj("get", {}) + "\n", None, [("get", {}, None)])


def test_several_calls_separators() -> None:
    text = obj("a", {"x": 1}) + "; " + obj("b", {}) + "\n" + obj("c", {"y": [1]}) + ";"
    check(text, None, [("a", {"x": 1}, None), ("b", {}, None), ("c", {"y": [1]}, None)])
    check(TAG + obj("a", {}) + TAG + obj("b", {}), None, [("a", {}, None), ("b", {}, None)])


def test_content_after_and_plain_content() -> None:
    check(obj("a", {}) + "\n\nDone.", "\n\nDone.", [("a", {}, None)])
    # a call object after prose is a call (vLLM and SGLang read it too)
    check(obj("a", {}) + "; then " + obj("b", {}), "; then ", [("a", {}, None), ("b", {}, None)])
    check("The answer is {x}", "The answer is {x}", [])
    check("", None, [])
    check("  \n", "  \n", [])


def test_unicode_nested_empty() -> None:
    args = {"s": 'q"uote\\ 😀 漢', "n": {"l": [1, 2, {"z": None}]}, "e": {}}
    check(obj("f", args), None, [("f", args, None)])
    check('{"name": "f", "parameters": {}}', None, [("f", {}, None)])
    check('{"name": "f"}', None, [("f", {}, None)])


def test_marker_inside_argument() -> None:
    args = {"code": TAG + '{"name": "x"}; }'}
    check(obj("run", args), None, [("run", args, None)])


def test_unrecoverable_and_invalid() -> None:
    check('{"result": 42} is the JSON', '{"result": 42} is the JSON', [])
    check(TAG + "print('hi')", TAG + "print('hi')", [])
    check('{"name": "f", "parameters": "x=1"}', '{"name": "f", "parameters": "x=1"}', [])
    check(
        '{"name": "f", "parameters": [1]}; ' + obj("g", {}),
        '{"name": "f", "parameters": [1]}',
        [("g", {}, None)],
    )
    # (the object broke: no call, `whole_calls`; its text and the rest are content)
    check('{"name": "f", "parameters": {}, oops} tail', '{"name": "f", "parameters": {}, oops} tail', [])


def test_truncated() -> None:
    check('{"name": "f", "parameters": {"a": [1, ', '{"name": "f", "parameters": {"a": [1, ', [])
    check('{"name": "f", "parameters": {"a": 1}}', None, [("f", {"a": 1}, None)])
    check('{"nam', '{"nam', [])
    check(TAG, TAG, [])


def test_never_raises() -> None:
    for text in ["{", "}", "\ud800{", '{"name": "\\ud83d"}', TAG * 3, "{" * 50, "{\x00"]:
        assert_streams_like_oneshot(P, text)


@st.composite
def outputs(draw: Any) -> tuple[str, list[tuple[str, Any]] | None]:
    items: list[tuple[str, Any]] = []
    valid = True
    if draw(st.booleans()):
        items.append(("text", draw(ws)))
    prefix = draw(st.sampled_from(["", TAG]))
    for i in range(draw(st.integers(0, 3))):
        if i:
            items.append(("text", draw(st.sampled_from(["; ", ";", "\n", " ; "]))))
        name, args = draw(names), draw(json_args([TAG]))
        key = draw(st.sampled_from(["arguments", "parameters"]))
        items.append(("call", (name, args, draw(dumps_style)({"name": name, key: args}))))
    tail = draw(st.sampled_from(["none", "ws", "text", "bad", "trunc"]))
    if tail == "ws":
        items.append(("text", draw(ws)))
    elif tail == "text":
        items.append(("text", draw(ws) + draw(noise)))
    elif tail == "bad":
        valid = False
        items.append(
            ("text", draw(st.sampled_from(['{"foo": 1}', TAG + "x", '{"name": "f", "parameters": [1]}'])))
        )
    elif tail == "trunc":
        valid = False
        items.append(("text", draw(st.sampled_from(['{"name": "t", "parameters": {"a": "x', '{"na', TAG]))))
    if not any(k == "call" for k, _ in items):
        prefix = ""
    text = prefix + "".join(v[2] if k == "call" else v for k, v in items)
    if prefix and items and items[0][0] == "text":  # whitespace after the tag belongs to the call
        valid = False
    # separators between calls are not content: drop them from the expectation
    exp = [it for i, it in enumerate(items) if not (it[0] == "text" and ";" in it[1] and i > 0)]
    return text, (exp if valid else None)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    chunks = data.draw(chunk_plan(text))
    one = assert_streams_like_oneshot(P, text, [chunks])
    assert_no_text_lost(P, text, (TAG, "name", "arguments", "parameters"), structural='{}[]:,"\\;')
    if items is not None:
        assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (TAG, '{"name": "f", "parameters": ', ";"))


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and name."""
    text = obj("f", {"s": "x;" * 10000}) + "; " + obj("g", {})
    assert max_held(P, text) < 128

"""builtin:json — the generic gateway format: a bare or ```json-fenced call object or array."""

from __future__ import annotations

from functools import partial
from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.json_calls import JsonToolParser
from parsebridge.formats import json_calls as fmt

P = JsonToolParser(conventions="lossless")
MARKERS = ("```",)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:json"
    assert P.has_tool_calls(' {"name": "a"}') and P.has_tool_calls("[") and not P.has_tool_calls("hello")
    assert P.format_tool_result("c", "done") == "done"


def test_object_array_and_fence() -> None:
    jp.check(P, '{"name": "a", "arguments": {"x": 1}}', None, [("a", {"x": 1}, None)])
    jp.check(P, '{"arguments": {"x": 1}, "name": "a"}', None, [("a", {"x": 1}, None)])
    jp.check(P, '[{"name": "a", "parameters": {}}, {"name": "b"}]', None, [("a", {}, None), ("b", {}, None)])
    jp.check(P, 'Sure:\n```json\n{"name": "a", "arguments": {}}\n```', "Sure:\n", [("a", {}, None)])
    jp.check(P, '{"name": "a", "arguments": {}}\nThat is all.', "\nThat is all.", [("a", {}, None)])


def test_answers_are_content() -> None:
    for text in ('{"answer": 42}', "[1, 2]", "42", "hello {", '```js\nlet x = {"a": 1}\n```'):
        jp.check(P, text, text, [])
    jp.check(P, "   ", "   ", [])


def test_invalid_and_truncated() -> None:
    jp.check(P, '{"name": "a", "arguments": "x"}', '{"name": "a", "arguments": "x"}', [])
    jp.check(P, '{"name": "a", "arguments": {"k": [1, 2', '{"name": "a", "arguments": {"k": [1, 2', [])
    jp.check(P, '{"name": "a", "arguments": {}} } trailing', " } trailing", [("a", {}, None)])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), array=st.booleans())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject, array: bool) -> None:
    jp.streaming_equals_oneshot(P, partial(fmt.render, fence=True, array=array), MARKERS, data)
    jp.streaming_equals_oneshot(P, partial(fmt.render, array=True), MARKERS, data, bare=True)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, partial(fmt.render, fence=True), "```}")
    jp.steps_grow_linearly(P, partial(fmt.render, array=True), monkeypatch)

"""builtin:granite / builtin:granite_20b_fc — JSON call arrays after <|tool_call|>, <function_call> objects."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
import pytest
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.granite import GraniteFcToolParser, GraniteToolParser
from parsebridge.formats import granite as fmt

P = GraniteToolParser(conventions="lossless")
FC = GraniteFcToolParser(conventions="lossless")
MARKERS = (fmt.TAG, fmt.TEXT_TAG)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:granite" and FC.spec == "builtin:granite_20b_fc"
    assert (
        P.has_tool_calls("x <|tool_call|>[")
        and P.has_tool_calls("<tool_call>[")
        and not P.has_tool_calls("[{}]")
    )
    assert (
        P.format_tool_result("c1", {"t": 21})
        == '<|start_of_role|>tool<|end_of_role|>{"t": 21}<|end_of_text|>'
    )
    assert FC.format_tool_result("c1", "ok") == "<|start_of_role|>tool<|end_of_role|>ok<|end_of_text|>"


def test_array_calls_and_text_around() -> None:
    text = 'Sure. <|tool_call|>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "parameters": {}}] Then more.'
    jp.check(P, text, "Sure.  Then more.", [("a", {"x": 1}, None), ("b", {}, None)])
    jp.check(P, '<tool_call> [{"name": "a", "arguments": {}}]', None, [("a", {}, None)])


def test_marker_inside_string_and_empty_array() -> None:
    jp.check(
        P,
        '<|tool_call|>[{"name": "a", "arguments": {"s": "]<|tool_call|>["}}]',
        None,
        [("a", {"s": "]<|tool_call|>["}, None)],
    )
    jp.check(P, "<|tool_call|>[]", None, [])


def test_malformed_and_truncated() -> None:
    jp.check(P, "<|tool_call|>not json", "<|tool_call|>not json", [])
    jp.check(P, '<|tool_call|>[{"arguments": {}}]', '<|tool_call|>[{"arguments": {}}]', [])
    jp.check(
        P,
        '<|tool_call|>[{"name": "a", "arguments": [1]}]',
        '<|tool_call|>[{"name": "a", "arguments": [1]}]',
        [],
    )
    jp.check(
        P,
        '<|tool_call|>[{"name": "a", "arguments": {"x": "ab',
        '<|tool_call|>[{"name": "a", "arguments": {"x": "ab',
        [],
    )
    jp.check(P, '<|tool_call|>[{"name": "a", "arguments": {"x": 1}}', None, [("a", {"x": 1}, None)])
    # an array that cannot continue ends there; the rest is content
    jp.check(P, '<|tool_call|>[{"name": "a", "arguments": {}} oops', "oops", [("a", {}, None)])


def test_granite_20b_fc() -> None:
    text = 'Let me see.\n<function_call> {"name": "a", "arguments": {"x": 1}}\n<function_call> {"name": "b", "arguments": {}}'
    jp.check(FC, text, "Let me see.\n", [("a", {"x": 1}, None), ("b", {}, None)])
    jp.check(FC, "<function_call> nothing", "<function_call> nothing", [])
    jp.check(
        FC,
        '<function_call> {"name": "a", "arguments": {"q": "x',
        '<function_call> {"name": "a", "arguments": {"q": "x',
        [],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.render, MARKERS, data)
    jp.streaming_equals_oneshot(FC, fmt.render_fc, (fmt.FC_TAG,), data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)
    jp.soup(FC, (fmt.FC_TAG,), data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "]<|tool_call|>[")
    jp.holds_little(FC, fmt.render_fc, "<function_call> {")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)


@pytest.mark.parametrize("n", [1, 7])
def test_many_calls_per_chunk(n: int) -> None:
    calls = [(f"f{i}", {"i": i}) for i in range(n)]
    jp.check(P, fmt.render(calls), None, [(name, args, None) for name, args in calls])

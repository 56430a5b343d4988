"""builtin:xlam — JSON call arrays: bare, ```json-fenced, after [TOOL_CALLS], in <tool_call>."""

from __future__ import annotations

from functools import partial
from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.xlam import XlamToolParser
from parsebridge.formats import xlam as fmt

P = XlamToolParser(conventions="lossless")
MARKERS = ("```", "[TOOL_CALLS]", "<tool_call>", "</tool_call>")


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:xlam"
    assert P.has_tool_calls('  [{"name"') and P.has_tool_calls("x ```json") and not P.has_tool_calls("plain")
    assert P.format_tool_result("c", {"a": "é"}) == '{"a": "é"}'


def test_forms() -> None:
    call = [("a", {"x": 1}, None)]
    jp.check(P, '\n[{"name": "a", "arguments": {"x": 1}}]\n', None, call)
    jp.check(P, 'Here:\n```json\n[{"name": "a", "arguments": {"x": 1}}]\n```\nok', "Here:\n\nok", call)
    jp.check(P, '```\n[{"name": "a", "arguments": {"x": 1}}]\n```', None, call)
    jp.check(P, '[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}]', None, call)
    jp.check(P, '<tool_call>[{"name": "a", "arguments": {"x": 1}}]</tool_call>', None, call)


def test_not_calls() -> None:
    for text in (
        "[1, 2] are numbers",
        "```python\nprint(1)\n```\n",
        '[{"id": 3}]',
        "x [ {",
        "[TOOL_CALLS] hi",
    ):
        jp.check(P, text, text, [])
    jp.check(P, 'text before [{"name": "a"}]', 'text before [{"name": "a"}]', [])  # bare arrays only lead


def test_bare_array_after_think_end() -> None:
    """Without a reasoning parser, the array may lead right after </think>; the thinking stays content."""
    text = '<think>Weather first.</think>\n[{"name": "a", "arguments": {"x": 1}}]'
    jp.check(P, text, "<think>Weather first.</think>\n", [("a", {"x": 1}, None)])
    jp.check(P, "<think>x</think> [1, 2]", "<think>x</think> [1, 2]", [])


def test_truncated_and_invalid() -> None:
    jp.check(P, '[{"name": "a", "arguments": {"x": "y', '[{"name": "a", "arguments": {"x": "y', [])
    jp.check(P, '[{"name": "a", "arguments": "x=1"}]', '[{"name": "a", "arguments": "x=1"}]', [])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), wrap=st.sampled_from(["fence", "tool_calls", "tag"]))
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject, wrap: str) -> None:
    jp.streaming_equals_oneshot(P, partial(fmt.render, wrap=wrap), MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_bare_array(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.render, MARKERS, data, bare=True)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, partial(fmt.render, wrap="fence"), "```]")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

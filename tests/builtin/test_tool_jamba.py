"""builtin:jamba — <tool_calls>[…]</tool_calls> (Jamba, Hunyuan-A13B)."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.jamba import JambaToolParser
from parsebridge.formats import jamba as fmt

P = JambaToolParser(conventions="lossless")
MARKERS = (fmt.START, fmt.END)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:jamba" and P.markers == MARKERS
    assert (
        P.format_tool_result("c", {"ok": True}) == '{"ok": true}' and P.format_tool_result("c", "hi") == "hi"
    )


def test_calls_and_text() -> None:
    text = 'Checking.\n<tool_calls>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]</tool_calls>\nDone.'
    jp.check(P, text, "Checking.\n\nDone.", [("a", {"x": 1}, None), ("b", {}, None)])


def test_malformed() -> None:
    jp.check(P, "<tool_calls>nope</tool_calls>", "<tool_calls>nope</tool_calls>", [])
    jp.check(P, "<tool_calls></tool_calls>", "<tool_calls></tool_calls>", [])
    # a nameless element after a call: content in place; the array goes on
    text = (
        '<tool_calls>[{"name": "a", "arguments": {}}, {"x": 1}, {"name": "b", "arguments": "s"}]</tool_calls>'
    )
    jp.check(P, text, '{"x": 1}{"name": "b", "arguments": "s"}', [("a", {}, None)])
    # junk between the array and the end marker is content (issue 39: it used to be ignored)
    jp.check(P, '<tool_calls>[{"name": "a", "arguments": {}}] x ]</tool_calls> y', "x ] y", [("a", {}, None)])


def test_end_marker_cuts_a_call() -> None:
    text = '<tool_calls>[{"name": "a", "arguments": {"x": 1}</tool_calls>'
    jp.check(P, text, '<tool_calls>[{"name": "a", "arguments": {"x": 1}</tool_calls>', [])
    jp.check(
        P,
        '<tool_calls>[{"name": "a", "arguments": {"x": </tool_calls>',
        '<tool_calls>[{"name": "a", "arguments": {"x": </tool_calls>',
        [],
    )


def test_truncated() -> None:
    jp.check(
        P,
        '<tool_calls>[{"name": "a", "arguments": {"x": "y',
        '<tool_calls>[{"name": "a", "arguments": {"x": "y',
        [],
    )
    jp.check(P, '<tool_calls>[{"arguments": {"x": 1}, "na', '<tool_calls>[{"arguments": {"x": 1}, "na', [])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.render, MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "</tool_calls>]")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

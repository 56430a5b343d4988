"""builtin:longcat — <longcat_tool_call>{…}</longcat_tool_call>."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.longcat import LongcatToolParser
from parsebridge.formats import longcat as fmt

P = LongcatToolParser(conventions="lossless")
MARKERS = (fmt.START, fmt.END)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:longcat"
    assert P.format_tool_result("c", "r") == "<longcat_tool_response>r</longcat_tool_response>"


def test_calls_malformed_truncated() -> None:
    text = 'x<longcat_tool_call>{"name": "a", "arguments": {"x": 1}}</longcat_tool_call>\n<longcat_tool_call>{"name": "b"}</longcat_tool_call>'
    jp.check(P, text, "x", [("a", {"x": 1}, None), ("b", {}, None)])
    bad = "<longcat_tool_call>not json</longcat_tool_call>"
    jp.check(P, bad, bad, [])
    jp.check(
        P,
        '<longcat_tool_call>{"name": "a", "arguments": {"x": 1}}}</longcat_tool_call>',
        "}",  # the region's rest after the call is content (issue 39: it used to be lost)
        [("a", {"x": 1}, None)],
    )
    jp.check(
        P,
        '<longcat_tool_call>{"name": "a", "arguments": {"x',
        '<longcat_tool_call>{"name": "a", "arguments": {"x',
        [],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.TOOL.render, MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.TOOL.render, "</longcat_tool_call>")
    jp.steps_grow_linearly(P, fmt.TOOL.render, monkeypatch)

"""builtin:apertus — <|tools_prefix|>[{"NAME": {args}}]<|tools_suffix|>."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.apertus import ApertusToolParser
from parsebridge.formats import apertus as fmt

P = ApertusToolParser(conventions="lossless")
MARKERS = (fmt.START, fmt.END)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:apertus" and P.format_tool_result("c", "x") == "x"


def test_calls() -> None:
    text = 'Let me.<|tools_prefix|>[{"a": {"x": 1}}, {"b": {}}]<|tools_suffix|> ok'
    jp.check(P, text, "Let me. ok", [("a", {"x": 1}, None), ("b", {}, None)])
    jp.check(
        P, '<|tools_prefix|>[{"a": [1]}]<|tools_suffix|>', '<|tools_prefix|>[{"a": [1]}]<|tools_suffix|>', []
    )


def test_malformed_truncated() -> None:
    jp.check(P, "<|tools_prefix|>x<|tools_suffix|>", "<|tools_prefix|>x<|tools_suffix|>", [])
    jp.check(P, "<|tools_prefix|>[{}]<|tools_suffix|>", "<|tools_prefix|>[{}]<|tools_suffix|>", [])
    # the array broken after a call: the rest of the region is content (issue 39: it used to be lost)
    jp.check(
        P,
        '<|tools_prefix|>[{"a": {"x": 1}, "b": 2}]<|tools_suffix|>',
        '<|tools_prefix|>[{"a": {"x": 1}, "b": 2}]<|tools_suffix|>',
        [],
    )
    jp.check(P, '<|tools_prefix|>[{"a": {"x": "', '<|tools_prefix|>[{"a": {"x": "', [])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.render, MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "<|tools_suffix|>}")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

"""builtin:internlm — <|action_start|><|plugin|>{…}<|action_end|> (InternLM 2.5, Intern-S1)."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.internlm import InternlmToolParser
from parsebridge.formats import internlm as fmt

P = InternlmToolParser(conventions="lossless")
MARKERS = (fmt.ACTION_START, fmt.PLUGIN, fmt.ACTION_END)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:internlm"
    assert (
        P.format_tool_result("c", {"t": 1}) == '<|im_start|>environment name=<|plugin|>\n{"t": 1}<|im_end|>'
    )


def test_calls_and_variants() -> None:
    text = 'Hi.<|action_start|><|plugin|>\n{"name": "a", "parameters": {"x": 1}}<|action_end|>'
    jp.check(P, text, "Hi.", [("a", {"x": 1}, None)])
    text = '<|action_start|> <|plugin|> {"name": "a", "arguments": {"x": 1}}<|action_end|>\nbye'
    jp.check(P, text, "\nbye", [("a", {"x": 1}, None)])


def test_malformed_and_truncated() -> None:
    code = "<|action_start|><|interpreter|>\nprint(1)<|action_end|>"
    jp.check(P, code, code, [])
    jp.check(
        P,
        '<|action_start|><|plugin|>{"name": "a", "parameters": {"x": <|action_end|>',
        '<|action_start|><|plugin|>{"name": "a", "parameters": {"x": <|action_end|>',
        [],
    )
    jp.check(
        P,
        '<|action_start|><|plugin|>{"name": "a", "parameters": {"x": 2',
        '<|action_start|><|plugin|>{"name": "a", "parameters": {"x": 2',
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
    jp.holds_little(P, fmt.TOOL.render, "<|action_end|>}")
    jp.steps_grow_linearly(P, fmt.TOOL.render, monkeypatch)

"""builtin:cohere — Command A <|START_ACTION|>[…]<|END_ACTION|>, Command R Action: ```json […]```."""

from __future__ import annotations

from functools import partial
from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.cohere import CohereToolParser
from parsebridge.formats import cohere as fmt

P = CohereToolParser(conventions="lossless")
MARKERS = (
    fmt.START_ACTION,
    fmt.END_ACTION,
    fmt.START_RESPONSE,
    fmt.END_RESPONSE,
    fmt.START_TEXT,
    fmt.END_TEXT,
)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:cohere"
    assert P.format_tool_result("7", {"temp": 3}) == (
        '<|START_TOOL_RESULT|>[{"tool_call_id": "7", "results": {"0": {"temp": 3}}, "is_error": null}]<|END_TOOL_RESULT|>'
    )
    assert '"0": {"result": "ok"}' in P.format_tool_result("7", "ok")


def test_command_a_and_r() -> None:
    text = 'I will look.<|START_ACTION|>[\n  {"tool_call_id": "0", "tool_name": "a", "parameters": {"x": 1}},\n  {"tool_call_id": "1", "tool_name": "b", "parameters": {}}\n]<|END_ACTION|>'
    jp.check(P, text, "I will look.", [("a", {"x": 1}, None), ("b", {}, None)])
    jp.check(
        P, 'Action: ```json\n[{"tool_name": "a", "parameters": {"x": 1}}]\n```', None, [("a", {"x": 1}, None)]
    )
    jp.check(P, '<|START_ACTION|>[{"name": "a", "arguments": {}}]<|END_ACTION|>', None, [("a", {}, None)])


def test_response_tags_and_prose() -> None:
    jp.check(P, "<|START_RESPONSE|>Hello there.<|END_RESPONSE|>", "Hello there.", [])
    jp.check(P, "Action: none needed.", "Action: none needed.", [])
    jp.check(P, "<|START_ACTION|>oops<|END_ACTION|>", "<|START_ACTION|>oops<|END_ACTION|>", [])


def test_command_4_text_tags_are_structure() -> None:
    """Command 4 writes its answer in <|START_TEXT|>…<|END_TEXT|>: the tags left the content (vLLM
    drops them too; builtin kept them, and conformance counted a marker leak)."""
    call = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "test", "parameters": {}}]<|END_ACTION|>'
    text = f"<|START_TEXT|>Some intro<|END_TEXT|>{call}<|START_TEXT|>Conclusion<|END_TEXT|>"
    jp.check(P, text, "Some introConclusion", [("test", {}, None)])
    jp.check(P, "<|START_TEXT|>Hello there.<|END_TEXT|>", "Hello there.", [])


def test_truncated() -> None:
    text = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "a", "parameters": {"q": "x'
    jp.check(P, text, '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "a", "parameters": {"q": "x', [])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), style=st.sampled_from(["a", "r"]))
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject, style: str) -> None:
    jp.streaming_equals_oneshot(P, partial(fmt.render, style=style), MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, (*MARKERS, "Action:", "```json"), data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "<|END_ACTION|>]")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

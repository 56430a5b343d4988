"""builtin:gigachat3 — function call<|role_sep|>\\n{…}."""

from __future__ import annotations

from functools import partial
from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.gigachat3 import GigaChat3ToolParser
from parsebridge.formats import gigachat3 as fmt

P = GigaChat3ToolParser(conventions="lossless")
MARKERS = (fmt.CALL_PREFIX, fmt.CALL_TOKEN, fmt.MESSAGE_SEP, fmt.EOS)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:gigachat3" and P.format_tool_result("c", {"a": 1}) == '{"a": 1}'


def test_calls_and_separators() -> None:
    text = 'Сейчас.<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "a", "arguments": {"x": 1}}</s>'
    jp.check(P, text, "Сейчас.", [("a", {"x": 1}, None)])
    jp.check(P, '<|function_call|>{"name": "a", "arguments": {}}', None, [("a", {}, None)])
    jp.check(P, "Answer only.</s>", "Answer only.", [])


def test_malformed_truncated() -> None:
    jp.check(P, "function call<|role_sep|>\nnope", "function call<|role_sep|>\nnope", [])
    jp.check(
        P,
        'function call<|role_sep|>\n{"name": "a", "arguments": {"x": "',
        'function call<|role_sep|>\n{"name": "a", "arguments": {"x": "',
        [],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), token=st.booleans())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject, token: bool) -> None:
    jp.streaming_equals_oneshot(P, partial(fmt.render, token=token), MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "function call<|role_sep|>")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

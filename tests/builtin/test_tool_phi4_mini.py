"""builtin:phi4_mini — functools[…]."""

from __future__ import annotations

from typing import Any

import _jsonpayload as jp
from _streaming import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.phi4_mini import Phi4MiniToolParser
from parsebridge.formats import phi4_mini as fmt

P = Phi4MiniToolParser(conventions="lossless")
MARKERS = (fmt.TAG,)


def test_identity_and_tool_result() -> None:
    assert P.spec == "builtin:phi4_mini" and P.has_tool_calls("functools[")
    assert P.format_tool_result("c", [1]) == "[1]"


def test_calls() -> None:
    text = 'Sure.\nfunctools[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "parameters": {"y": 2}}]'
    jp.check(P, text, "Sure.\n", [("a", {"x": 1}, None), ("b", {"y": 2}, None)])
    jp.check(P, 'functools [ {"name": "a"} ]', None, [("a", {}, None)])


def test_prose_and_malformed() -> None:
    jp.check(P, "Try functools.partial here.", "Try functools.partial here.", [])
    jp.check(P, "functools[1, 2]", "functools[1, 2]", [])
    jp.check(
        P,
        'functools[{"name": "a", "arguments": {"q": "x',
        'functools[{"name": "a", "arguments": {"q": "x',
        [],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    jp.streaming_equals_oneshot(P, fmt.render, MARKERS, data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    jp.soup(P, MARKERS, data)


def test_linear(monkeypatch: Any) -> None:
    jp.holds_little(P, fmt.render, "]functools[")
    jp.steps_grow_linearly(P, fmt.render, monkeypatch)

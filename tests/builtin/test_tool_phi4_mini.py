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


def test_single_object_without_array() -> None:
    """Phi-4-mini also writes one call as a bare object, ``functools{…}`` (Dynamo's parser tests keep
    such an output, its "token leak reproduction"): a call under both conventions, one-shot and
    streamed, as the array form is; a ``functools{`` that holds no call object stays content."""
    for conv in ("servers", "lossless"):
        p = Phi4MiniToolParser(conventions=conv)
        text = 'functools{"name": "get_weather","arguments":{"location":"San Francisco"}}'
        jp.check(p, text, None, [("get_weather", {"location": "San Francisco"}, None)])
        jp.check(p, 'Ok. functools {"name": "a", "parameters": {"y": 2}}', "Ok. ", [("a", {"y": 2}, None)])
        jp.check(p, "functools{invalid json}", "functools{invalid json}", [])
        jp.check(p, 'functools{"answer": 42}', 'functools{"answer": 42}', [])


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

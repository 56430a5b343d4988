"""builtin:inkling — typed content blocks, calls in invoke blocks, streaming equivalence."""

from __future__ import annotations

import json
from typing import Any

from _streaming import (
    EXAMPLES,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    json_args,
    max_held,
    names,
    norm,
    random_chunkings,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.inkling import InklingToolParser
from parsebridge.formats import inkling as F

P = InklingToolParser(conventions="lossless")


def block(kind: str, body: str, end: str = F.END_MESSAGE, meta: str = "") -> str:
    return f"{F.MESSAGE_MODEL}{meta}{kind}{body}{end}"


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_blocks() -> None:
    text = F.render_thinking("t") + F.render_text("Hi.") + F.render([("a", {"x": [1]}), ("b", {})])
    check(text, "Hi.", [("a", {"x": [1]}, None), ("b", {}, None)])
    check(block(F.INVOKE_TEXT, "raw call text") + block(F.TOOL_ERROR, " oops"), "raw call text oops", [])
    check(
        block(F.INVOKE_JSON, '{"args": {"k": 1}, "name": "late"}', meta="late"),
        None,
        [("late", {"k": 1}, None)],
    )
    # (the call object closed: a call, though the block's end never came)
    check(F.INVOKE_JSON + '{"name":"bare","arguments":{}}', None, [("bare", {}, None)])
    check("plain", "plain", [])
    check(F.END_MESSAGE + F.END_SAMPLING, None, [])


def test_malformed_and_truncated() -> None:
    nameless = block(F.INVOKE_JSON, '{"args": {}}')
    check(nameless, nameless, [])
    check(block(F.INVOKE_JSON, "not json"), block(F.INVOKE_JSON, "not json"), [])
    check(
        block(F.INVOKE_JSON, '{"name": "a", "args": [1]}'),
        '<|message_model|><|content_invoke_tool_json|>{"name": "a", "args": [1]}<|end_message|>',
        [],
    )
    check(block(F.INVOKE_JSON, '{"name": "a", "args": {"x": 1}} trailing'), None, [("a", {"x": 1}, None)])
    check(
        F.MESSAGE_MODEL + F.INVOKE_JSON + '{"name": "a", "args": {"x": "y',
        '<|message_model|><|content_invoke_tool_json|>{"name": "a", "args": {"x": "y',
        [],
    )
    # an unterminated text block ends at the next block
    check(F.MESSAGE_MODEL + F.TEXT + "Hello " + F.render([("c", {})]), "Hello ", [("c", {}, None)])
    check(F.MESSAGE_MODEL + "meta", F.MESSAGE_MODEL + "meta", [])
    assert P.format_tool_result("c", {"r": 1}) == '{"r": 1}' and P.spec == "builtin:inkling"


@st.composite
def outputs(draw: Any) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "think", "call", "raw"]))
        if kind == "text":
            parts.append(F.render_text(draw(st.text(max_size=8))))
        elif kind == "think":
            parts.append(F.render_thinking(draw(st.text(max_size=8))))
        elif kind == "raw":
            parts.append(draw(st.text(max_size=6)))
        else:
            parts.append(F.render([(draw(names), draw(json_args(F.TOOL.markers)))]))
    return "".join(parts)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text = data.draw(outputs())
    assert_streams_like_oneshot(P, text, [data.draw(chunk_plan(text))])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (*F.TOOL.markers, '{"name":"f","args":', "meta"))


def test_stream_holds_little() -> None:
    text = F.render_text("y" * 5000) + F.render([("f", {"s": "x" * 20000})])
    assert max_held(P, text) < 128
    assert json.loads(json.dumps(P.parse(text).tool_calls[0].arguments)) == {"s": "x" * 20000}

"""builtin:plamo3 — name/JSON requests between <|plamo:…:plamo|> markers (the section machine)."""

from __future__ import annotations

import json
from typing import Any

from _streaming import (
    EXAMPLES,
    assert_no_text_lost,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    dumps_style,
    expected_content,
    json_args,
    max_held,
    names,
    noise,
    norm,
    random_chunkings,
    ws,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.plamo3 import Plamo3ToolParser, name_from_head
from parsebridge.formats import plamo3 as F

P = Plamo3ToolParser(conventions="lossless")


def req(name: str, args: str) -> str:
    return f"{F.REQUEST_BEGIN}{F.NAME_BEGIN}{name}{F.NAME_END}{F.ARGS_BEGIN}{args}{F.ARGS_END}{F.REQUEST_END}"


def section(*reqs: str) -> str:
    return F.REQUESTS_BEGIN + "".join(reqs) + F.REQUESTS_END


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_name_from_head() -> None:
    assert name_from_head(f" {F.NAME_BEGIN} f {F.NAME_END}\n") == "f"
    for bad in ("f", F.NAME_BEGIN + F.NAME_END, F.NAME_BEGIN + "a b" + F.NAME_END, F.NAME_BEGIN + "x"):
        assert name_from_head(bad) is None


def test_calls_and_policy() -> None:
    check(
        section(req("a", '{"x": 1}'), req("b", "{}")) + F.EOT, None, [("a", {"x": 1}, None), ("b", {}, None)]
    )
    check("pre " + section(req("a", "{}")) + " post" + F.EOT, "pre  post", [("a", {}, None)])
    check(
        section(req("a", "[1, 2")),
        "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>a<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>[1, 2<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
        [],
    )
    check(
        F.REQUESTS_BEGIN + F.REQUEST_BEGIN + F.NAME_BEGIN + "a" + F.NAME_END + F.ARGS_BEGIN + '{"k": "v',
        '<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>a<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"k": "v',
        [],
    )
    nameless = section(F.REQUEST_BEGIN + F.ARGS_BEGIN + "{}" + F.ARGS_END + F.REQUEST_END)
    check(nameless, nameless, [])
    check(F.EOT, None, [])
    assert P.format_tool_result("c", [1]) == "[1]" and P.spec == "builtin:plamo3"


@st.composite
def outputs(draw: Any) -> tuple[str, list[tuple[str, Any]]]:
    items: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["text", "ws", "section"]))
        if kind == "text":
            items.append(("text", draw(noise)))
        elif kind == "ws":
            items.append(("text", draw(ws)))
        else:
            calls = draw(st.lists(st.tuples(names, json_args(F.TOOL.markers)), min_size=1, max_size=3))
            text = section(*(req(n, draw(dumps_style)(a)) for n, a in calls))
            items.append(("call", (calls[0][0], calls[0][1], text)))
            items.extend(("call", (n, a, "")) for n, a in calls[1:])
    return "".join(v[2] if k == "call" else v for k, v in items), items


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    one = assert_streams_like_oneshot(P, text, [data.draw(chunk_plan(text))])
    assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])
    assert_no_text_lost(P, text, F.TOOL.markers, structural='{}[]:,"\\')


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (*F.TOOL.markers, "f"))


def test_stream_holds_little() -> None:
    # the span before the name is known (section, request and name markers: ~170 chars) is held, never the args
    assert max_held(P, section(req("f", json.dumps({"s": "x" * 20000})))) < 256

"""builtin:kimi_k2 — functions.NAME:IDX calls in a section, streaming equivalence, malformed policy."""

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
    mixed_outputs,
    names,
    norm,
    random_chunkings,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.kimi_k2 import KimiK2ToolParser, name_from_id
from parsebridge.formats.kimi_k2 import ARG_BEGIN, CALL_BEGIN, CALL_END, SECTION_BEGIN, SECTION_END

P = KimiK2ToolParser(conventions="lossless")
MARKERS = (SECTION_BEGIN, CALL_BEGIN, ARG_BEGIN, CALL_END, SECTION_END)


def call(name: str, args: str, idx: int = 0, prefix: str = "functions.") -> str:
    return f"{CALL_BEGIN}{prefix}{name}:{idx}{ARG_BEGIN}{args}{CALL_END}"


def section(*calls: str, sep: str = "") -> str:
    return SECTION_BEGIN + sep.join(calls) + SECTION_END


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity_and_result_format() -> None:
    assert P.spec == "builtin:kimi_k2"
    assert P.format_tool_result("functions.f:0", {"a": 1}) == '## Return of functions.f:0\n{"a": 1}'


def test_name_from_id() -> None:
    assert name_from_id("functions.get_weather:0") == "get_weather"
    assert name_from_id(" functions.a.b:12 ") == "a.b"
    assert name_from_id("search:3") == "search"
    assert name_from_id("search") == "search"
    for bad in ("", "3", "functions.:1", "two words:0"):
        assert name_from_id(bad) is None, bad


def test_call_ids_are_the_models() -> None:
    """A call keeps the id its head names (the template renders it back into the next prompt), one-shot
    and streamed under both conventions; a repeated id, or a head in another form, gets a fresh one."""
    text = "Checking both cities.\n" + section(
        call("get_weather", '{"city": "Osaka"}', 0),
        call("get_weather", '{"city": "Kobe"}', 0),
        call("get_time", '{"tz": "Asia/Tokyo"}', 2, prefix=""),
        call("get_weather", '{"city": "Nara"}', 3),
    )
    for conventions in ("servers", "lossless"):
        parser = KimiK2ToolParser(conventions=conventions)
        for chunks in ([text], list(text), [text[i : i + 7] for i in range(0, len(text), 7)]):
            stream = parser.stream()
            for chunk in chunks:
                stream.feed(chunk)
            for result in (stream.finish(), parser.parse(text)):
                ids = [c.id for c in result.tool_calls]
                assert ids[0] == "functions.get_weather:0" and ids[3] == "functions.get_weather:3", ids
                assert ids[1].startswith("call_") and ids[2].startswith("call_"), ids
                assert len(set(ids)) == 4


def test_one_and_several() -> None:
    check(section(call("get", '{"city": "Rome"}')), None, [("get", {"city": "Rome"}, None)])
    text = "Let me look.\n" + section(call("a", '{"x": 1}'), call("b", "{}", 1), sep="\n") + "\nDone"
    check(text, "Let me look.\n\nDone", [("a", {"x": 1}, None), ("b", {}, None)])
    check(call("bare", ' {"k": [1, 2]} '), None, [("bare", {"k": [1, 2]}, None)])


def test_no_call() -> None:
    check("hello", "hello", [])
    check("", None, [])
    check("a <|tool_call", "a <|tool_call", [])


def test_unicode_nested_marker_in_string() -> None:
    args = {"s": 'a"b\\c 😀 漢 ' + CALL_END + SECTION_END, "n": {"l": [1, {"z": None}]}}
    check(section(call("f", json.dumps(args, ensure_ascii=False))), None, [("f", args, None)])


def test_unrecoverable_is_content() -> None:
    bad = call("", "{}", 3, prefix="")
    check(section(bad), section(bad), [])
    check(SECTION_BEGIN + SECTION_END, SECTION_BEGIN + SECTION_END, [])
    check(section(call("a", "{}"), bad), bad, [("a", {}, None)])


def test_invalid_and_truncated() -> None:
    check(
        section(call("a", "[1, 2]")),
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>[1, 2]<|tool_call_end|><|tool_calls_section_end|>",
        [],
    )
    check(
        section(call("a", '{"x": 1,}')),
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": 1,}<|tool_call_end|><|tool_calls_section_end|>',
        [],
    )
    check(
        SECTION_BEGIN + CALL_BEGIN + "functions.get:0" + ARG_BEGIN + '{"a": [1',
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.get:0<|tool_call_argument_begin|>{"a": [1',
        [],
    )
    check(SECTION_BEGIN + call("a", '{"x": 1}'), None, [("a", {"x": 1}, None)])
    check(
        "x" + SECTION_BEGIN + CALL_BEGIN + "functions.ge",
        "x" + SECTION_BEGIN + CALL_BEGIN + "functions.ge",
        [],
    )
    # a new call marker inside a call's arguments ends it
    check(
        SECTION_BEGIN
        + CALL_BEGIN
        + "functions.a:0"
        + ARG_BEGIN
        + '{"x": '
        + call("b", "{}", 1)
        + SECTION_END,
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": ',
        [("b", {}, None)],
    )


def test_never_raises() -> None:
    for text in [SECTION_END * 2, ARG_BEGIN, CALL_BEGIN * 3, "\ud800" + CALL_BEGIN + "\x00", CALL_END + "{"]:
        assert_streams_like_oneshot(P, text)


def _section(draw: Any) -> list[tuple[str, Any]]:
    calls = draw(st.lists(st.tuples(names, json_args(MARKERS)), min_size=1, max_size=3))
    rendered = [call(n, draw(dumps_style)(a), i) for i, (n, a) in enumerate(calls)]
    gap = draw(st.sampled_from(["", "\n"]))
    return [
        ("call", (calls[0][0], calls[0][1], SECTION_BEGIN + gap.join(rendered) + SECTION_END)),
        *(("call", (n, a, "")) for n, a in calls[1:]),
    ]


def outputs() -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
    return mixed_outputs(
        [_section],
        bad=[section(call("", "{}", 1, "")), ARG_BEGIN, SECTION_END],
        cut=[SECTION_BEGIN + CALL_BEGIN + "functions.t:0" + ARG_BEGIN + "{", CALL_BEGIN],
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    one = assert_streams_like_oneshot(P, text, [data.draw(chunk_plan(text))])
    assert_no_text_lost(P, text, (*MARKERS, "functions."), structural='{}[]:,"\\0123456789')
    if items is not None:
        assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (*MARKERS, "functions.", "f:0", ":1"))


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and id."""
    assert max_held(P, section(call("f", json.dumps({"s": "x" * 20000})))) < 128

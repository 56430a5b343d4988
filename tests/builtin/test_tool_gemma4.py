"""builtin:gemma4 and builtin:functiongemma — Gemma's argument syntax → JSON, streaming equivalence."""

from __future__ import annotations

from typing import Any

import pytest
from _streaming import (
    EXAMPLES,
    assert_no_text_lost,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    expected_content,
    max_held,
    mixed_outputs,
    names,
    norm,
    random_chunkings,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.gemma4 import FunctionGemmaToolParser, Gemma4ToolParser, bare_json
from parsebridge.formats import functiongemma, gemma4

FORMATS = [
    (Gemma4ToolParser(conventions="lossless"), gemma4.START, gemma4.END, gemma4.STRING),
    (
        FunctionGemmaToolParser(conventions="lossless"),
        functiongemma.START,
        functiongemma.END,
        functiongemma.STRING,
    ),
]
IDS = ["gemma4", "functiongemma"]


def call(fmt: tuple[Any, str, str, str], name: str, args: dict[str, Any]) -> str:
    _p, start, end, delim = fmt
    return f"{start}call:{name}{gemma4.render_value(args, delim)}{end}"


def check(fmt: tuple[Any, str, str, str], text: str, content: str | None, calls: list[Any]) -> None:
    result = assert_streams_like_oneshot(fmt[0], text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


@pytest.fixture(params=FORMATS, ids=IDS)
def fmt(request: pytest.FixtureRequest) -> tuple[Any, str, str, str]:
    return request.param  # type: ignore[no-any-return]


def test_identity_and_result_format() -> None:
    g, f = Gemma4ToolParser(conventions="lossless"), FunctionGemmaToolParser(conventions="lossless")
    assert (g.spec, f.spec) == ("builtin:gemma4", "builtin:functiongemma")
    assert (
        g.format_tool_result("get_time", {"time": "09:00"})
        == '<|tool_response>response:get_time{time:<|"|>09:00<|"|>}<tool_response|>'
    )
    assert (
        f.format_tool_result("f", 3) == "<start_function_response>response:f{value:3}<end_function_response>"
    )


def test_values_of_every_kind(fmt: Any) -> None:
    args = {
        "s": 'a "q" \\ , : { } [ ] é😀',
        "i": -3,
        "n": 2.5,
        "t": True,
        "f": False,
        "z": None,
        "o": {"k": [1, "x", {"d": []}]},
        "e": {},
    }
    check(fmt, call(fmt, "f", args), None, [("f", args, None)])


def test_bare_text_is_a_string() -> None:
    assert bare_json(" Paris ") == '"Paris"'
    assert bare_json("1e3") == "1000.0"
    assert bare_json("NaN") == '"NaN"'
    assert bare_json('"x"') == '"\\"x\\""'


def test_content_around_and_several_blocks(fmt: Any) -> None:
    text = "Sure.\n" + call(fmt, "a", {"q": 1}) + call(fmt, "b", {}) + "\nDone"
    check(fmt, text, "Sure.\n\nDone", [("a", {"q": 1}, None), ("b", {}, None)])


def test_quoted_keys(fmt: Any) -> None:
    _p, start, end, d = fmt
    check(fmt, f"{start}call:f{{{d}my key{d}:1}}{end}", None, [("f", {"my key": 1}, None)])


def test_unrecoverable_is_content(fmt: Any) -> None:
    _p, start, end, _d = fmt
    for bad in [
        f"{start}nope{end}",
        f"{start}call:{{a:1}}{end}",
        f"{start}call:two words{{}}{end}",
        f"{start}{end}",
    ]:
        check(fmt, bad + call(fmt, "a", {}), bad, [("a", {}, None)])


def test_syntax_errors_are_no_call(fmt: Any) -> None:
    """A call whose arguments do not parse is no call: its text is content (`whole_calls`)."""
    _p, start, end, _d = fmt
    check(fmt, f"{start}call:f{{a 1}}{end}", f"{start}call:f{{a 1}}{end}", [])
    check(fmt, f"{start}call:f{{a:1 b:2}}{end}", None, [("f", {"a": "1 b:2"}, None)])  # bare text: a string
    check(fmt, f"{start}call:f{{a:[1,}}]}}{end}", f"{start}call:f{{a:[1,}}]}}{end}", [])
    check(fmt, f"{start}call:f{{a:[1}}{end}", f"{start}call:f{{a:[1}}{end}", [])


def test_text_after_arguments_is_content(fmt: Any) -> None:
    _p, start, end, _d = fmt
    check(fmt, f"{start}call:f{{a:1}} note{end}after", "noteafter", [("f", {"a": 1}, None)])


def test_truncated(fmt: Any) -> None:
    _p, start, _end, d = fmt
    # (a call cut off is no call: its text is content, `whole_calls`)
    for cut in (
        f"{start}call:f{{s:{d}hel",
        f"{start}call:f{{n:12",
        f"{start}call:f{{",
        f"{start}call:f{{a:1,ke",
    ):
        check(fmt, cut, cut, [])
    check(fmt, f"x {start}call:f", f"x {start}call:f", [])
    text = call(fmt, "f", {"a": [1, {"b": "c"}], "d": "e"})
    for cut in range(1, len(text)):
        assert_streams_like_oneshot(fmt[0], text[:cut])


def test_end_marker_ends_the_call_even_inside_a_string(fmt: Any) -> None:
    _p, start, end, d = fmt
    check(
        fmt,
        f"{start}call:f{{s:{d}ab}}{end}after",
        f"{start}call:f{{s:{d}ab}}{end}after",  # (its string never closed: no call, `whole_calls`)
        [],
    )


def test_key_without_value_is_an_empty_string(fmt: Any) -> None:
    _p, start, end, _d = fmt
    check(fmt, f"{start}call:f{{a:,b:}}{end}", None, [("f", {"a": "", "b": ""}, None)])


def test_never_raises(fmt: Any) -> None:
    _p, start, end, d = fmt
    for text in [
        end * 2,
        start * 3,
        d * 3,
        f"{start}call:\ud800{{\x00:{d}",
        f"{start}call:f{{{{{{",
        f"{start}call:f{{a:]]]}}",
    ]:
        assert_streams_like_oneshot(fmt[0], text)


def test_held_text_stays_small(fmt: Any) -> None:
    text = call(fmt, "f", {"s": "x" * 5000, "l": list(range(300))}) + "tail " * 200
    assert max_held(fmt[0], text) <= 40


keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
strings = st.text(st.sampled_from(list('ab \n"\\é😀<>/{}[],:')), max_size=10)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | strings
)
values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(keys, c, max_size=3), max_leaves=8
)


def outputs(fmt: Any) -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
    _p, start, end, d = fmt

    def one_call(draw: Any) -> list[tuple[str, Any]]:
        name = draw(names)
        args = draw(st.dictionaries(keys, values, max_size=4))
        args = {k: v for k, v in args.items() if not (isinstance(v, str) and d in v)}
        return [("call", (name, args, call(fmt, name, args)))]

    bad = [f"{start}call:f{{a", f"{start}x{end}", f"{start}call:f{{a b}}{end}", start[:-2], d]
    return mixed_outputs([one_call, one_call], bad=bad, most=4)


@pytest.mark.parametrize("index", [0, 1], ids=IDS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_stream_equals_oneshot(index: int, data: st.DataObject) -> None:
    fmt = FORMATS[index]
    text, items = data.draw(outputs(fmt))
    result = assert_streams_like_oneshot(fmt[0], text, [data.draw(chunk_plan(text))])
    if items is not None:
        calls = [(v[0], v[1], None) for k, v in items if k == "call"]
        assert norm(result) == (expected_content(items), calls)
    assert_no_text_lost(fmt[0], text, (fmt[1], fmt[2], fmt[3], "call:"), structural="{}[],:")


@pytest.mark.parametrize("index", [0, 1], ids=IDS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_soup_never_breaks(index: int, data: st.DataObject) -> None:
    _p, start, end, d = FORMATS[index]
    check_soup(FORMATS[index][0], data, (start, end, d, "call:", "call:f{", "a:", "}"))

"""The shared test suite of the tagged-parameter formats (builtin `tagged` machine).

Each family's test module builds a `Tagged` description (its parser and how
it writes a call) and pulls the suite's tests into its namespace with
``globals().update(suite(T))``; family-specific cases live next to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _streaming import (
    EXAMPLES,
    TYPED_TOOLS,
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

from parsebridge.adapters.builtin.engines.tool_parser import BuiltinToolParser

Calls = list[tuple[str, dict[str, Any], str | None]]


@dataclass
class Tagged:
    """One format under test."""

    parser_class: type[BuiltinToolParser]
    spec: str
    #: (name, [(key, raw value text)]) → the model's text for one call (its own block).
    call: Callable[[str, list[tuple[str, str]]], str]
    markers: tuple[str, ...]
    tool_result: tuple[Any, str]
    #: text of a truncated call to `typed` cut inside a value "hel" of parameter s.
    truncated_value: str
    #: texts that are no call at all (no readable name): each is content verbatim.
    unnamed: list[str] = field(default_factory=list)
    #: texts that are broken in ways that must never raise.
    broken: list[str] = field(default_factory=list)

    @property
    def parser(self) -> BuiltinToolParser:
        return self.parser_class(tools=TYPED_TOOLS, conventions="lossless")


def check(t: Tagged, text: str, content: str | None, calls: Calls) -> None:
    result = assert_streams_like_oneshot(t.parser, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


string_values = st.text(st.sampled_from(list('ab \n"\\é😀<>/{}')), max_size=10).filter(
    lambda v: not v.startswith("\n") and not v.endswith("\n")
)
word_values = st.from_regex(r"[a-z][a-z ]{0,6}", fullmatch=True)


@st.composite
def params(draw: Any) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    rendered: list[tuple[str, str]] = []
    expected: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(["s", "i", "b", "o", "w", "v"]), unique=True, max_size=4)):
        value: Any
        if key == "s":
            value = draw(string_values)
            rendered.append((key, value))
        elif key == "w":
            value = draw(word_values)
            rendered.append((key, value))
        else:
            value = draw(
                {
                    "i": st.integers(-1000, 1000),
                    "b": st.booleans(),
                    "o": st.dictionaries(
                        st.text("xyz", max_size=3), st.integers() | st.text("ab", max_size=3), max_size=2
                    ),
                    "v": st.none() | st.integers(),
                }[key]
            )
            rendered.append((key, json.dumps(value, ensure_ascii=False)))
        expected[key] = value
    return rendered, expected


def suite(t: Tagged) -> dict[str, Any]:
    """The shared tests for format `t`, named ``test_*`` for pytest to collect."""

    def test_identity_and_result_format() -> None:
        p = t.parser
        assert p.spec == t.spec
        assert set(p.markers) >= set(t.markers[:2])
        assert p.format_tool_result("call_1", t.tool_result[0]) == t.tool_result[1]

    def test_typed_values() -> None:
        params_ = [
            ("s", "12"),
            ("i", "3"),
            ("n", "1.5"),
            ("b", "true"),
            ("o", '{"k": [1]}'),
            ("a", "[1, 2]"),
            ("u", "null"),
        ]
        expected = {"s": "12", "i": 3, "n": 1.5, "b": True, "o": {"k": [1]}, "a": [1, 2], "u": None}
        check(t, t.call("typed", params_), None, [("typed", expected, None)])
        check(
            t,
            t.call("typed", [("i", "three"), ("x", "42")]),
            None,
            [("typed", {"i": "three", "x": 42}, None)],
        )

    def test_undeclared_values() -> None:
        params_ = [
            ("a", "7"),
            ("b", "false"),
            ("c", "hello world"),
            ("d", '"quoted"'),
            ("f", "NaN"),
            ("g", "{}"),
        ]
        expected = {"a": 7, "b": False, "c": "hello world", "d": '"quoted"', "f": "NaN", "g": {}}
        check(t, t.call("other", params_), None, [("other", expected, None)])

    def test_one_newline_trimmed_each_side() -> None:
        # (a format that writes values inline keeps every character: `tagged_values.inline_values`)
        kept = "\n\nline\n\n" if getattr(t.parser_class.stream_class, "inline_values", False) else "\nline\n"
        check(t, t.call("typed", [("s", "\n\nline\n\n")]), None, [("typed", {"s": kept}, None)])

    def test_several_calls_content_around() -> None:
        text = "Sure.\n" + t.call("a", [("q", "x")]) + "\n" + t.call("b", []) + "\nDone"
        check(t, text, "Sure.\n\nDone", [("a", {"q": "x"}, None), ("b", {}, None)])

    def test_no_call_and_empty() -> None:
        check(t, "hello", "hello", [])
        check(t, "", None, [])

    def test_unicode_and_escapes() -> None:
        value = 'say "hi" \\ 😀 漢 {"name": "x"} [1]'
        check(t, t.call("typed", [("s", value)]), None, [("typed", {"s": value}, None)])
        check(
            t,
            t.call("f", [("obj", '{"a": {"b": [1, {"c": "é"}]}}')]),
            None,
            [("f", {"obj": {"a": {"b": [1, {"c": "é"}]}}}, None)],
        )

    def test_unrecoverable_is_content() -> None:
        for bad in t.unnamed:
            check(t, bad + t.call("a", []), bad, [("a", {}, None)])

    def test_truncated() -> None:
        # (no call: its text is content, `whole_calls`)
        check(t, t.truncated_value, t.truncated_value, [])
        for cut in range(1, len(t.truncated_value)):
            assert_streams_like_oneshot(t.parser, t.truncated_value[:cut])

    def test_never_raises() -> None:
        for text in [
            *t.broken,
            *t.markers,
            "".join(t.markers),
            "".join(reversed(t.markers)),
            "\ud800\x00" + t.markers[0],
        ]:
            assert_streams_like_oneshot(t.parser, text)

    def test_prefix_stable_arguments() -> None:
        text = t.call("typed", [("s", "a\nb"), ("i", "4")])
        s = t.parser.stream()
        seen = ""
        for ch in text:
            for d in s.feed(ch).tool_calls:
                seen += d.arguments
        s.finish()
        assert json.loads(seen) == {"s": "a\nb", "i": 4}

    def test_held_text_stays_small() -> None:
        """Linearity: a long value streams through; the stream holds only a possible marker prefix."""
        text = t.call("typed", [("s", "x" * 5000), ("o", json.dumps({"k": "y" * 50}))]) + "tail " * 200
        assert max_held(t.parser, text) <= max(len(m) for m in t.markers) + 64

    def one_call(draw: Any) -> list[tuple[str, Any]]:
        name = draw(st.sampled_from(["typed", draw(names)]))
        rendered, expected = draw(params())
        if name != "typed":  # undeclared: only obvious literals and words round-trip as generated
            rendered = [(k, v) for k, v in rendered if k != "s"]
            expected = {k: v for k, v in expected.items() if k != "s"}
        return [("call", (name, expected, t.call(name, rendered)))]

    def outputs() -> st.SearchStrategy[tuple[str, list[tuple[str, Any]] | None]]:
        return mixed_outputs([one_call, one_call], bad=[*t.broken, *t.unnamed, t.markers[0][:-2]], most=4)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def test_stream_equals_oneshot(data: st.DataObject) -> None:
        text, items = data.draw(outputs())
        result = assert_streams_like_oneshot(t.parser, text, [data.draw(chunk_plan(text))])
        if items is not None:
            calls = [(v[0], v[1], None) for k, v in items if k == "call"]
            assert norm(result) == (expected_content(items), calls)
        assert_no_text_lost(t.parser, text, t.markers, structural="\"'=<>/")

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def test_soup_never_breaks(data: st.DataObject) -> None:
        check_soup(t.parser, data, t.markers)

    return {k: v for k, v in locals().items() if k.startswith("test_")}

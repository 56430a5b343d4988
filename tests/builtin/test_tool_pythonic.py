"""builtin:pythonic — ``[f(a=1), g()]`` lists, literal arguments, streaming equivalence."""

from __future__ import annotations

import keyword
from typing import Any

from _streaming import (
    EXAMPLES,
    assert_no_text_lost,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    expected_content,
    max_held,
    names,
    noise,
    norm,
    random_chunkings,
    ws,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.pythonic import PY_END, PY_START, PythonicToolParser, python_arguments

P = PythonicToolParser(conventions="lossless")


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(P, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def test_identity_and_result_format() -> None:
    assert P.spec == "builtin:pythonic" and P.markers[0] == PY_START
    assert P.has_tool_calls(" [get_weather(city='x')]") and not P.has_tool_calls("[1, 2]")
    assert P.format_tool_result("c", [1]) == "[1]"


def test_one_and_several_calls() -> None:
    check('[get_weather(city="Paris")]', None, [("get_weather", {"city": "Paris"}, None)])
    check(
        "[a(x=1, y=2.5), b(), c(flag=True, none=None)]",
        None,
        [("a", {"x": 1, "y": 2.5}, None), ("b", {}, None), ("c", {"flag": True, "none": None}, None)],
    )
    check(PY_START + "[f(a=1)]" + PY_END, None, [("f", {"a": 1}, None)])


def test_content_after_and_no_call() -> None:
    check("[f()]\n\nDone.", "\n\nDone.", [("f", {}, None)])
    check(PY_START + "[f()]" + PY_END + " ok", " ok", [("f", {}, None)])
    check("Sure, [f()]", "Sure, ", [("f", {}, None)])  # a list after prose: calls (as SGLang reads it)
    check("see [1] and [a](b)", "see [1] and [a](b)", [])
    check("", None, [])
    check("[1, 2, 3]", "[1, 2, 3]", [])


def test_unicode_escapes_nested_empty() -> None:
    check(
        '[f(s=\'he said "hi" \\\\ 😀 漢\', t="it\'s")]',
        None,
        [("f", {"s": 'he said "hi" \\ 😀 漢', "t": "it's"}, None)],
    )
    check(
        "[f(d={'a': [1, (2, 3), {'b': None}]}, e={})]",
        None,
        [("f", {"d": {"a": [1, [2, 3], {"b": None}]}, "e": {}}, None)],
    )
    check("[f(s='''multi\nline ) ]''')]", None, [("f", {"s": "multi\nline ) ]"}, None)])


def test_brackets_and_markers_inside_strings() -> None:
    check("[f(s=']), g(', t='<|python_end|>')]", None, [("f", {"s": "]), g(", "t": "<|python_end|>"}, None)])


def test_flagged_calls() -> None:
    """A list whose only call is no call is content, all of it: its closing ``]`` was lost (read
    as the list's structure), and ``, g()]`` after it became a call the output did not make."""
    check("[f(1, 2)]", "[f(1, 2)]", [])
    check("[f(a=x + 1)]", "[f(a=x + 1)]", [])
    check("[f(**kw)]", "[f(**kw)]", [])
    check("[f(a={1, 2})]", "[f(a={1, 2})]", [])
    check("[f(a=1, a=2)]", "[f(a=1, a=2)]", [])
    check("Sure [f(a=x)] ok", "Sure [f(a=x)] ok", [])
    check("[f(a=x), g()]", "[f(a=x), g()]", [])
    check("[g(), f(a=x), h()]", ", f(a=x)", [("g", {}, None), ("h", {}, None)])
    servers = PythonicToolParser(conventions="servers")
    assert norm(servers.parse("[f(a=x)]")) == ("[f(a=x)]", [])


def test_element_not_a_call() -> None:
    check("[f(a=1), 5]", ", 5]", [("f", {"a": 1}, None)])
    check("[]", "[]", [])


def test_truncated() -> None:
    check("[f(a=1, b='x", "[f(a=1, b='x", [])
    check("[f(", "[f(", [])
    check("[f(a=1), g", ", g", [("f", {"a": 1}, None)])
    check("[get_wea", "[get_wea", [])
    check(PY_START, PY_START, [])


def test_never_raises() -> None:
    for text in ["[", "]", "[f(" + "(" * 300, "[f(a='\ud800')]", "[f(a=\x00)]", PY_END * 2, "[f(a=1e999)]"]:
        assert_streams_like_oneshot(P, text)


def test_python_arguments() -> None:
    assert python_arguments(" ") == ("{}", True)
    assert python_arguments("a=(1, 2)") == ('{"a": [1, 2]}', True)
    assert python_arguments("a=float('nan')") == ("a=float('nan')", False)


idents = names.filter(lambda n: not keyword.iskeyword(n))
py_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["')", '"]', "\\", "'''", PY_END]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=6,
)


@st.composite
def outputs(draw: Any) -> tuple[str, list[tuple[str, Any]] | None]:
    items: list[tuple[str, Any]] = []
    valid = True
    wrapped = draw(st.booleans())
    if draw(st.booleans()):
        items.append(("text", draw(ws)))
    calls = draw(st.lists(st.tuples(idents, st.dictionaries(idents, py_values, max_size=3)), max_size=3))
    rendered = []
    for name, kwargs in calls:
        rendered.append(name + "(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")")
    sep = draw(st.sampled_from([", ", ",", ",\n "]))
    if calls:
        body = "[" + sep.join(rendered) + "]"
        if wrapped:
            body = PY_START + body + PY_END
        items.append(("call", (calls[0][0], calls[0][1], body)))
        items.extend(("call", (n, a, "")) for n, a in calls[1:])
    tail = draw(st.sampled_from(["none", "ws", "text", "bad", "trunc"]))
    if tail == "ws":
        items.append(("text", draw(ws)))
    elif tail == "text":
        items.append(("text", draw(ws) + draw(noise)))
    elif tail == "bad":
        valid = False
        items.append(("text", draw(st.sampled_from(["[f(1)]", "[x(a=y)]", "[1]", "[f(a=1), 2]"]))))
    elif tail == "trunc":
        valid = False
        items.append(("text", draw(st.sampled_from(["[f(a='x", "[f(a=1), g(", "[ge", PY_START]))))
    text = "".join(v[2] if k == "call" else v for k, v in items)
    return text, (items if valid else None)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(data: st.DataObject) -> None:
    text, items = data.draw(outputs())
    chunks = data.draw(chunk_plan(text))
    one = assert_streams_like_oneshot(P, text, [chunks])
    # literal source is re-encoded as JSON: compare with the Python rendering of what was parsed
    assert_no_text_lost(
        P,
        text,
        (PY_START, PY_END),
        structural="[](){},=:'\"\\",
        render=lambda c: repr(c.arguments) + (c.invalid_arguments or ""),
    )
    if items is not None:
        assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(P, data, (PY_START, PY_END, "f(", "a=", "'", '"', "'''", ")", "[f("))


def test_stream_holds_little() -> None:
    """Linear streaming: a long call never makes the stream hold more than its markers and name."""
    text = "[f(s=" + repr("x" * 20000) + "), g()]"
    assert max_held(P, text) < 128  # the argument source is kept in a list, not in the buffer

"""builtin:sarashina — ``<|tool_calls|>`` then a Python literal: where the literal ends, streamed in
bounded memory, and what is held when it never ends.

The stream finds the literal's end by counting brackets outside strings and comments; the check
here is a plain reading of the format that needs no such scanner: the literal is the shortest
prefix of the text after the marker, ending in a closing bracket, that `ast.literal_eval` reads
(every such prefix is tried). Shortest: a comment may follow a literal, and ``[…]  # ]`` read
whole (as the search from the end of output did) lost the comment from a lossless content.
Examples per property: `_streaming.EXAMPLES`.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

import pytest
from _streaming import EXAMPLES, assert_streams_like_oneshot, chunk_plan, norm
from hypothesis import given, settings
from hypothesis import strategies as st

import parsebridge as pb
from parsebridge.adapters.builtin.sarashina import SarashinaToolParser
from parsebridge.formats.sarashina import TAG, render
from parsebridge.protocol import BufferLimitError
from parsebridge.protocol.streams import without_history

LOSSLESS = SarashinaToolParser(conventions="lossless")
SERVERS = SarashinaToolParser()
CALL = render([("get_weather", {"city": "Paris", "n": 5})])


def _reading(text: str, cut: bool) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """Content and calls by the plain reading (see the module's docstring)."""
    at = text.find(TAG)
    if at < 0:
        return text or None, []
    before, after = text[:at], text[at + len(TAG) :]
    body = after.lstrip()
    ends = [i + 1 for i, c in enumerate(body) if c in "]}"] if body[:1] in ("[", "{") else []
    for end in ends:
        try:
            with warnings.catch_warnings():  # (invalid escapes in the generated text: not ours to say)
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.simplefilter("ignore", SyntaxWarning)
                value = ast.literal_eval(ast.parse(body[:end], mode="eval"))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        calls = [_call(item) for item in (value if isinstance(value, list) else [value])]
        if not calls or None in calls:
            return text, []
        rest = "" if cut else body[end:]
        return (before + rest) or None, calls
    return text, []


def _call(item: Any) -> tuple[str, dict[str, Any]] | None:
    """A dict with a string name and dict arguments (or parameters) as (name, arguments), else None."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    args = next((item[k] for k in ("arguments", "parameters") if k in item), {})
    return (item["name"], args) if isinstance(args, dict) else None


def _norm(result: Any) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    content, calls = norm(result)
    return content, [(name, args) for name, args, _ in calls]


#: Pieces of Python syntax that move a literal's end: brackets, quotes, escapes, comments, line ends.
_PIECES = [*"[]{}()'\"\\#\n\r ,:rb", "'''", '"""']
_PIECES += ["'name'", "'arguments'", "'f'", "1", "None", "{'name': 'f', 'arguments': {}}", TAG, "x"]


@st.composite
def _outputs(draw: Any) -> str:
    """Text, the marker, then a call list (sometimes) broken up by and ending in Python syntax."""
    head = draw(st.sampled_from(["", "Hi ", " \n"]))
    calls = draw(
        st.lists(st.sampled_from([("f", {}), ("g", {"s": "a]'\"#}"}), ("h", {"n": [1, {"k": None}]})]))
    )
    literal = repr([{"name": n, "arguments": a} for n, a in calls]) if calls else ""
    cut = draw(st.integers(0, len(literal)))
    noise = "".join(draw(st.lists(st.sampled_from(_PIECES), max_size=12)))
    tail = "".join(draw(st.lists(st.sampled_from(_PIECES), max_size=12)))
    middle = literal[:cut] + noise + literal[cut:] if draw(st.booleans()) else literal
    return head + TAG + draw(st.sampled_from(["", " ", "\n"])) + middle + tail


@settings(max_examples=EXAMPLES * 4)
@given(_outputs(), st.data())
def test_the_literal_ends_where_python_reads_it_whatever_the_chunking(text: str, data: st.DataObject) -> None:
    for parser, cut in ((LOSSLESS, False), (SERVERS, True)):
        result = assert_streams_like_oneshot(parser, text, [data.draw(chunk_plan(text))])
        assert _norm(result) == _reading(text, cut), text


def test_text_after_the_list_with_many_brackets_does_not_hide_the_calls() -> None:
    """The literal's end is found by counting, not by trying closing brackets from the end of output
    (which, bounded to 32 tries, read 15 repeated calls as no call at all)."""
    text = "Hi " + (CALL + "\nline a<b ] }\n") * 15
    assert _norm(LOSSLESS.parse(text)) == (
        "Hi " + text[3 + len(CALL) :],
        [("get_weather", {"city": "Paris", "n": 5})],
    )
    assert _norm(SERVERS.parse(text)) == ("Hi ", [("get_weather", {"city": "Paris", "n": 5})])
    assert SERVERS.parse(text).dropped == text[3 + len(CALL) :]


def test_the_stream_holds_only_the_literal() -> None:
    """Before the marker a prefix of it is held, after it the literal until it closes, and nothing
    once it is read: some 250,000 chunks of the marker repeated after the calls leave nothing held."""
    with without_history():
        s: Any = SERVERS.stream()
    text = "Hi " + (CALL + "\nStep: a<b, so far so good.\n") * 100
    held = []
    for _ in range(100):
        for i in range(0, len(text), 4):
            s.feed(text[i : i + 4])
            held.append(len(s.pending_text()))
    assert len(TAG) < max(held) < len(CALL)  # at most the marker and the literal but its last bracket
    assert held[-1] == 0 and s.open_from() == 100 * len(text)
    assert len(s.call_spans) == 1


def test_an_open_literal_is_held_in_few_pieces() -> None:
    """A literal that does not close is held whole (the format needs it), not as one string a chunk."""
    opening = "[{'name': 'f', 'arguments': {'s': '"
    s: Any = SERVERS.stream()
    s.feed("Hi " + TAG + opening)
    for _ in range(50_000):
        s.feed("abcd")
    assert len(s._after) < 40
    assert s.pending_text() == TAG + opening + "abcd" * 50_000
    result = s.finish()
    assert result.tool_calls == [] and result.content == "Hi " + TAG + opening + "abcd" * 50_000


def test_max_held_caps_an_open_literal_and_nothing_is_lost() -> None:
    """The documented fallback: past `max_held` the held text (the marker included) is content."""
    text = "Hi " + TAG + "[{'name': 'f', 'arguments': {'s': '" + "x" * 5_000
    parser = pb.get_tool_parser("builtin:sarashina", on_error="fallback", max_held=1_000)
    s = parser.stream()
    for i in range(0, len(text), 7):
        s.feed(text[i : i + 7])
    result = s.finish()
    assert result.content == text and result.tool_calls == []
    strict = pb.get_tool_parser("builtin:sarashina", max_held=1_000).stream()
    with pytest.raises(BufferLimitError, match="1000"):
        for i in range(0, len(text), 7):
            strict.feed(text[i : i + 7])

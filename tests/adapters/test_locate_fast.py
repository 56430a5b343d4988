"""`locate_reasoning`'s first-try comparison finds exactly what `str.find` finds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from parsebridge.adapters._common import _find_after, _locate_searching, locate_reasoning

# Few characters, whitespace-heavy: needles that start with, sit after or repeat whitespace.
_text = st.text(alphabet=" \n\tab<>/", max_size=80)


@settings(max_examples=3000, deadline=None)
@given(_text, _text, st.integers(min_value=0, max_value=90))
def test_find_after_is_str_find(text: str, needle: str, start: int) -> None:
    assert _find_after(text, needle, start) == text.find(needle, start)


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=" \nab", max_size=40),
    st.text(alphabet=" \nab", max_size=20),
    st.text(alphabet=" \nab", max_size=20),
)
def test_block_after_stripped_whitespace(lead: str, reasoning: str, rest: str) -> None:
    text = "<think>" + lead + reasoning + "</think>" + rest
    block = locate_reasoning(text, reasoning, "<think>", "</think>")
    assert block is not None
    assert text[block.start_index : block.end_index].endswith(
        reasoning + ("</think>" if block.end_marker else "")
    )
    idx = text.find(reasoning, len("<think>"))
    begin = idx - len("<think>") if idx == len("<think>") else idx
    assert block.start_index == begin


_marked = st.text(alphabet=" \nab<>/", max_size=30)


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(["", "<a>", "<think>", None]),
    st.sampled_from(["", "</a>", "</think>", None]),
    _marked,
    _marked,
    _marked,
    st.booleans(),
)
def test_the_first_comparisons_find_what_the_search_finds(
    start: str | None, end: str | None, reasoning: str, middle: str, rest: str, opened: bool
) -> None:
    """Reasoning right after an opening marker, or at the start of a text without one, is
    where the search would find it: `locate_reasoning` = `_locate_searching` everywhere."""
    text = ((start or "") if opened else "") + reasoning + middle + (end or "") + rest
    for needle in (reasoning, reasoning.strip(), middle):
        assert locate_reasoning(text, needle, start, end) == _locate_searching(text, needle, start, end)

"""Chunkings are named, reproducible, and lose nothing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parsebridge import InvalidSpecError
from parsebridge.conformance import (
    ALL_CHUNKINGS,
    DEFAULT_CHUNKINGS,
    approximate_tokens,
    parse_chunking,
    parse_chunkings,
)

TEXT = 'Sure! <tool_call>{"name": "get_weather"}</tool_call>[TOOL_CALLS]<|python_tag|><｜tool▁sep｜> done ✓'


@given(st.text(max_size=300), st.sampled_from((*ALL_CHUNKINGS[1:], "char-3", "token-7", "random-42")))
def test_every_chunking_joins_back_to_the_text(text, name):
    chunks = parse_chunking(name).split(text)
    assert "".join(c.text for c in chunks) == text
    assert all(c.text for c in chunks)


@pytest.mark.parametrize("name", ["random-0", "random-7", "token-5", "char"])
def test_chunkings_are_reproducible(name):
    a = parse_chunking(name).split(TEXT * 3)
    b = parse_chunking(name).split(TEXT * 3)
    assert a == b


def test_random_sizes_are_1_to_8_and_seeds_differ():
    sizes = [len(c.text) for c in parse_chunking("random-3").split("x" * 2000)]
    assert set(sizes) <= set(range(1, 9)) and len(set(sizes)) > 4
    assert parse_chunking("random-3").split("x" * 200) != parse_chunking("random-4").split("x" * 200)


def test_approximate_tokenizer_keeps_markers_whole():
    toks = approximate_tokens(TEXT)
    for marker in ("<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<｜tool▁sep｜>"):
        assert marker in toks
    assert " done" in toks and "".join(toks) == TEXT


def test_token_k_groups_k_tokens():
    one = parse_chunking("token").split(TEXT)
    five = parse_chunking("token-5").split(TEXT)
    assert len(five) == -(-len(one) // 5)
    assert five[0].text == "".join(c.text for c in one[:5])


def test_token_chunking_uses_the_parsers_own_tokenizer():
    @dataclass
    class Tok:
        text: str
        token_ids: tuple[int, ...]

    class Parser:
        def chunks(self, text, per):
            return [Tok(text[i : i + 2 * per], (i,)) for i in range(0, len(text), 2 * per)]

    chunks = parse_chunking("token-3").split("abcdefghij", Parser())
    assert [c.text for c in chunks] == ["abcdef", "ghij"]
    assert chunks[0].token_ids == (0,)


def test_token_chunking_uses_recorded_token_texts():
    chunks = parse_chunking("token-2").split("abcde", None, ["ab", "c", "de"])
    assert [c.text for c in chunks] == ["abc", "de"]


def test_names_parse_and_bad_names_are_usage_errors():
    assert parse_chunking("token-1").name == "token"
    assert parse_chunking("random").name == "random-0"
    assert parse_chunking("oneshot").streamed is False
    assert parse_chunking("whole").split("abc")[0].text == "abc"
    assert [c.name for c in parse_chunkings(None)] == list(DEFAULT_CHUNKINGS)
    assert [c.name for c in parse_chunkings(["char,char", "token-5"])] == ["char", "token-5"]
    for bad in ("chars", "token-0", "oneshot-2", "random-x"):
        with pytest.raises(InvalidSpecError):
            parse_chunking(bad)

"""Chunkings are named, reproducible, and lose nothing."""

from __future__ import annotations

import itertools
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
from parsebridge.conformance.token_pieces import Piece, approximate_pieces

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
    assert chunks[0].token_ids == (0, 2, 4)  # the parser's per-token ids, grouped


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


def _pieces(text):
    return approximate_pieces(text)


def test_special_gives_each_special_token_its_own_chunk():
    chunks = parse_chunking("special").split(TEXT)
    texts = [c.text for c in chunks]
    assert texts == [
        "Sure! ",
        "<tool_call>",
        '{"name": "get_weather"}',
        "</tool_call>",
        "[TOOL_CALLS]",
        "<|python_tag|>",
        "<｜tool▁sep｜>",
        " done ✓",
    ]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_token_random_groups_1_to_8_tokens_and_never_splits_one(seed):
    text = TEXT * 20
    pieces = _pieces(text)
    chunks = parse_chunking(f"token-random-{seed}").split(text)
    assert "".join(c.text for c in chunks) == text
    boundaries = set(itertools.accumulate(len(p.text) for p in pieces))
    ends = list(itertools.accumulate(len(c.text) for c in chunks))
    assert set(ends) <= boundaries
    sizes = []
    it = iter(pieces)
    for c in chunks:
        n, got = 0, ""
        while got != c.text:
            got += next(it).text
            n += 1
        sizes.append(n)
    assert set(sizes) <= set(range(1, 9)) and len(set(sizes)) > 3


def test_default_set_has_the_token_boundary_groupings():
    names = [c.name for c in parse_chunkings(None)]
    assert {"token", "special", "token-5", "token-20"} <= set(names)
    assert len([n for n in names if n.startswith("token-random-")]) >= 5
    assert parse_chunking("token-random").name == "token-random-0"
    assert parse_chunking("special").by_token and not parse_chunking("char").by_token


def test_token_chunks_of_ids_keep_a_token_that_ends_mid_character():
    pieces = [Piece("a", 1), Piece("", 2), Piece("é", 3), Piece("<x>", 4, True)]
    chunks = parse_chunking("token").split("aé<x>", pieces=pieces)
    assert [(c.text, c.token_ids) for c in chunks] == [("a", (1,)), ("", (2,)), ("é", (3,)), ("<x>", (4,))]
    assert [c.text for c in parse_chunking("special").split("aé<x>", pieces=pieces)] == ["aé", "<x>"]


@pytest.mark.parametrize(
    ("marker", "pieces"),
    [
        ("<|close|>think<|sep|>", ["<|close|>", "think", "<|sep|>"]),
        ("<｜DSML｜invoke", ["<", "｜DSML｜", "invoke"]),
        ("<function=", ["<", "function", "="]),
    ],
)
def test_approximate_tokenizer_splits_what_the_model_splits(marker, pieces):
    assert approximate_tokens(marker) == pieces


@pytest.mark.parametrize(
    ("given", "names"),
    [
        (["default"], [c.name for c in parse_chunkings(["default"])]),  # ran only its first: oneshot
        (["token,special"], ["token", "special"]),  # ran only token
        ("token", ["token"]),  # read character by character: "unknown chunking 't'"
        ("token-5, special", ["token-5", "special"]),
        (None, [c.name for c in parse_chunkings(None)]),
        ([], [c.name for c in parse_chunkings(None)]),
    ],
)
def test_the_python_apis_read_chunkings_as_the_cli_does(given, names):
    from parsebridge.conformance import Runner

    assert [c.name for c in Runner(given).chunkings] == names


@pytest.mark.parametrize("given", ["", [","], 5, [5]])
def test_chunkings_that_name_nothing_are_a_typed_error_in_the_python_apis(given):
    """``compare(chunkings="")`` ran the one-shot reading alone, `run_conformance` the default set
    ("") or raised IndexError ([","]) and TypeError (5), where the CLI says the option names nothing."""
    import parsebridge as pb

    record = {"id": "a", "family": "hermes", "output": "hi"}
    with pytest.raises(pb.InvalidSpecError, match="chunkings"):
        pb.compare([record], "builtin:hermes", chunkings=given)
    with pytest.raises(pb.InvalidSpecError, match="chunkings"):
        pb.run_conformance(["builtin"], [pb.conformance.transcript_from(record)], chunkings=given)

"""Random outputs for fuzzing: a family's pieces (markers, calls, fragments, JSON, unicode) and chunkings.

`fuzz_pieces(grammar)` feeds the hypothesis strategies of the fuzz tests;
`random_output(rng, grammar)` is their seeded, hypothesis-free twin (the
benchmark uses it); `random_chunks` / `token_chunks` cut an output for a stream.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ...formats import hermes, think
from ..chunking import Chunk, approximate_tokens, find_chunker
from .grammars import SENTINELS, Grammar, _j, all_markers


def fuzz_pieces(g: Grammar) -> list[str]:
    """Building blocks of random outputs: the family's markers and calls, fragments, JSON, unicode, whitespace.

    Lone surrogates are left to the corpus: a detokenizer never produces them,
    and in every example they would only ever show one (tokenizer) failure.
    """
    markers = list(all_markers(g))
    pieces = markers + [m[: len(m) // 2] for m in markers if len(m) > 2]
    pieces += ["<tool_", "</thi", "<｜tool▁", think.START, think.END, hermes.START, hermes.END]
    pieces += [
        "{",
        "}",
        "[",
        "]",
        '"',
        "\\",
        ":",
        ", ",
        '{"name": "',
        '"arguments": ',
        '"parameters": ',
        '{"name": "get_weather", "arguments": {"location": "',
        "null",
        "true",
        "1e5",
        '"\\u00e9"',
    ]
    pieces += [" ", "\n", "\t", "\r\n", "\n\n", "\x00", "\u2028", "\ufeff", "😀", "漢字", "λ"]
    if g.kind == "tool":
        pieces += [
            g.calls([("get_weather", _j({"location": "Ωslo λ", "days": 2}))]),
            g.calls([("search_web", _j({"query": "жук " + g.end, "max_results": 1}))]),
            g.calls([("nest", _j({"a": {"b": ["漢", {"c": None}]}}))]),
            g.calls([("get_weather", "{}"), ("no_such_tool", _j({"x": "é"}))]),
            g.calls([("get_weather", "[1, 2]")]),
        ]
    else:
        assert g.reason is not None
        pieces += [g.reason("λ thought", "ж answer"), g.reason("", "Ω"), g.start, g.end]
    return pieces


def noise_word(rng: random.Random) -> str:
    """A short run of sentinel and ASCII characters."""
    alphabet = SENTINELS + "abcxyz019 .,!?-_=()<>/|"
    return "".join(alphabet[rng.getrandbits(6) % len(alphabet)] for _ in range(1 + rng.getrandbits(3)))


def random_output(
    rng: random.Random, g: Grammar, max_pieces: int = 16, pieces: Sequence[str] | None = None
) -> str:
    """A random output from the grammar's pieces and noise (the hypothesis-free twin of the fuzz strategy)."""
    pool = list(pieces if pieces is not None else fuzz_pieces(g))
    out = []
    for _ in range(rng.randint(0, max_pieces)):
        out.append(pool[rng.randrange(len(pool))] if rng.random() < 0.7 else noise_word(rng))
    return "".join(out)


def random_chunks(rng: random.Random, text: str, max_size: int = 8) -> list[str]:
    """Seeded random chunk sizes 1..`max_size`."""
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_size)
        out.append(text[i : i + n])
        i += n
    return out


def token_chunks(parser: Any, text: str, per: int = 1) -> list[Chunk]:
    """The parser's own tokenizer chunking when it has one (vLLM), else the approximate tokenizer's."""
    fn = find_chunker(parser)
    if fn is not None:
        return [Chunk(c.text, tuple(c.token_ids)) for c in fn(text, per)]
    toks = approximate_tokens(text)
    return [Chunk("".join(toks[i : i + per])) for i in range(0, len(toks), per)]

"""Builtin inkling reasoning: thinking blocks are reasoning, text blocks content (vLLM and SGLang agree)."""

from __future__ import annotations

import random

import pytest

import parsebridge as pb
from parsebridge.formats.inkling import END_MESSAGE as END
from parsebridge.formats.inkling import END_SAMPLING, INVOKE_JSON, MESSAGE_MODEL, TEXT, THINKING

M = MESSAGE_MODEL
TOOL_BLOCK = M + INVOKE_JSON + '{"name":"get_weather","args":{"city":"NYC"}}' + END

CASES = [
    (M + THINKING + "I plan" + END + M + TEXT + "Answer" + END + END_SAMPLING, "I plan", "Answer"),
    (M + THINKING + "I plan" + END + TOOL_BLOCK, "I plan", TOOL_BLOCK),  # the tool parser reads the block
    (M + TEXT + "Answer" + END, None, "Answer"),
    ("plain text", None, "plain text"),
    (M + THINKING + "I plan", "I plan", None),  # cut off: what it has
    (M + THINKING + "a" + END + M + THINKING + "b" + END + M + TEXT + "c" + END, "ab", "c"),
    (THINKING + "I plan" + END + TEXT + "Answer" + END, "I plan", "Answer"),
    (M + "meta", None, M + "meta"),  # a header no kind followed: verbatim
]


@pytest.mark.parametrize(("text", "reasoning", "content"), CASES)
def test_inkling_blocks(text: str, reasoning: str | None, content: str | None) -> None:
    rp = pb.get_reasoning_parser("builtin:inkling")
    r = rp.parse(text)
    assert (r.reasoning, r.content) == (reasoning, content)
    rng = random.Random(len(text))
    for _ in range(20):
        cuts = sorted(rng.sample(range(len(text) + 1), k=min(4, len(text) + 1)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        s = rp.stream()
        for c in chunks:
            s.feed(c)
        got = s.finish()
        assert (got.reasoning, got.content) == (r.reasoning, r.content), chunks


def test_inkling_reasoning_resolves_through_the_family_table() -> None:
    assert pb.get_reasoning_parser("inkling").spec == "builtin:inkling"

"""Builtin think-tag reasoning: one-shot rules, block indices, and streams equal to one-shot."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsebridge as pb


def _stream(parser, chunks, **kw):
    s = parser.stream(**kw)
    for c in chunks:
        s.feed(c)
    return s.finish()


@pytest.mark.parametrize(
    ("spec", "text", "started", "want"),
    [
        ("qwen3", "<think>2+2 is 4</think>The answer is 4.", None, ("2+2 is 4", "The answer is 4.")),
        ("qwen3", "\n<think>\nhm\n</think>\n\nok", None, ("\nhm\n", "\n\nok")),
        ("qwen3", "no reasoning here", None, (None, "no reasoning here")),
        ("qwen3", "inside</think>after", True, ("inside", "after")),
        ("qwen3", "a stray </think> stays content", None, (None, "a stray </think> stays content")),
        ("qwen3", "<think>never closed", None, ("never closed", None)),
        ("qwen3", "<think></think>empty reasoning", None, (None, "empty reasoning")),
        ("deepseek_r1", "thinking</think>answer", None, ("thinking", "answer")),
        ("deepseek_r1", "<think>thinking</think>answer", None, ("thinking", "answer")),
        ("deepseek_r1", "all reasoning, never closed", None, ("all reasoning, never closed", None)),
        ("deepseek_r1", "thinking disabled", False, (None, "thinking disabled")),
        ("deepseek_r1", "", None, (None, None)),
        ("qwen3", "", None, (None, None)),
    ],
)
def test_oneshot_and_streams_agree(spec, text, started, want):
    rp = pb.get_reasoning_parser(f"builtin:{spec}", conventions="lossless")
    r = rp.parse(text, reasoning_started=started)
    assert (r.reasoning, r.content) == want
    for size in (1, 2, 3, 7, len(text) or 1):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        s = _stream(rp, chunks, reasoning_started=started)
        assert (s.reasoning, s.content) == want, size
        assert s.block == r.block


def test_block_indices_point_into_the_text():
    rp = pb.get_reasoning_parser("builtin:qwen3", conventions="lossless")
    text = "  <think>why</think>because"
    b = rp.parse(text).block
    assert b is not None and (b.start_marker, b.end_marker) == ("<think>", "</think>")
    assert text[b.start_index : b.end_index] == "<think>why</think>"
    assert rp.parse_reasoning(text) == b and rp.has_reasoning(text)
    assert not rp.has_reasoning("plain") and rp.parse_reasoning("plain") is None


def test_configurable_markers_and_prompt_start_state():
    rp = pb.get_reasoning_parser("builtin:think", start="[THINK]", end="[/THINK]")
    assert rp.parse("[THINK]x[/THINK]y").reasoning == "x"
    # A template that wrote <think></think> (thinking off) has not started reasoning.
    r1 = pb.get_reasoning_parser("builtin:deepseek_r1", conventions="lossless")
    assert r1.parse("answer</think>", prompt="user: hi<think></think>").reasoning is None
    assert r1.parse("why</think>answer", prompt="user: hi\n<think>\n").reasoning == "why"
    assert _stream(r1, ["why</th", "ink>ans"], prompt="<think>").reasoning == "why"
    with pytest.raises(pb.InvalidSpecError, match="non-empty"):
        pb.get_reasoning_parser("builtin:think", start="", end="x")


def test_stream_holds_back_only_a_possible_marker():
    rp = pb.get_reasoning_parser("builtin:deepseek_r1", conventions="lossless")
    s = rp.stream()
    assert s.feed("abc</").reasoning == "abc"  # "</" could start "</think>"
    assert s.feed("x").reasoning == "</x"  # it did not
    d = s.feed("</think>tail")
    assert (d.reasoning, d.content) == ("", "tail")


_pieces = st.lists(
    st.sampled_from(
        ["<think>", "</think>", "<thi", "</th", "nk>", " ", "\n", "a", "é", "🙂", "<", ">", "x y"]
    ),
    max_size=14,
)


@settings(max_examples=300, deadline=None)
@given(
    parts=_pieces,
    spec=st.sampled_from(["qwen3", "deepseek_r1"]),
    started=st.sampled_from([None, True, False]),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_any_chunking_equals_oneshot_and_loses_nothing(parts, spec, started, cuts):
    text = "".join(parts)
    rp = pb.get_reasoning_parser(f"builtin:{spec}", conventions="lossless")
    want = rp.parse(text, reasoning_started=started)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    got = _stream(rp, chunks, reasoning_started=started)
    assert (got.reasoning, got.content, got.block) == (want.reasoning, want.content, want.block)
    # Nothing lost: what is neither reasoning nor content is the leading start
    # marker(s) (with the whitespace before them) and one end marker (for
    # qwen3, as vLLM reads it, also the stray end markers after that one).
    r, c = want.reasoning or "", want.content or ""
    opened = text.lstrip().startswith("<think>")
    rest = text.lstrip() if opened else text
    while opened and rest.startswith("<think>"):
        rest = rest[len("<think>") :]
    if rest != r + c:
        head, sep, tail = rest.partition("</think>")
        later = tail.replace("</think>", "") if spec == "qwen3" else tail
        assert (head, sep, later) == (r, "</think>", c)

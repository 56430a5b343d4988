"""Builtin reasoning where vLLM 0.33 and SGLang 0.5.23 agree (measured with the consensus check), or vLLM leads.

Each case is builtin's own one-shot reading, checked again at several
chunkings (stream ≡ one-shot).
"""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.formats import reasoning_format

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "NYC"}}\n</tool_call>'


def _stream(parser, chunks, **kw):
    s = parser.stream(**kw)
    for c in chunks:
        s.feed(c)
    return s.finish()


def _check(name, text, want, **kw):
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless")
    r = rp.parse(text, **kw)
    assert (r.reasoning, r.content) == want, name
    for size in (1, 2, 3, 7, len(text)):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        s = _stream(rp, chunks, **kw)
        assert (s.reasoning, s.content, s.block) == (r.reasoning, r.content, r.block), (name, size)


@pytest.mark.parametrize("name", ["qwen3", "qwen3_thinking"])
def test_a_tool_call_ends_prompt_opened_reasoning(name: str) -> None:
    # both frameworks: the reasoning ends where the tool section starts; the section is content
    _check(name, "plan\n\n" + CALL, ("plan\n\n", CALL), reasoning_started=True)
    _check(name, "<think>plan\n\n" + CALL, ("plan\n\n", CALL))


@pytest.mark.parametrize("name", ["qwen3", "glm45", "kimi_k2", "mimo", "deepseek_r1", "minimax_m2"])
def test_a_repeated_start_marker_does_not_leak(name: str) -> None:
    _check(name, "<think><think>a</think>b", ("a", "b"), reasoning_started=False)
    _check(name, "<think><think><think>a</think>b", ("a", "b"), reasoning_started=False)
    # only a repeat right after the opener: one later in the reasoning is reasoning text
    _check(name, "<think>a<think>b</think>c", ("a<think>b", "c"), reasoning_started=False)


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("qwen3", "<think>", "</think>"),
        ("glm45", "<think>", "</think>"),
        ("kimi_k2", "<think>", "</think>"),
        ("mimo", "<think>", "</think>"),
        ("nemotron_v3", "<think>", "</think>"),
        ("mistral", "[THINK]", "[/THINK]"),
        ("gemma4", "<|channel>thought\n", "<channel|>"),
    ],
)
def test_a_stray_end_marker_after_reasoning_is_dropped_as_vllm_does(name: str, start: str, end: str) -> None:
    _check(name, f"{start}a{end}b{end}c{end}", ("a", "bc"), reasoning_started=False)


@pytest.mark.parametrize("name", ["deepseek_r1", "step3", "minimax_m3", "k2_horizon"])
def test_a_stray_end_marker_stays_where_both_frameworks_keep_it(name: str) -> None:
    fmt = reasoning_format(name)
    s, e = fmt.start, fmt.end
    _check(name, f"{s}a{e}b{e}c", ("a", f"b{e}c"), reasoning_started=False)

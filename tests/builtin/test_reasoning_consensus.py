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


def _read(name: str, text: str, conventions: str, **kw):  # type: ignore[no-untyped-def]
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions=conventions)
    r = rp.parse(text, **kw)
    for size in (1, 2, 3, 7, len(text) or 1):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        s = _stream(rp, chunks, **kw)
        assert (s.reasoning, s.content, s.block) == (r.reasoning, r.content, r.block), (name, size)
    return r.reasoning, r.content


SERVERS_STARTED = ["qwen3", "glm45", "ling3"]


@pytest.mark.parametrize("name", SERVERS_STARTED)
def test_servers_start_inside_reasoning_where_both_servers_do(name: str) -> None:
    # vLLM 0.33 and SGLang 0.5.23: the text before an end marker no start marker opened is reasoning
    assert _read(name, "why</think>answer", "servers") == ("why", "answer")
    assert _read(name, "why</think>answer", "lossless") == (None, "why</think>answer")
    assert _read(name, "why</think>answer", "servers", reasoning_started=False) == (None, "why</think>answer")
    # marker-free output: reasoning under "servers" (cut off while thinking), content under "lossless"
    assert _read(name, "It is sunny.", "servers") == ("It is sunny.", None)
    assert _read(name, "It is sunny.", "lossless") == (None, "It is sunny.")
    # an output that opens the block itself reads the same under both
    assert _read(name, "<think>why</think>answer", "servers") == _read(
        name, "<think>why</think>answer", "lossless"
    )


@pytest.mark.parametrize("name", SERVERS_STARTED)
def test_a_prompt_decides_before_the_convention_and_one_without_markers_says_nothing(name: str) -> None:
    off = "<|im_start|>assistant\n<think>\n\n</think>\n\n"  # thinking turned off by the template
    on = "<|im_start|>assistant\n<think>\n"
    for conventions in ("servers", "lossless"):
        assert _read(name, "answer", conventions, prompt=off) == (None, "answer")
        assert _read(name, "why</think>answer", conventions, prompt=on) == ("why", "answer")
    assert _read(name, "why</think>answer", "servers", prompt="<|im_start|>assistant\n") == ("why", "answer")
    assert _read(name, "answer", "lossless", prompt="<|im_start|>assistant\n") == (None, "answer")


def test_servers_started_is_the_family_tables_fact() -> None:
    from parsebridge.adapters.builtin.engines.conventions import servers_started
    from parsebridge.protocol.family_rows import rows_of

    assert servers_started() == frozenset(SERVERS_STARTED)
    assert not any(r.servers_started for r in rows_of("tool"))  # a reasoning fact: no tool row says it
    # a family the servers start outside reasoning keeps its template's start state under both
    assert _read("mimo", "It is sunny.", "servers") == (None, "It is sunny.")
    assert _read("deepseek_r1", "why</think>answer", "lossless") == ("why", "answer")


@pytest.mark.parametrize("name", [*SERVERS_STARTED, "deepseek_r1"])
def test_chat_template_kwargs_that_turn_thinking_off_start_outside_reasoning(name: str) -> None:
    # the option vLLM's and SGLang's parsers read, so one config works on every backend
    for kwargs in ({"enable_thinking": False}, {"thinking": False}):
        rp = pb.get_reasoning_parser(f"builtin:{name}", chat_template_kwargs=kwargs)
        assert (rp.parse("answer").reasoning, rp.parse("answer").content) == (None, "answer")
        assert (
            rp.parse("why</think>answer", reasoning_started=True).reasoning == "why"
        )  # the caller still decides
    on = pb.get_reasoning_parser(f"builtin:{name}", chat_template_kwargs={"enable_thinking": True})
    assert on.parse("why</think>answer").reasoning == "why"

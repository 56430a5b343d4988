"""Builtin reasoning families built from their formats: per-family readings, start state, streams ≡ one-shot."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsebridge as pb
from parsebridge.adapters.builtin import REASONING_PARSERS
from parsebridge.adapters.builtin.engines.reasoning_sections import SectionReasoningParser
from parsebridge.adapters.builtin.engines.section_markers import Markers
from parsebridge.adapters.builtin.reasoning_presets import KEEPS_REASONING, PRESETS, parser_class
from parsebridge.formats import reasoning_format
from parsebridge.protocol.families import family_table


def _stream(parser, chunks, **kw):
    s = parser.stream(**kw)
    for c in chunks:
        s.feed(c)
    return s.finish()


def _chunkings(text):
    for size in (1, 2, 3, 5, 11, max(1, len(text))):
        yield [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _check(name, text, want, **kw):
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless")
    r = rp.parse(text, **kw)
    assert (r.reasoning, r.content) == want, name
    for chunks in _chunkings(text):
        s = _stream(rp, chunks, **kw)
        assert (s.reasoning, s.content, s.block) == (r.reasoning, r.content, r.block), (name, chunks)


def test_every_preset_is_registered_and_builds():
    assert set(PRESETS) <= set(REASONING_PARSERS)
    for name in PRESETS:
        cls = parser_class(name)
        assert cls.name == name and reasoning_format(PRESETS[name]).family
        assert (
            getattr(pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless"), "spec", "")
            == f"builtin:{name}"
        )


@pytest.mark.parametrize(
    ("name", "text", "want"),
    [
        ("kimi", "◁think▷用户问好 🙂◁/think▷你好！", ("用户问好 🙂", "你好！")),
        ("kimi", "<think>not kimi's marker</think>ok", (None, "<think>not kimi's marker</think>ok")),
        ("mistral", "[THINK]x[/THINK]y", ("x", "y")),
        ("granite", "Here's my thought process:\nr\nHere is my response:\nc", ("\nr\n", "\nc")),
        ("granite", "Here is my thought process: cut off", (" cut off", None)),
        (
            "kimi_k2",
            "<think>need a tool<|tool_calls_section_begin|>X",
            ("need a tool", "<|tool_calls_section_begin|>X"),
        ),
        (
            "kimi_k2",
            "implicit start<|tool_calls_section_begin|>X",
            ("implicit start", "<|tool_calls_section_begin|>X"),
        ),
        ("glm45", "<think>a</think>\n<tool_call>f", ("a", "\n<tool_call>f")),
        ("glm45", "<think>a<tool_call>f</tool_call>", ("a", "<tool_call>f</tool_call>")),
        ("seed_oss", "<seed:think>a</seed:think>b", ("a", "b")),
        ("minimax_m2", "plan</think>\n\nanswer", ("plan", "\n\nanswer")),
        ("minimax_m2", "plan<minimax:tool_call>X", ("plan", "<minimax:tool_call>X")),
        ("minimax_m2_append_think", "plan</think>answer", (None, "<think>plan</think>answer")),
        ("minimax_m3", "</mm:think>direct answer", (None, "direct answer")),
        ("minimax_m3", "<mm:think>r</mm:think>c", ("r", "c")),
        ("minimax_m3", "a </mm:think> inside stays", (None, "a </mm:think> inside stays")),
        ("nemotron_v3", "r</think>c", ("r", "c")),
        ("step3p5", "r<tool_call>\n<function=f>", ("r", "<tool_call>\n<function=f>")),
        ("deepseek_v3", "plain answer", (None, "plain answer")),
        ("holo2", "r</think>c", ("r", "c")),
        (
            "deepseek_v4",
            'r<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">',
            ("r", '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">'),
        ),
        (
            "deepseek_v41",
            'r<｜DSML｜ calls>\n<｜DSML｜ invoke name="f">',
            ("r", '<｜DSML｜ calls>\n<｜DSML｜ invoke name="f">'),
        ),
        ("ernie45", "r</think>\n<response>c</response>", ("r", "\nc")),
        ("hunyuan_a13b", "<think>r</think>\n<answer>c</answer>", ("r", "\nc")),
        ("hunyuan_a13b", "<think>r</think><tool_calls>[]</tool_calls>", ("r", "<tool_calls>[]</tool_calls>")),
        (
            "cohere_command3",
            "<|START_THINKING|>r<|END_THINKING|><|START_RESPONSE|>c<|END_RESPONSE|>",
            ("r", "c"),
        ),
        ("cohere_command4", "r<|END_THINKING|><|START_TEXT|>c<|END_TEXT|>", ("r", "c")),
        (
            "cohere_command4",
            "r<|END_THINKING|><|START_ACTION|>[]<|END_ACTION|>",
            ("r", "<|START_ACTION|>[]<|END_ACTION|>"),
        ),
        (
            "kimi_k3",
            "r<|close|>think<|sep|><|open|>response<|sep|>c<|close|>response<|sep|><|close|>message<|sep|>",
            ("r", "c"),
        ),
        ("kimi_k3", "r<|open|>tools<|sep|>X", ("r", "<|open|>tools<|sep|>X")),
        ("k2_horizon", "<ifm|think_fast>r</ifm|think_fast>c", ("r", "c")),
        ("k2_horizon", "r<ifm|tool_calls>X", ("r", "<ifm|tool_calls>X")),
        ("plamo3", "r<|plamo:end_think:plamo|>c", ("r", "c")),
        ("gemma4", "<|channel>thought\nr<channel|>c", ("r", "c")),
        ("apertus", "<|inner_prefix|>r<|inner_suffix|>c", ("r", "c")),
        ("iquest_q1", "r</think>c", ("r", "c")),
        ("mimo", "<think>r<tool_call>\n<function=f>", ("r", "<tool_call>\n<function=f>")),
        ("olmo3", "r</think>c", ("r", "c")),
        ("poolside_v1", "plain", (None, "plain")),
        ("minicpmv", "r</think>c", ("r", "c")),
        ("granite_thinking", "r</think>\nc", ("r", "\nc")),
        ("qwen3_thinking", "r</think>c", ("r", "c")),
    ],
)
def test_family_readings(name, text, want):
    _check(name, text, want)


def test_start_state_from_flag_and_prompt_for_every_family():
    for name in PRESETS:
        fmt = reasoning_format(PRESETS[name])
        rp = pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless")
        body = "why" + fmt.end + "answer"
        if name in KEEPS_REASONING:
            assert rp.parse(body, reasoning_started=True).content == fmt.start + body
            assert rp.parse(body, reasoning_started=False).content == body
            assert rp.parse(body, prompt="x" + fmt.start).content == fmt.start + body
            continue
        opened = rp.parse(body, reasoning_started=True)
        assert (opened.reasoning, opened.content) == ("why", "answer"), name
        assert rp.parse(body, prompt="user" + fmt.start).reasoning == "why", name
        assert rp.parse("plain", reasoning_started=False).reasoning is None, name
        # a template that wrote an empty block (thinking off) has not started reasoning
        assert rp.parse("plain", prompt=fmt.start + fmt.end).reasoning is None, name
        assert _stream(rp, list(body), reasoning_started=True).reasoning == "why", name


def test_sections_stream_holds_back_only_a_possible_marker():
    rp = pb.get_reasoning_parser("builtin:hunyuan_a13b", conventions="lossless")
    s = rp.stream()
    assert s.feed("<think>abc</th").reasoning == "abc"
    d = s.feed("ink><ans")
    assert (d.reasoning, d.content) == ("", "")
    assert s.feed("wer>hi</a").content == "hi"
    assert s.feed("x").content == "</ax"


def test_markers_search_prefers_earliest_then_longest():
    m = Markers(["<ifm|think>", "<ifm|think_fast>", "ab"])
    assert m.find("zz<ifm|think_fast>ab") == (2, "<ifm|think_fast>")
    assert m.hold_from("text <ifm|thi") == 5
    assert m.hold_from("text a") == 5 and m.hold_from("plain") == 5


def test_stream_is_linear_in_the_output():
    """Every character is moved out of the held buffer once: the buffer never grows past a marker."""
    rp = parser_class("kimi_k3")()
    s = rp.stream()
    longest = max(len(m) for m in rp.markers)
    for ch in "reasoning <|close|" * 400 + "<|close|>think<|sep|>" + "content <|clo" * 400:
        s.feed(ch)
        assert len(s.pending_text()) < longest
    r = s.finish()
    assert r.reasoning.endswith("<|close|") and r.content.endswith("<|clo")


_MARKERS = sorted(
    {
        m
        for name in PRESETS
        for m in (*reasoning_format(PRESETS[name]).markers, *reasoning_format(PRESETS[name]).closers)
    }
)
_pieces = st.lists(
    st.one_of(
        st.sampled_from(_MARKERS),
        st.sampled_from([m[: len(m) // 2] for m in _MARKERS] + [m[len(m) // 2 :] for m in _MARKERS]),
        st.sampled_from([" ", "\n", "a", "é", "🙂", "<", ">", "|", "x y"]),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(
    parts=_pieces,
    name=st.sampled_from(sorted(PRESETS)),
    started=st.sampled_from([None, True, False]),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=8),
)
def test_any_chunking_equals_oneshot(parts, name, started, cuts):
    text = "".join(parts)
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless")
    want = rp.parse(text, reasoning_started=started)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    got = _stream(rp, chunks, reasoning_started=started)
    assert (got.reasoning, got.content, got.block) == (want.reasoning, want.content, want.block)
    got1 = _stream(rp, list(text), reasoning_started=started)
    assert (got1.reasoning, got1.content, got1.block) == (want.reasoning, want.content, want.block)


def test_section_parser_without_extra_markers_reads_like_think_tags():
    """The two engines agree on a plain pair (one grammar, two implementations)."""
    fmt = reasoning_format("qwen3")
    cls = type("PlainSections", (SectionReasoningParser,), {"name": "plain", "format": fmt})
    plain, think = cls(), pb.get_reasoning_parser("builtin:qwen3", conventions="lossless")
    for text in ["<think>a</think>b", "  <think>a", "a</think>b", "", "<think></think>x", " x <think>y"]:
        for started in (None, True, False):
            a, b = plain.parse(text, reasoning_started=started), think.parse(text, reasoning_started=started)
            assert (a.reasoning, a.content, a.block) == (b.reasoning, b.content, b.block), (text, started)


def test_family_table_names_a_builtin_parser_that_exists():
    rows = family_table().of_kind("reasoning")
    named = [fam.parser_for("builtin") for fam in rows if fam.parser_for("builtin")]
    assert len(named) >= 40
    assert set(named) <= set(REASONING_PARSERS)
    spellings = [s for fam in rows for s in fam.spellings]
    assert len(spellings) == len(set(spellings))  # no alias names two reasoning families


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(PRESETS)),
    reasoning=st.text(alphabet="ab é🙂\n<>/|", min_size=1, max_size=20),
    content=st.text(alphabet="cd ü🐼\n", max_size=20),
)
def test_format_renderer_and_parser_agree(name, reasoning, content):
    """What a family's format renders, its builtin parser reads back (markers defined once)."""
    fmt = reasoning_format(PRESETS[name])
    markers = (*fmt.markers, *fmt.closers)
    if any(m in reasoning + content for m in markers):
        return  # marker text inside the sample changes the reading by design
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions="lossless")
    for started in (True, False):
        text = fmt.render_text(reasoning, content, started=started)
        got = rp.parse(text, reasoning_started=started)
        if name in KEEPS_REASONING:
            assert got.content == ((fmt.start if started else "") + text or None)
        else:
            assert (got.reasoning, got.content) == (reasoning, content or None), (name, text)

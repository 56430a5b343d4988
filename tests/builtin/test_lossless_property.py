"""`conventions="lossless"` loses nothing (issue 39): every character of an output that is not the
format's markup comes back, in order, in the content, a call's `raw_text`, `dropped` or (formats whose
other channel the family's reasoning parser reads: `WITH_REASONING`) the reasoning, one-shot and
streamed at any chunking (a stream finishes with its one-shot reading, field for field).

Over the bundled fixtures, the consensus corpus and the adversarial corpus (small sizes), for every
builtin tool parser a transcript's family has. Whitespace is not compared (whitespace that only
separates calls is call structure) and the format's markers are taken out of both sides (a marker
that opens no call stays content, one that does is in the call's `raw_text`). The ``dev`` profile
reads every fifth transcript one-shot and draws a few chunkings; ``thorough`` reads them all.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsebridge as pb
from parsebridge.adapters.builtin import TOOL_PARSERS
from parsebridge.conformance.adversarial import adversarial_transcripts
from parsebridge.conformance.consensus import consensus_corpus
from parsebridge.conformance.transcripts import bundled_transcripts

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "dev") == "thorough"
EVERY = 1 if THOROUGH else 5
#: Whitespace (it may only separate calls) and JSON list punctuation (the brackets and commas around
#: the calls of list formats) are call structure, not text to keep.
_MARKUP = re.compile(r"[\s\[\],]+")

#: Where lossless is known to leave characters out today (parser -> why); each is checked to still
#: lose something, so a fix shows up as a failure to remove the entry.
#: Markup a format writes around its calls besides its markers: a code fence wrapping a JSON payload,
#: the type word of a call header (``<｜tool_call_begin｜>function<｜tool_sep｜>``).
EXTRA_MARKUP: dict[str, tuple[str, ...]] = {
    "cohere": ("```json", "```"),
    "json": ("```json", "```"),
    "xlam": ("```json", "```"),
    "step3": ("function",),
    # (harmony's header words: the channel and the role a header names)
    "gpt_oss": ("analysis", "commentary", "final", "assistant"),
}

#: Formats whose tool parser leaves part of the output to the family's reasoning parser (harmony's
#: analysis channel, Inkling's thinking blocks): read through the pipeline of both, where that text
#: comes back as reasoning.
WITH_REASONING: dict[str, str] = {"gpt_oss": "gpt_oss", "inkling": "inkling"}


@cache
def _corpus() -> list[tuple[str, str, str, str]]:
    """(parser, transcript id, output, tools) for every transcript a builtin tool parser reads."""
    texts = [
        *bundled_transcripts(kinds=["tool"]),
        *(t for t in consensus_corpus() if t.kind == "tool"),
        *adversarial_transcripts(scale=0.001, kinds=("tool",)),
    ]
    out = []
    for t in texts:
        fam = t.resolve_family()
        name = fam.parser_for("builtin") if fam else None
        if name in TOOL_PARSERS:
            out.append((name, t.id, t.output, json.dumps(t.tools or [], sort_keys=True)))
    return out


def _bare(text: str, markers: tuple[str, ...]) -> str:
    for m in markers:
        text = text.replace(m, "")
    return _MARKUP.sub("", text)


def _kept_in_order(want: str, *parts: str) -> bool:
    """`want`'s characters, in order, taken from `parts` in each part's order (a part may hold more:
    stray text inside a call's span is content and in the call's `raw_text` too)."""
    states = {(0,) * len(parts)}
    for ch in want:
        after = set()
        for state in states:
            for p, at in enumerate(state):
                k = parts[p].find(ch, at)
                if k >= 0:
                    after.add((*state[:p], k + 1, *state[p + 1 :]))
        if not after:
            return False
        states = set(sorted(after)[:64])  # (bounded: the corpus's texts are short)
    return True


def _outside_calls(text: str, result: Any) -> str | None:
    """The output with each call's `raw_text` cut out, in order (None: a raw text is not there)."""
    parts, at = [], 0
    for call in result.tool_calls:
        raw = call.raw_text or ""
        j = text.find(raw, at)
        if j < 0:
            return None
        parts.append(text[at:j])
        at = j + len(raw)
    parts.append(text[at:])
    return "".join(parts)


def lost(parser: Any, text: str, result: Any) -> str | None:
    """What the reading does not account for (None: every non-markup character comes back, in order)."""
    outside = _outside_calls(text, result)
    if outside is None:
        return "a call's raw_text is not a span of the output"
    extra = EXTRA_MARKUP.get(parser.name, ())
    markers = tuple(sorted((m for m in (*parser.markers, *extra) if m), key=len, reverse=True))
    want = _bare(outside, markers)
    content, dropped = _bare(result.content or "", markers), _bare(result.dropped or "", markers)
    reasoning = _bare(getattr(result, "reasoning", None) or "", markers)
    if _kept_in_order(want, content, dropped, reasoning):
        return None
    return f"outside the calls {want[:120]!r}, content {content[:120]!r}, dropped {dropped[:120]!r}"


def _fields(result: Any) -> tuple[Any, ...]:
    calls = [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in result.tool_calls]
    return result.content, calls, result.dropped, getattr(result, "reasoning", None)


@cache
def _parser(name: str, tools: str) -> Any:
    return pb.get_tool_parser(f"builtin:{name}", tools=json.loads(tools) or None, conventions="lossless")


@cache
def _reader(name: str, tools: str) -> Any:
    """What reads the output: the tool parser, or the pipeline of it and its reasoning parser."""
    if name not in WITH_REASONING:
        return _parser(name, tools)
    return pb.get_pipeline(
        reasoning=f"builtin:{WITH_REASONING[name]}",
        tool=f"builtin:{name}",
        tools=json.loads(tools) or None,
        conventions="lossless",
    )


def test_lossless_accounts_for_every_character_one_shot() -> None:
    corpus = _corpus()[::EVERY]
    assert len({c[0] for c in corpus}) > 20
    losses: dict[str, list[str]] = {}
    for name, tid, text, tools in corpus:
        why = lost(_parser(name, tools), text, _reader(name, tools).parse(text))
        if why is not None:
            losses.setdefault(name, []).append(f"{tid}: {why}")
    assert not losses, "\n".join(f"{n}: {v[0]} (+{len(v) - 1})" for n, v in losses.items())


@settings(max_examples=400 if THOROUGH else 40)
@given(data=st.data())
def test_lossless_streams_lose_nothing_at_any_chunking(data: st.DataObject) -> None:
    corpus = _corpus()
    name, tid, text, tools = data.draw(st.sampled_from(corpus), label="transcript")
    cuts = sorted(data.draw(st.sets(st.integers(0, max(0, len(text) - 1)), max_size=12), label="cuts"))
    reader = _reader(name, tools)
    stream, at = reader.stream(), 0
    for cut in [*cuts, len(text)]:
        stream.feed(text[at:cut])
        at = max(at, cut)
    got, want = stream.finish(), reader.parse(text)
    assert _fields(got) == _fields(want), (name, tid, cuts)
    assert lost(_parser(name, tools), text, got) is None, (name, tid)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("hermes", 'Hi <tool_call>{"name": "f", "arguments": {}}</tool_call> there'),
        (
            "qwen3_coder",
            "A <tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call> B",
        ),
    ],
)
def test_the_accounting_sees_a_lost_character(name: str, text: str) -> None:
    parser = _parser(name, "[]")
    result = parser.parse(text)
    assert lost(parser, text, result) is None
    result.content = (result.content or "").replace("e", "", 1).replace("B", "", 1)
    assert lost(parser, text, result) is not None


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_a_pipeline_stream_finishes_with_its_calls_raw_text(conventions: str) -> None:
    # (the pipeline's own accumulator built the calls from deltas, which carry no raw text)
    text = '<think>hm</think>Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    pipe = pb.get_pipeline(reasoning="builtin:qwen3", tool="builtin:hermes", conventions=conventions)
    stream = pipe.stream()
    for chunk in (text[:10], text[10:30], text[30:]):
        stream.feed(chunk)
    got = stream.finish()
    assert got.tool_calls[0].raw_text == '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    assert _fields(got) == _fields(pipe.parse(text))

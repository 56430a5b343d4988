"""The builtin tool driver's per-chunk shortcuts change nothing a client sees.

`BuiltinToolStream.feed` skips the format's step for a chunk of plain
content or a chunk inside a call's raw arguments (`_fast_mode`), and formats
that declare `_idle_when_empty` stop stepping once a chunk is consumed. Each
shortcut must hand out exactly the deltas the step would have: same
fragments, same order, same call indices and names. This streams every
bundled transcript of the formats that take them, at several chunkings, with
the shortcuts on and off, and compares delta by delta.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parsebridge as pb
from parsebridge.conformance.transcripts import bundled_transcripts

FAMILIES = ("hermes", "llama3_json", "deepseek_v3")


def _chunkings(text: str) -> list[list[str]]:
    rng = random.Random(len(text))
    out = [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 2, 3, 7)]
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 12))) if len(text) > 1 else []
        out.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return out


def _shortcuts_off(m: pytest.MonkeyPatch, spec: str) -> None:
    """The machine's full step for every chunk (no mode, no whole-token act, from the start)
    and at the end of output."""
    stream_cls = type(pb.get_tool_parser(spec).inner.stream())
    m.setattr(stream_cls, "_fast_mode", lambda self: None)
    m.setattr(stream_cls, "_start_mode", None)
    m.setattr(stream_cls, "_start_exact", None)
    m.setattr(stream_cls, "_at_rest", lambda self: False)


def _deltas(spec: str, tools: list[dict[str, Any]], chunks: list[str]) -> list[dict[str, Any]]:
    parser = pb.get_tool_parser(spec, tools=tools)
    stream = parser.stream()
    seen = [stream.feed(c).to_openai() for c in chunks]
    seen.append(stream.flush().to_openai())
    for delta in seen:  # call ids are fresh per stream
        for call in delta.get("tool_calls", ()):
            call.pop("id", None)
    return seen


@pytest.mark.parametrize("family", FAMILIES)
def test_shortcuts_hand_out_the_steps_deltas(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    transcripts = bundled_transcripts(families=[family], kinds=["tool"])
    assert transcripts, family
    spec = f"builtin:{family}"
    shortcut_hits = 0
    for t in transcripts:
        for chunks in _chunkings(t.output):
            fast = _deltas(spec, t.tools, chunks)
            with monkeypatch.context() as m:
                _shortcuts_off(m, spec)
                slow = _deltas(spec, t.tools, chunks)
            assert fast == slow, (t.id, chunks)
            shortcut_hits += 1
    assert shortcut_hits > 0


def _full_steps(monkeypatch: pytest.MonkeyPatch, spec: str, chunks: list[str]) -> tuple[list[str], Any]:
    """The chunks that reached the machine's full step (`_feed`), and the stream's result."""
    stream = pb.get_tool_parser(spec).inner.stream()
    stepped: list[str] = []
    feed = type(stream)._feed

    def counted(self: Any, text: str, token_ids: Any, final: bool = False) -> Any:
        # (`_feed("", final=True)` is the end of output, not a chunk.)
        if text:
            stepped.append(text)
        return feed(self, text, token_ids, final)

    monkeypatch.setattr(type(stream), "_feed", counted)
    for chunk in chunks:
        stream.feed(chunk)
    return stepped, stream.finish()


def test_shortcuts_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcuts run (so the comparison above compares two different paths)."""
    chunks = [
        "Hello ",
        "there. ",
        '<tool_call>{"name": "f", "arguments": {"q": "',
        "long ",
        "text",
        '", "n": ',
        "1",
        "}}",
        "</tool_call>",
    ]
    full_steps, result = _full_steps(monkeypatch, "builtin:hermes", chunks)
    # The call's head and the object's close take the full step; the content (from the first
    # chunk: the start state's mode is known), in-string and between-keys chunks do not.
    assert full_steps == [chunks[2], "}}", "</tool_call>"]
    assert result.tool_calls[0].arguments == {"q": "long text", "n": 1}


# --- generated arguments: the in-place argument path against the full step --------------------

_RENDER = {
    "deepseek_v3": lambda name, args: (
        "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
        f"{name}\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "hermes": lambda name, args: (
        f'Sure.\n<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'
    ),
    "llama3_json": lambda name, args: f'{{"name": "{name}", "parameters": {args}}}',
}
#: Argument texts heavy in what the in-place path must get right: quotes, escapes, commas at
#: several depths, brackets, marker characters inside and outside strings, trailing spaces.
_PIECES = ['"', '\\"', "\\\\", ",", ":", " ", "{", "}", "[", "]", "<", "a", "1", "\n", '"k": ', '"v"']


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    family=st.sampled_from(sorted(_RENDER)),
    body=st.lists(st.sampled_from(_PIECES), max_size=24).map("".join),
    valid=st.booleans(),
    data=st.data(),
)
def test_in_place_arguments_match_the_step(
    family: str, body: str, valid: bool, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = json.dumps({"q": body, "n": [1, {"x": body}], "s": "a,b"}) if valid else "{" + body
    text = _RENDER[family]("get_weather", args)
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=40, unique=True).map(sorted))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b]]
    spec = f"builtin:{family}"
    fast = _deltas(spec, [], chunks)
    with monkeypatch.context() as m:
        _shortcuts_off(m, spec)
        slow = _deltas(spec, [], chunks)
    assert fast == slow, chunks


# --- stopping the step loop once a chunk is consumed (`_idle_when_empty`) -----------------------

_IDLE = ("hermes", "deepseek_v3")
#: Marker-heavy pieces: markers whole (as tokenizers emit them), cut, doubled, in strings, unclosed.
_SOUP = {
    "deepseek_v3": [
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁ca",
        "function",
        "get_weather",
        "\n",
        "```json\n",
        "```",
        '{"q": "<｜tool▁call▁end｜>"}',
        "{",
        "}",
        '"',
        " ",
        "x",
    ],
    "hermes": [
        "<tool_call>",
        "</tool_call>",
        "<tool_",
        '{"name": "f", "arguments": ',
        '{"name": ',
        '"f"',
        '"arguments": ',
        '{"q": "</tool_call>"}',
        "{",
        "}",
        '"',
        ",",
        " ",
        "\n",
        "x",
    ],
}


def _observed(spec: str, chunks: list[str]) -> list[Any]:
    """Every delta, and what the stream holds back after each chunk (the guard reads that)."""
    stream = pb.get_tool_parser(spec).inner.stream()
    seen: list[Any] = []
    for chunk in chunks:
        delta = stream.feed(chunk).to_openai()
        for call in delta.get("tool_calls", ()):
            call.pop("id", None)
        seen.append((delta, stream.pending_text()))
    result = stream.finish()
    seen.append((result.content, [(c.name, c.arguments, c.invalid_arguments) for c in result.tool_calls]))
    seen.append(stream.call_spans)  # where each call was, as `parse` reports it (`raw_text`)
    return seen


def _both_ways(monkeypatch: pytest.MonkeyPatch, spec: str, chunks: list[str]) -> tuple[Any, Any]:
    """What `_observed` sees with the format's `_idle_when_empty`, and with it switched off."""
    idle = _observed(spec, chunks)
    with monkeypatch.context() as m:
        m.setattr(type(pb.get_tool_parser(spec).inner.stream()), "_idle_when_empty", False)
        stepping = _observed(spec, chunks)
    return idle, stepping


@pytest.mark.parametrize("family", _IDLE)
def test_idle_formats_declare_it(family: str) -> None:
    """The comparisons below compare two paths only while these formats take the shortcut."""
    assert type(pb.get_tool_parser(f"builtin:{family}").inner.stream())._idle_when_empty


@pytest.mark.parametrize("family", _IDLE)
def test_stopping_at_a_consumed_chunk_changes_nothing_bundled(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = f"builtin:{family}"
    for t in bundled_transcripts(families=[family], kinds=["tool"]):
        for chunks in _chunkings(t.output):
            idle, stepping = _both_ways(monkeypatch, spec, chunks)
            assert idle == stepping, (t.id, chunks)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(_IDLE), data=st.data())
def test_stopping_at_a_consumed_chunk_changes_nothing_soup(
    family: str, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks are whole soup pieces (markers arrive as one chunk, as tokenizers send them)."""
    chunks = data.draw(st.lists(st.sampled_from(_SOUP[family]), max_size=30))
    idle, stepping = _both_ways(monkeypatch, f"builtin:{family}", chunks)
    assert idle == stepping, chunks


# --- quiet states: keys and names of JSON call objects collected in place (`Quiet`) --------------

_SOUP["llama3_json"] = [
    "<|python_tag|>",
    '{"name": ',
    '"f"',
    '"get_',
    "weather",
    '"',
    '", "parameters": ',
    '"parameters": ',
    '{"q": "x"}',
    "{",
    "}",
    "; ",
    ",",
    " ",
    "\\",
    "x",
    ' {"na',
]
_SOUP["hermes"] = [
    *_SOUP["hermes"],
    '{"na',
    'me": "get',
    "_weather",
    '", "argu',
    "ments",
    '"other": "',
    "\\",
    'ok <tool_call>{"na',
]
_SOUP["deepseek_v3"] = [
    *_SOUP["deepseek_v3"],
    "```",
    "json",
    "js`",
    "get",
    "_",
    "\n\n",
    "fun",
    "ction",
    "ok<｜tool▁call▁begin｜>fun",
    # whole tokens with acts, where they apply and where they do not
    '{"',
    '"}\n',
    "}\n",
    '"}',
    '":',
    ' "',
    '",',
    "\\",
    "\n```",
]


def _with_and_without_shortcuts(
    monkeypatch: pytest.MonkeyPatch, spec: str, chunks: list[str]
) -> tuple[Any, Any]:
    fast = _observed(spec, chunks)
    with monkeypatch.context() as m:
        _shortcuts_off(m, spec)
        slow = _observed(spec, chunks)
    return fast, slow


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(FAMILIES), data=st.data())
def test_shortcuts_change_nothing_soup(
    family: str, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deltas and held-back text after every chunk, shortcuts on and off (a quiet chunk may
    land inside a call whose name is not known yet: it must stay in that call's span)."""
    chunks = data.draw(st.lists(st.sampled_from(_SOUP[family]), max_size=30))
    fast, slow = _with_and_without_shortcuts(monkeypatch, f"builtin:{family}", chunks)
    assert fast == slow, chunks


@pytest.mark.parametrize(
    ("family", "chunks", "quiet"),
    [
        (
            "hermes",
            [
                "<tool_call>",
                '\n{"',
                "name",
                '": "',
                "get",
                "_weather",
                '", "',
                "arguments",
                '": {"q": 1}}',
                "</tool_call>",
            ],
            ["name", "get", "_weather", "arguments"],
        ),
        (
            "llama3_json",
            ['{"', "name", '": "', "get", "_weather", '", "parameters": {}}'],
            ["name", "get", "_weather"],
        ),
    ],
)
def test_quiet_shortcuts_are_taken(
    family: str, chunks: list[str], quiet: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names and keys of a JSON call object, fed a piece at a time, never reach the step."""
    full_steps, result = _full_steps(monkeypatch, f"builtin:{family}", chunks)
    assert not set(quiet) & set(full_steps), full_steps
    assert result.tool_calls[0].name == "get_weather"


def test_whole_tokens_are_acted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DeepSeek V3 reply streamed a token at a time (its special tokens whole, as its
    tokenizer sends them) never needs the full step: every chunk is a mode's or an act's."""
    chunks = [
        "Let", " me", " check", ".",
        "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>",
        "get", "_", "weather", "\n", "```", "json", "\n",
        '{"', "city", '":', ' "', "Paris", '",', ' "', "unit", '":', ' "', "c", '"}\n', "```",
        "<｜tool▁call▁end｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "search", "\n",
        "```", "json", "\n", "{", "}\n", "```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>",
    ]  # fmt: skip
    full_steps, result = _full_steps(monkeypatch, "builtin:deepseek_v3", chunks)
    assert full_steps == []
    monkeypatch.undo()
    # What the acts did is what the steps do: deltas, held-back text, calls and their spans.
    fast, slow = _with_and_without_shortcuts(monkeypatch, "builtin:deepseek_v3", chunks)
    assert fast == slow
    assert result.content == "Let me check."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("get_weather", {"city": "Paris", "unit": "c"}),
        ("search", {}),
    ]


# --- the remembered effect of a flat token on the raw scanner (`JsonRaw.effect_of`) -------------


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(['"', "\\", "a", ",", ":", " ", "<", "}", "n"]), max_size=20),
    in_str=st.booleans(),
    esc=st.booleans(),
    depth=st.integers(1, 3),
)
def test_flat_effects_are_what_scan_does(text: str, in_str: bool, esc: bool, depth: int) -> None:
    """Remembered or not, a text's effect on (in_str, esc) one level in or deeper is what the
    scan leaves, and a text the scan would stop in (a bracket or a marker) has none, nor one
    with a backslash outside a string for the states in which it is outside."""
    from parsebridge.adapters.builtin.engines.scan import EOB, JsonRaw

    esc = esc and in_str
    markers = ("<|end|>",)
    scanned = JsonRaw(markers)
    scanned.in_str, scanned.esc, scanned.depth = in_str, esc, depth
    why = scanned.scan(text, 0, markers, False, ",}]")[1]
    for _ in range(2):  # the first asks, the second may read what was remembered
        raw = JsonRaw(markers)
        effect = raw.effects.get(text) or raw.effect_of(text)
        if not effect:
            assert len(text) > 16 or any(c in text for c in "<}"), text
            continue
        assert why == EOB and scanned.depth == depth
        after = effect[2 * in_str + esc]
        if after is None:  # a backslash outside a string: the scan must see it (it gets lost)
            assert scanned.lost, text
        else:
            assert not scanned.lost and after == (scanned.in_str, scanned.esc), text


_DS_TOKENS = {
    "calls": "<｜tool▁calls▁begin｜>",
    "call": "<｜tool▁call▁begin｜>",
    "sep": "<｜tool▁sep｜>",
    "end": "<｜tool▁call▁end｜>",
    "calls_end": "<｜tool▁calls▁end｜>",
}


@st.composite
def _deepseek_replies(draw: st.DrawFn) -> list[str]:
    """A DeepSeek V3 / V3.1 reply as a server streams it: special tokens whole, the rest cut
    into small pieces; now and then a token dropped, doubled or a stray piece inserted."""
    t = _DS_TOKENS
    tokens: list[str] = []
    lead = draw(st.sampled_from(["", "Sure.", "Let me check. ", " \n"]))
    tokens += [lead[i : i + 3] for i in range(0, len(lead), 3)]
    tokens.append(t["calls"])
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["get_weather", "search", "", " f "]))
        args = json.dumps(
            draw(
                st.dictionaries(
                    st.sampled_from(["q", "n", "a b"]),
                    st.one_of(
                        st.integers(-5, 99),
                        st.text(alphabet='ab "\\\n{}<`', max_size=6),
                        st.lists(st.integers(0, 3), max_size=2),
                    ),
                    max_size=3,
                )
            )
        )
        if draw(st.booleans()):  # V3: typed head, name line, fenced arguments
            tokens += [t["call"], "function", t["sep"], name, "\n", "```", "json", "\n"]
            body = [args[i : i + 2] for i in range(0, len(args), 2)]
            tokens += [*body, "\n", "```", t["end"]]
        else:  # V3.1: NAME<sep>{json}
            tokens += [
                t["call"],
                name,
                t["sep"],
                *[args[i : i + 3] for i in range(0, len(args), 3)],
                t["end"],
            ]
    tokens.append(t["calls_end"])
    for _ in range(draw(st.integers(0, 3))):  # damage
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.sampled_from(["drop", "double", "insert"]))
        if how == "drop":
            del tokens[i]
        elif how == "double":
            tokens.insert(i, tokens[i])
        else:
            tokens.insert(
                i, draw(st.sampled_from(['"}\n', "}", "{", '{"', "x", " ", "\n", "```", *t.values()]))
            )
    return [tok for tok in tokens if tok]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=_deepseek_replies())
def test_deepseek_replies_token_by_token(chunks: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole-token acts and modes on replies shaped like real ones (and damaged ones): the
    deltas, held-back text, calls and call spans of the full steps, after every token."""
    fast, slow = _with_and_without_shortcuts(monkeypatch, "builtin:deepseek_v3", chunks)
    assert fast == slow, chunks

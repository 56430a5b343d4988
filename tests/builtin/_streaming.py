"""Shared helpers for the builtin tool-parser tests: chunked streaming, comparisons, generators.

The central property: a stream fed at any chunking assembles (through
`DeltaAccumulator`) exactly the one-shot result, deltas follow the OpenAI
convention, and no text is lost.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hypothesis import strategies as st

from parsebridge.adapters.builtin.engines.whole_calls import WholeCalls
from parsebridge.protocol import StreamDelta, ToolCall, ToolParseResult
from parsebridge.protocol.parsers import ToolParserBase

#: examples per hypothesis test (raise it for a long fuzz run: PB_BUILTIN_EXAMPLES=5000)
EXAMPLES = int(os.environ.get("PB_BUILTIN_EXAMPLES", "75"))

Norm = tuple[str | None, list[tuple[str, dict[str, Any], str | None]]]


def norm(result: ToolParseResult) -> Norm:
    """A result without ids (ids legitimately differ between runs)."""
    return result.content, [(c.name, c.arguments, c.invalid_arguments) for c in result.tool_calls]


def split_at(text: str, cuts: Iterable[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    out, last = [], 0
    for p in points:
        out.append(text[last:p])
        last = p
    out.append(text[last:])
    return out


def run_stream(
    parser: ToolParserBase, chunks: Sequence[str]
) -> tuple[ToolParseResult, list[StreamDelta], Any]:
    s = parser.stream()
    deltas = [s.feed(c) for c in chunks]
    deltas.append(s.flush())
    result = s.finish()
    return result, deltas, s


def assert_convention(deltas: Sequence[StreamDelta]) -> None:
    """First delta of each call: index+id+name; later ones: arguments only; indices in order."""
    seen: set[int] = set()
    last = -1
    for d in deltas:
        for cd in d.tool_calls:
            if cd.index not in seen:
                # a fresh "call_…" id, or the id the model wrote (Kimi K2's functions.NAME:IDX)
                assert cd.id and not any(c.isspace() for c in cd.id), cd
                assert cd.name is not None, cd
                assert cd.index == last + 1, (cd.index, last)
                seen.add(cd.index)
                last = cd.index
            else:
                assert cd.id is None and cd.name is None, cd
                assert cd.index == last, "fragments only for the current call"


def assert_streams_like_oneshot(
    parser: ToolParserBase, text: str, chunkings: Iterable[Sequence[str]] | None = None
) -> ToolParseResult:
    """Per-character, whole-text and the given chunkings all equal the one-shot parse."""
    one = parser.parse(text)
    expected = norm(one)
    plans: list[Sequence[str]] = [list(text), [text], *(chunkings or [])]
    for chunks in plans:
        result, deltas, s = run_stream(parser, chunks)
        assert norm(result) == expected, (chunks, norm(result), expected)
        assert_convention(deltas)
        assert not s.accumulator.anomalies, s.accumulator.anomalies
    return one


def random_chunkings(text: str, seed: int, count: int = 3) -> list[list[str]]:
    rng = random.Random(seed)
    plans = []
    for _ in range(count):
        k = rng.randint(0, max(0, len(text) // 2))
        plans.append(split_at(text, rng.sample(range(1, len(text)), min(k, max(0, len(text) - 1)))))
    return plans


def kept_text(parser: ToolParserBase, text: str, render: Callable[[ToolCall], str] | None = None) -> str:
    """Everything the stream shows: content, names and argument fragments (or `render(call)`)."""
    result, _deltas, s = run_stream(parser, [text])
    parts = [result.content or ""]
    for i, call in enumerate(result.tool_calls):
        parts.append(call.name)
        parts.append(render(call) if render else s.accumulator.arguments_text(i))
    return "".join(parts)


def assert_no_text_lost(
    parser: ToolParserBase,
    text: str,
    markers: Sequence[str],
    structural: str = "",
    render: Callable[[ToolCall], str] | None = None,
) -> None:
    """Every non-whitespace character outside markers/structure shows up somewhere."""
    stripped = text
    for m in sorted(markers, key=len, reverse=True):
        stripped = stripped.replace(m, " ")
    kept = set(kept_text(parser, text, render))
    missing = {c for c in stripped if not c.isspace() and c not in structural and c not in kept}
    assert not missing, (missing, text)


# --- generators -------------------------------------------------------------------------------

NOISE_ALPHABET = st.sampled_from(list("abcdefghij XYZ0123.,!?:'\n\té漢😀-_=()"))
noise = st.text(NOISE_ALPHABET, min_size=1, max_size=12)
ws = st.text(st.sampled_from([" ", "\n", "\t"]), min_size=1, max_size=3)
names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=8)
)


def json_values(markers: Sequence[str] = ()) -> st.SearchStrategy[Any]:
    strings = st.text(max_size=8) | st.sampled_from(["", '"', "\\", "😀é", *markers])
    leaves = json_scalars | strings
    return st.recursive(
        leaves,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=6,
    )


def json_args(markers: Sequence[str] = ()) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.text(max_size=6), json_values(markers), max_size=4)


dumps_style = st.sampled_from(
    [
        lambda v: json.dumps(v),
        lambda v: json.dumps(v, ensure_ascii=False),
        lambda v: json.dumps(v, indent=1, ensure_ascii=False),
        lambda v: json.dumps(v, separators=(",", ":")),
    ]
)


def expected_content(items: Sequence[tuple[str, Any]]) -> str | None:
    """Rule 1 over a sequence of ("text", s) / ("call", ...) items built from valid calls."""
    merged: list[tuple[str, Any]] = []
    for kind, value in items:
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    out = []
    for i, (kind, value) in enumerate(merged):
        if kind != "text":
            continue
        touches_call = (i > 0 and merged[i - 1][0] == "call") or (
            i + 1 < len(merged) and merged[i + 1][0] == "call"
        )
        if value.isspace() and touches_call:
            continue
        out.append(value)
    return "".join(out) or None


#: One kind of well-formed call for `mixed_outputs`: it draws and returns its ("call", (name,
#: arguments, text)) items (a section of several calls: the text on the first, "" on the others).
CallKind = Callable[[Callable[..., Any]], list[tuple[str, Any]]]


@st.composite
def mixed_outputs(
    draw: Callable[..., Any],
    calls: Sequence[CallKind],
    bad: Sequence[str],
    cut: Sequence[str] = (),
    most: int = 3,
) -> tuple[str, list[tuple[str, Any]] | None]:
    """A model output of up to `most` pieces: text, whitespace, a call (one of `calls`: a kind given
    twice is drawn twice as often) or `bad` markup, perhaps ending with a `cut` (a call cut short).
    Returns its text and, where it holds nothing bad or cut, its items (`expected_content`)."""
    items: list[tuple[str, Any]] = []
    valid = True
    for _ in range(draw(st.integers(0, most))):
        kind = draw(st.sampled_from(["text", "ws", *calls, "bad"]))
        if kind == "text":
            items.append(("text", draw(noise)))
        elif kind == "ws":
            items.append(("text", draw(ws)))
        elif kind == "bad":
            valid = False
            items.append(("text", draw(st.sampled_from(bad))))
        else:
            items.extend(kind(draw))
    if cut and draw(st.booleans()):
        valid = False
        items.append(("text", draw(st.sampled_from(cut))))
    text = "".join(v[2] if k == "call" else v for k, v in items)
    return text, (items if valid else None)


@st.composite
def chunk_plan(draw: Callable[..., Any], text: str) -> list[str]:
    """A random chunking of `text` (1-char pieces up to the whole text)."""
    if len(text) < 2:
        return [text]
    cuts = draw(st.lists(st.integers(1, len(text) - 1), max_size=min(40, len(text))))
    return split_at(text, cuts)


def soup(tokens: Sequence[str]) -> st.SearchStrategy[str]:
    """Adversarial text: marker pieces, partial markers, JSON punctuation and noise, shuffled."""
    pieces = list(tokens)
    pieces += [t[: len(t) // 2] for t in tokens if len(t) > 1]
    pieces += ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "\n", '"name"', '"arguments"', "f", "1"]
    return st.lists(st.sampled_from(pieces) | noise, max_size=25).map("".join)


def check_soup(parser: ToolParserBase, data: st.DataObject, tokens: Sequence[str]) -> None:
    """Whatever the text, any chunking streams to the one-shot result and nothing raises."""
    text = data.draw(soup(tokens))
    assert_streams_like_oneshot(parser, text, [data.draw(chunk_plan(text))])


def max_held(parser: ToolParserBase, text: str, chunk: int = 4) -> int:
    """The most raw text a stream's machine held at once (the linearity contract: a few marker
    characters). A builtin stream also holds a call until it is whole (`whole_calls`), outside its
    machine: that is not counted here (the machine's own `pending_text`, under the mixin's)."""
    s: Any = parser.stream()
    held = super(WholeCalls, s).pending_text if isinstance(s, WholeCalls) else s.pending_text
    most = 0
    for i in range(0, len(text), chunk):
        s.feed(text[i : i + chunk])
        most = max(most, len(held()), len(s._buf))
    s.finish()
    return most


#: One tool whose parameters cover every JSON-schema type, for the schema-typed XML formats.
TYPED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "typed",
            "parameters": {
                "type": "object",
                "properties": {
                    "s": {"type": "string"},
                    "i": {"type": "integer"},
                    "n": {"type": "number"},
                    "b": {"type": "boolean"},
                    "o": {"type": "object"},
                    "a": {"type": "array"},
                    "u": {"type": ["string", "null"]},
                    "x": {"description": "no type"},
                },
            },
        },
    }
]


def interleaves(whole: str, *parts: str) -> bool:
    """True when `whole` is `parts` interleaved: every part's characters, in the part's order,
    and nothing else (e.g. an output's text as its content, its `dropped` and its calls' raw text)."""
    if len(whole) != sum(map(len, parts)):
        return False
    # Each state is how far each part but the last has been read (the last follows from the rest).
    states = {(0,) * (len(parts) - 1)}
    for k, ch in enumerate(whole):
        after = set()
        for state in states:
            last = k - sum(state)
            for p, at in enumerate(state):
                if at < len(parts[p]) and parts[p][at] == ch:
                    after.add((*state[:p], at + 1, *state[p + 1 :]))
            if last < len(parts[-1]) and parts[-1][last] == ch:
                after.add(state)
        if not after:
            return False
        states = after
    return True

"""The adversarial cases: outputs built to take a parser down, one builder per case.

Documented case by case in ``fixtures/adversarial.md``. Everything is
generated deterministically, never stored: the large cases are megabytes.
`build_case(kind, family, case, size)` gives one case at a chosen size (the
benchmark's time-vs-length series); `adversarial_transcripts(families,
scale)` every case of every family at nominal size × `scale`. ``expected``
is set only where the reading is unambiguous.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...formats import granite, hermes, mistral, phi4_mini, think
from ...protocol import family_table
from ..transcripts import Expected, ExpectedCall, Transcript
from .grammars import (
    _WORDS,
    CONTROLS,
    FOREIGN_FRAGMENTS,
    GRAMMARS,
    SURROGATES,
    TOOLS,
    Grammar,
    _j,
    all_markers,
    grammar,
    prose,
)

#: Markers of the most common formats, put inside every family's string arguments.
COMMON_MARKERS = (think.END, think.START, mistral.TOOL_CALLS, hermes.START, hermes.END)


@dataclass(frozen=True)
class Case:
    """One adversarial case: `build(grammar, size)` gives (output, expected or None)."""

    name: str
    kinds: tuple[str, ...]
    nominal: int  # size at scale 1 (characters; calls for many-calls; depth for deep-nesting)
    build: Callable[[Grammar, int], tuple[str, Expected | None]]
    doc: str


def _weather(loc: str) -> str:
    return _j({"location": loc, "days": 3})


def _huge_content(g: Grammar, size: int) -> tuple[str, Expected | None]:
    text = prose(size, seed=1)
    if g.kind == "reasoning":
        out = g.reason("short.", text) if g.reason else text  # type: ignore[misc]
        return out, Expected(reasoning="short.", content=text)
    # harmony (gpt_oss) text outside any channel has no obvious reading
    return text, (None if g.reasoning_family else Expected(content=text))


def _huge_reasoning(g: Grammar, size: int) -> tuple[str, Expected | None]:
    text = prose(size, seed=2)
    assert g.reason is not None
    return g.reason(text, "Done."), Expected(reasoning=text, content="Done.")


def _huge_arguments(g: Grammar, size: int) -> tuple[str, Expected | None]:
    value = prose(size, seed=3).replace("\n", " ")
    out = g.calls([("search_web", _j({"query": value}))])
    return out, _expect(g, [("search_web", {"query": value})])


def _many_calls(g: Grammar, count: int) -> tuple[str, Expected | None]:
    count = max(2, count)
    items = [("get_weather", {"location": f"City {i} 漢", "days": i % 7}) for i in range(count)]
    out = g.calls([(n, _j(a)) for n, a in items])
    return out, (_expect(g, items) if g.multi else None)


def _nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth - 1):
        value = {"a": value}
    return {"a": value}


def _deep_nesting(g: Grammar, depth: int) -> tuple[str, Expected | None]:
    depth = max(2, depth)
    # built as text: json.dumps of a 10k-deep dict would itself recurse too deep
    text = '{"a": ' * depth + "1" + "}" * depth
    out = g.calls([("nest", text)])
    # pythonic arguments are Python literals, and Python's own parser stops at 200 levels
    readable = depth <= (150 if g.family == "pythonic" else 500)
    expected = _expect(g, [("nest", _nested(depth))]) if readable else None
    return out, expected


def _fragments(g: Grammar, size: int) -> tuple[str, Expected | None]:
    rng = random.Random(4)
    own = [m[: max(1, len(m) - 1)] for m in g.markers] + [m[: len(m) // 2] for m in g.markers if len(m) > 3]
    pool = [f for f in (*own, *FOREIGN_FRAGMENTS) if f not in _blocked(g)]
    parts: list[str] = ["Text "]
    n = 5
    while n < size:
        piece = (
            pool[rng.getrandbits(16) % len(pool)] if rng.getrandbits(1) else _WORDS[rng.getrandbits(3)] + " "
        )
        parts.append(piece)
        n += len(piece)
    out = "".join(parts)
    # a fragment glued to the next can complete a marker ("<tool_" + "call>"): no expected then
    complete = any(m in out for m in all_markers(g)) or any(m in out for m in _blocked(g))
    if g.kind == "reasoning" or g.reasoning_family:
        return out, None
    return out, (None if complete else Expected(content=out))


def _blocked(g: Grammar) -> tuple[str, ...]:
    """Fragments that are themselves a complete start of this format (not fragments for it)."""
    return {"phi4_mini": (phi4_mini.TAG,), "granite": (granite.TAG,)}.get(g.family, ())


def _marker_in_string(g: Grammar, size: int) -> tuple[str, Expected | None]:
    inside = " ".join((*all_markers(g), *COMMON_MARKERS))
    args = {"query": f"why does {inside} appear", "max_results": 2}
    out = g.calls([("search_web", _j(args))])
    if not g.json_args:  # a marker inside an XML parameter value: no reading is the obvious one
        return out, None
    return out, _expect(g, [("search_web", args)])


def _surrogates(g: Grammar, size: int) -> tuple[str, Expected | None]:
    noise = f"bad {SURROGATES} ctl {CONTROLS} end"
    if g.kind == "reasoning":
        assert g.reason is not None
        return g.reason(noise, noise), None
    # inside the call: a JSON escape of a lone surrogate, and raw controls in a string
    call = g.calls([("get_weather", '{"location": "\\ud800 ' + CONTROLS + '", "days": 1}')])
    return noise + "\n" + call + "\n" + noise, None


def _only_start(g: Grammar, size: int) -> tuple[str, Expected | None]:
    return g.start, None


def _start_repeated(g: Grammar, count: int) -> tuple[str, Expected | None]:
    return g.start * max(2, count), None


def _end_repeated(g: Grammar, count: int) -> tuple[str, Expected | None]:
    count = max(2, count)
    if g.kind == "reasoning":
        assert g.reason is not None
        return g.reason("think.", g.end * (count - 1)), None
    return g.calls([("get_weather", _weather("Oslo"))]) + g.end * count, None


def _unknown_tool(g: Grammar, size: int) -> tuple[str, Expected | None]:
    return g.calls([("no_such_tool", _j({"x": 1}))]), None


def _non_object(g: Grammar, size: int) -> tuple[str, Expected | None]:
    bad = ["[1, 2]", '"a string"', "42", "null", "true", "{broken", '{"a": 1}}']
    return g.calls([("get_weather", b) for b in bad]), None


def _unterminated(g: Grammar, size: int) -> tuple[str, Expected | None]:
    """An unterminated string swallows the rest: a stream must not hold all of it back forever."""
    if g.kind == "reasoning":
        return g.markers[0] + prose(size, seed=5), None
    tail = prose(size, seed=5) + " " + " ".join(all_markers(g))
    full = g.calls([("get_weather", '{"location": "' + tail)])
    return full, None


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            "huge-content",
            ("tool", "reasoning"),
            1_000_000,
            _huge_content,
            "1 MB of marker-free prose (unicode, newlines): all content.",
        ),
        Case(
            "huge-reasoning", ("reasoning",), 1_000_000, _huge_reasoning, "1 MB of reasoning, a short answer."
        ),
        Case(
            "huge-arguments", ("tool",), 1_000_000, _huge_arguments, "One call whose string argument is 1 MB."
        ),
        Case("many-calls", ("tool",), 10_000, _many_calls, "10k calls in one output."),
        Case("deep-nesting", ("tool",), 500, _deep_nesting, "Arguments nested 500 objects deep."),
        Case(
            "marker-fragments",
            ("tool", "reasoning"),
            100_000,
            _fragments,
            "Prefixes of this and other families' markers everywhere, never a whole marker.",
        ),
        Case(
            "marker-in-string",
            ("tool",),
            0,
            _marker_in_string,
            "Every marker of the family inside a JSON string argument.",
        ),
        Case(
            "surrogates-controls",
            ("tool", "reasoning"),
            0,
            _surrogates,
            "Lone surrogates and control characters in text and inside a call's arguments.",
        ),
        Case(
            "only-start-marker", ("tool", "reasoning"), 0, _only_start, "The output is only the start marker."
        ),
        Case(
            "start-markers-repeated",
            ("tool", "reasoning"),
            10_000,
            _start_repeated,
            "The start marker 10k times in a row.",
        ),
        Case(
            "end-markers-repeated",
            ("tool", "reasoning"),
            10_000,
            _end_repeated,
            "A complete call (or reasoning) then its end marker 10k times.",
        ),
        Case("unknown-tool", ("tool",), 0, _unknown_tool, "A call to a tool the request does not declare."),
        Case(
            "non-object-arguments",
            ("tool",),
            0,
            _non_object,
            "Arguments that are a list, a string, a number, null, true, broken JSON, an extra brace.",
        ),
        Case(
            "unterminated",
            ("tool", "reasoning"),
            100_000,
            _unterminated,
            "An argument string (or reasoning) opened and never closed, followed by 100 KB.",
        ),
    )
}


def _expect(
    g: Grammar, calls: Sequence[tuple[str, dict[str, Any]]], content: str | None = None
) -> Expected | None:
    if g.kind != "tool" or g.family == "gpt_oss":
        return None
    return Expected(content=content, tool_calls=[ExpectedCall(name=n, arguments=a) for n, a in calls])


def build_case(kind: str, family: str, case: str, size: int | None = None) -> Transcript:
    """One case for one family at `size` (case units; None: nominal). Raises KeyError for unknown ones."""
    g = grammar(kind, family)
    c = CASES[case]
    if kind not in c.kinds:
        raise KeyError(f"case {case!r} is not for {kind} families")
    n = c.nominal if size is None else size
    output, expected = c.build(g, n)
    return Transcript(
        id=f"adversarial-{kind}-{g.family}-{case}" + ("" if size is None else f"-{n}"),
        family=g.family,
        kind=g.kind,
        reasoning_family=g.reasoning_family,
        output=output,
        tools=TOOLS if kind == "tool" else [],
        reasoning_started_in_prompt=g.started,
        expected=expected,
        tags=["adversarial", case],
        notes=c.doc,
    )


def size_for(case: str, chars: int) -> int:
    """The case's size argument that gives an output of about `chars` characters."""
    c = CASES[case]
    if c.nominal == 0:
        return 0
    if case == "many-calls":
        return max(2, chars // 60)
    if case == "deep-nesting":
        return max(2, chars // 7)
    if case in ("start-markers-repeated", "end-markers-repeated"):
        return max(2, chars // 12)
    return chars


def adversarial_transcripts(
    families: Sequence[str] | None = None, scale: float = 1.0, *, kinds: Sequence[str] = ("tool", "reasoning")
) -> Iterator[Transcript]:
    """Every case of every family (or those named), sizes = nominal × `scale`, generated lazily.

    Deep nesting stays 500 deep at any scale ≥ 0.01 (its point is depth, not size).
    """
    wanted = None
    if families:
        wanted = set()
        for name in families:
            for kind in ("tool", "reasoning"):
                fam = family_table().get(kind, name)  # type: ignore[arg-type]
                wanted.add((kind, fam.name if fam else name))
    for (kind, family), _g in GRAMMARS.items():
        if kind not in kinds or (wanted is not None and (kind, family) not in wanted):
            continue
        for case in CASES.values():
            if kind not in case.kinds:
                continue
            if case.name == "deep-nesting":
                size = case.nominal if scale >= 0.01 else max(2, int(case.nominal * scale * 100))
            else:
                size = max(2, int(case.nominal * scale)) if case.nominal else 0
            yield build_case(kind, family, case.name, size)

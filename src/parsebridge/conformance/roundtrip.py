"""Round trip: calls → the family's renderer → a backend's parser → the same calls and content back.

For every tool family with a format in `parsebridge.formats` and a parser
on the backend, random calls (names; nested, unicode and escaped
arguments; several calls; text around them where the format keeps text as
content) are rendered as the model writes them and parsed one-shot and
streamed at random chunkings. Every reading must be the calls and content
that were rendered. Builtin divergences are bugs (the property tests fail
on them); framework divergences are data, tallied per backend and family
into the conformance report's ``roundtrip`` section.

Draws go through a `Draw`: `RandomDraw` (seeded) for the conformance
command, a hypothesis wrapper in the tests (so failures shrink), both on
the one definition of what an example is (`draw_example`).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..adapters._vocabularies import family_of
from ..formats import TOOL_FORMATS, ContentAt, ToolFormat, tool_format
from ..formats.cases import Span, build
from ..protocol import family_table
from ..terminal import counted
from .adversarial.fuzz import token_chunks
from .adversarial.probe import ProbeResult, _oneshot, _stream
from .checks import Difference, check_expected, check_invariants, family_markers
from .chunking import Chunk
from .classes import DivergenceClass
from .parallel import groups_units, map_forked
from .runner import Subject, target_for
from .transcripts import Expected, Transcript

T = TypeVar("T")


class Draw(Protocol):
    """Where an example's choices come from (seeded random, or hypothesis)."""

    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...

    def string(self, alphabet: str, lo: int, hi: int) -> str: ...


class RandomDraw:
    """Choices from a seeded `random.Random` (reproducible without hypothesis)."""

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def string(self, alphabet: str, lo: int, hi: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(lo, hi)))


# ---------------------------------------------------------------- drawing an example

_LOWER = "abcdefghijklmnopqrstuvwxyz"
#: String characters of JSON-argument formats: escapes, quotes, unicode, astral emoji.
JSON_CHARS = "abcdefghZ7 \"\\\n\t/'{}:,éж漢😀"
#: String characters of XML-style formats (values are text typed by the schema: no markup).
TEXT_CHARS = "abcdefghZ7 \"',.:-éж漢😀"
#: Words of the content around calls (no braces, brackets or angle brackets: never call syntax).
WORDS = (
    "Sure",
    "let",
    "me",
    "check",
    "the",
    "weather.",
    "Done!",
    "café",
    "жук",
    "漢字",
    "😀",
    "42",
    "then",
    "(ok)",
)
#: Floats that JSON, Python literals and XML text all write and read back exactly.
FLOATS = (0.5, -2.25, 1024.75, 3.0, -0.125)


def _name(d: Draw, taken: set[str]) -> str:
    while True:
        name = d.choice(_LOWER) + d.string(_LOWER + "_0123456789", 2, 10)
        if name not in taken and name != "function":  # "function" is DeepSeek V3's call type word
            taken.add(name)
            return name


def _string(d: Draw, typed: bool) -> str:
    chars = TEXT_CHARS if typed else JSON_CHARS
    body = d.string(chars, 0, 12)
    # text values are read without surrounding whitespace and typed by schema: start and end with a letter
    return d.choice(_LOWER) + body.strip() + d.choice(_LOWER) if typed else body


def _value(d: Draw, depth: int, typed: bool, top: bool) -> Any:
    kinds = ["str", "int", "float", "bool"]
    if not (typed and top):
        kinds.append("null")
    if depth < 2:
        kinds += ["list", "obj"]
    kind = d.choice(kinds)
    if kind == "str":
        return _string(d, typed and top)
    if kind == "int":
        return d.choice((d.integer(-1000, 1000), 2**40 + d.integer(0, 9)))
    if kind == "float":
        return d.choice(FLOATS)
    if kind == "bool":
        return d.choice((True, False))
    if kind == "null":
        return None
    if kind == "list":
        return [_value(d, depth + 1, typed, False) for _ in range(d.integer(0, 3))]
    return _object(d, depth + 1, typed, top=False)


def _object(d: Draw, depth: int, typed: bool, *, top: bool) -> dict[str, Any]:
    keys: set[str] = set()
    return {_name(d, keys): _value(d, depth, typed, top) for _ in range(d.integer(0 if top else 1, 4))}


def _text(d: Draw) -> str:
    return " ".join(d.choice(WORDS) for _ in range(d.integer(1, 6)))


_SCHEMA_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))


def tool_for(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool whose parameters are typed after `args` (XML formats type their text by it)."""
    props: dict[str, Any] = {}
    for key, value in args.items():
        kind = next((t for cls, t in _SCHEMA_TYPES if isinstance(value, cls)), "object")
        props[key] = {"type": "null" if value is None else kind}
    params = {"type": "object", "properties": props, "required": list(args)}
    return {"type": "function", "function": {"name": name, "parameters": params}}


@dataclass
class Example:
    """One drawn model output and what reading it must give."""

    family: str
    output: str
    content: str | None
    calls: list[dict[str, Any]]
    tools: list[dict[str, Any]]

    @property
    def expected(self) -> Expected:
        return Expected.model_validate({"content": self.content, "tool_calls": self.calls})


def draw_example(d: Draw, family: str) -> Example:
    """Random calls (and content where the format keeps it), rendered by the family's format."""
    fmt = tool_format(family)
    names: set[str] = set()
    count = d.integer(1, 3) if fmt.multi else 1
    calls = [(_name(d, names), _object(d, 0, fmt.typed_values, top=True)) for _ in range(count)]
    segments: list[str | Span] = []
    if ContentAt.BEFORE in fmt.content and d.integer(0, 1):
        segments.append(_text(d) + d.choice(("", " ", "\n", "\n\n")))
    if ContentAt.BETWEEN in fmt.content and len(calls) > 1:
        for i, call in enumerate(calls):
            if i:
                segments.append(d.choice(("\n", f"\n{_text(d)}\n")))
            segments.append(_span(fmt, [call]))
    else:
        segments.append(_span(fmt, calls))
    if ContentAt.AFTER in fmt.content and d.integer(0, 1):
        segments.append(d.choice((" ", "\n", "\n\n")) + _text(d))
    output, content, expected_calls = build(*segments)
    tools = [tool_for(n, a) for n, a in calls]
    return Example(family, output, content, expected_calls, tools)


def _span(fmt: ToolFormat, calls: list[tuple[str, dict[str, Any]]]) -> Span:
    return Span(fmt.render(calls), [{"name": n, "arguments": a} for n, a in calls])


def draw_chunks(d: Draw, text: str, max_size: int = 12) -> list[str]:
    """`text` cut at drawn sizes (a short cycle of 1..`max_size`)."""
    sizes = [d.integer(1, max_size) for _ in range(d.integer(1, 6))]
    out, i, k = [], 0, 0
    while i < len(text):
        out.append(text[i : i + sizes[k % len(sizes)]])
        i, k = i + sizes[k % len(sizes)], k + 1
    return out


# ---------------------------------------------------------------- families, parsers, checking


def roundtrip_families(backend: str) -> list[str]:
    """Tool families (aliases included) with a renderer and a parser on `backend` in the family table."""
    out = []
    table = family_table()
    for family in TOOL_FORMATS:
        fmt = tool_format(family)
        for name in (family, *fmt.aliases):
            fam = table.get("tool", name)
            if fam is None or fam.parser_for(backend) is None:
                continue
            if fmt.reasoning_family:
                rfam = table.get("reasoning", fmt.reasoning_family)
                if rfam is None or rfam.parser_for(backend) is None:
                    continue
            out.append(name)
    return out


def subject_for(backend: str, family: str, tools: Sequence[dict[str, Any]]) -> Any:
    """The backend's parser (or reasoning→tool pipeline) for the family with these tools; raises if none."""

    fmt = tool_format(family)
    t = Transcript(
        id="roundtrip", family=family, kind="tool", reasoning_family=fmt.reasoning_family, output=""
    )
    target = target_for(t, backend)
    if target.unsupported:
        raise LookupError(target.unsupported)
    # The round trip reads back every text it wrote around the calls: builtin's "lossless".
    return Subject(target, tools, **({"conventions": "lossless"} if backend == "builtin" else {}))


def markers_for(family: str) -> tuple[str, ...]:
    fmt = tool_format(family)
    found = [*family_markers("tool", family)]
    if fmt.reasoning_family:
        found += family_markers("reasoning", fmt.reasoning_family)
    return tuple(dict.fromkeys(found))


def check(
    subject: Any, example: Example, chunkings: Sequence[tuple[str, Sequence[Chunk | str]]]
) -> ProbeResult:
    """The example through the subject one-shot and at each chunking, each reading against the example.

    Never raises: untyped exceptions land in `escaped`, typed ones in
    `errors` (and as `backend_error` differences), wrong readings in
    `differences` (each detail prefixed with where it was seen).
    """
    res = ProbeResult()
    t0 = time.perf_counter()
    expected = example.expected
    markers = markers_for(example.family)
    one = _oneshot(subject, example.output, None, res)
    observed = [("oneshot", one)] + [
        (name, _stream(subject, chunks, name, None, res)[0]) for name, chunks in chunkings
    ]
    for name, obs in observed:
        if obs.error is not None:
            diffs = [Difference(DivergenceClass.BACKEND_ERROR, obs.error, "backend")]
        else:
            diffs = check_expected(obs, expected, markers=markers)
            if name != "oneshot":
                diffs += check_invariants(obs, markers=markers)
        for diff in diffs:
            diff.detail = f"[{name}] {diff.detail}"
        res.differences.extend(diffs)
    res.elapsed = time.perf_counter() - t0
    return res


# ---------------------------------------------------------------- tallies (the report section)


@dataclass
class Tally:
    """What one backend's parser for one family did with the drawn examples."""

    inputs: int = 0
    clean: int = 0
    escaped: int = 0
    errors: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    spec: str | None = None
    unsupported: str | None = None

    def add(self, example: Example, result: ProbeResult) -> None:
        self.inputs += 1
        self.clean += result.clean
        self.escaped += bool(result.escaped)
        self.errors += bool(result.errors)
        for cls in result.classes:
            self.classes[cls] += 1
            old = self.examples.get(cls)
            if old is None or len(example.output) < len(old["output"]):
                detail = next((d.detail for d in result.differences if d.cls.value == cls), "")
                self.examples[cls] = {
                    "output": example.output[:2000],
                    "expected": example.expected.normalized(),
                    "detail": detail[:500],
                }
        for text in result.escaped[:1]:
            self.examples.setdefault("escaped", {"output": example.output[:2000], "detail": text[:500]})

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "spec": self.spec,
            "inputs": self.inputs,
            "clean": self.clean,
            "escaped": self.escaped,
            "errors": self.errors,
            "classes": dict(self.classes.most_common()),
            "examples": self.examples,
        }
        if self.unsupported:
            out["unsupported"] = self.unsupported
        return out


def chunkings_for(d: Draw, backend: str, subject: Any, text: str) -> list[tuple[str, Sequence[Chunk | str]]]:
    """Drawn random chunks, plus one character per chunk (builtin) or the parser's own tokens (frameworks)."""
    out: list[tuple[str, Sequence[Chunk | str]]] = [("random", draw_chunks(d, text))]
    if backend == "builtin":
        out.append(("char", list(text)))
    else:
        parser = subject.pipeline or subject.tool
        with contextlib.suppress(Exception):  # the tokenizer refuses this text: random chunks still run
            out.append(("token", token_chunks(parser, text)))
    return out


def run_family(backend: str, family: str, examples: int, seed: int | str = 0) -> Tally:
    """`examples` drawn examples of `family` through `backend` (seeded, reproducible)."""
    tally = Tally()
    d = RandomDraw(f"{seed}:{family}")
    for _ in range(examples):
        ex = draw_example(d, family)
        try:
            subject = subject_for(backend, family, ex.tools)
        except Exception as exc:  # no parser here / cannot be built: the family is unsupported
            tally.unsupported = f"{type(exc).__name__}: {str(exc)[:300]}"
            return tally
        tally.spec = subject.target.tool_spec
        tally.add(ex, check(subject, ex, chunkings_for(d, backend, subject, ex.output)))
    return tally


def run_roundtrip(
    backends: Iterable[str],
    *,
    families: Sequence[str] | None = None,
    examples: int = 12,
    seed: int | str = 0,
    progress: Callable[[str, str], None] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """The report's ``roundtrip`` section: per backend, per family, the tally of `examples` examples.

    `jobs` > 1 runs the (backend, family) tallies in forked workers; each is
    seeded by its family, so the section is the same for any `jobs`.
    """
    wanted = None
    if families:
        wanted = set()
        for name in families:
            fam = family_table().get("tool", name)
            wanted.add(fam.name if fam else name)
    t0 = time.perf_counter()
    section: dict[str, Any] = {"examples": examples, "seed": seed, "backends": {}}
    pairs = []
    for backend in backends:
        section["backends"][backend] = {}
        for family in roundtrip_families(backend):
            if wanted is None or family in wanted:
                pairs.append((backend, family))

    def tally(pair: tuple[str, str]) -> dict[str, Any]:
        if progress is not None:
            progress(*pair)
        return run_family(pair[0], pair[1], examples, seed).as_dict()

    if jobs > 1:  # one parser per backend and vocabulary here: forked workers inherit imports and tokenizers
        firsts: dict[tuple[str, str | None], tuple[str, str]] = {}
        for backend, family in pairs:
            firsts.setdefault((backend, family_of(family)), (backend, family))
        for backend, family in firsts.values():
            if groups_units(backend):
                continue  # its parsers start servers (smg: a gRPC worker), which must not run before a fork
            with contextlib.suppress(Exception):
                subject_for(backend, family, [])
    for (backend, family), got in zip(pairs, map_forked(tally, pairs, jobs=jobs), strict=True):
        section["backends"][backend][family] = got
    section["elapsed_s"] = round(time.perf_counter() - t0, 3)
    return section


def summary_lines(section: dict[str, Any]) -> list[str]:
    """One line per backend: inputs, clean ones, divergence classes."""
    lines = []
    for backend, per in section.get("backends", {}).items():
        ran = {f: t for f, t in per.items() if not t.get("unsupported")}
        inputs = sum(t["inputs"] for t in ran.values())
        clean = sum(t["clean"] for t in ran.values())
        classes: Counter[str] = Counter()
        for t in ran.values():
            classes.update(t["classes"])
        shown = ", ".join(f"{c} {n}" for c, n in classes.most_common()) or "none"
        lines.append(
            f"{backend}: {counted(len(ran), 'family', 'families')}, {counted(inputs, 'example')}, {clean} read back "
            f"exactly; divergences: {shown}"
        )
    return lines


def render_markdown(section: dict[str, Any]) -> list[str]:
    """The report.md section: a families × backends table of clean/inputs and the classes seen."""
    backends = list(section.get("backends", {}))
    families = sorted({f for per in section["backends"].values() for f in per})
    out = [
        "## Round trip: calls → renderer → parser",
        "",
        f"{section['examples']} drawn examples per family (seed {section['seed']}): calls with nested, "
        "unicode and escaped arguments, several calls, text around them, rendered by the family's "
        "format and parsed one-shot and streamed. A cell: examples read back exactly / examples, "
        "then the divergence classes (examples showing each).",
        "",
        *summary_lines(section),
        "",
        "| family | " + " | ".join(backends) + " |",
        "|---|" + "---|" * len(backends),
    ]
    for family in families:
        cells = []
        for b in backends:
            t = section["backends"][b].get(family)
            if t is None:
                cells.append("–")
            elif t.get("unsupported"):
                cells.append("unsupported")
            else:
                classes = ", ".join(f"{c} {n}" for c, n in t["classes"].items())
                cells.append(f"{t['clean']}/{t['inputs']}" + (f": {classes}" if classes else ""))
        out.append(f"| tool:{family} | " + " | ".join(cells) + " |")
    return out

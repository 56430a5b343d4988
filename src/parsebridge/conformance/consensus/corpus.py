"""The consensus corpus: per family, the bundled fixtures plus outputs generated from the format's grammar.

Each generated output is a *variant* of a well-formed one, built from the
family's format (`parsebridge.formats`: markers and renderer), never typed by
hand: text before, after and between calls, a missing start or end marker,
doubled and stray markers, end-of-sequence tokens after the calls, typed
parameters, parameters and calls the tools do not declare, and truncation
before, inside and after every marker occurrence. Reasoning families get the same treatment
around their start and end markers (prompt-opened reasoning, a tool section
that closes reasoning, nested and stray markers).

Every transcript's id is ``<kind>:<family>/<variant>`` (fixtures keep their
own id after the slash), deterministic, so a reviewed list can name it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ...formats import ReasoningFormat, ToolFormat, UnknownFormatError, hermes, reasoning_format, tool_format
from ...formats.cases.catalogue import tools as catalogue_tools
from ...protocol import family_table
from ...protocol.families import Family, FamilyTable
from ..transcripts import Transcript, bundled_transcripts

_F = TypeVar("_F", ToolFormat, ReasoningFormat)

#: Frameworks whose agreement makes a consensus.
FRAMEWORKS: tuple[str, str] = ("vllm", "sglang")

#: The tools every generated tool case declares (`unknown-tool` calls one that is not among them).
TOOLS: list[dict[str, Any]] = catalogue_tools("get_weather", "search_web", "get_time", "set_reminder")

#: End-of-sequence texts a detokenizer may leave in the output (special tokens kept).
EOS_TOKENS: tuple[str, ...] = ("<|im_end|>", "<｜end▁of▁sentence｜>")

WEATHER: tuple[str, dict[str, Any]] = ("get_weather", {"location": "Paris", "unit": "celsius"})
TIME: tuple[str, dict[str, Any]] = ("get_time", {"timezone": "Asia/Tokyo"})
TYPED: tuple[str, dict[str, Any]] = ("search_web", {"query": "cats", "max_results": 3, "safe_search": True})
#: A declared tool with parameters its schema does not declare (values that JSON would type).
UNDECLARED_PARAMS: tuple[str, dict[str, Any]] = (
    "get_weather",
    {"location": "Paris", "hours": 12, "hourly": True},
)
UNKNOWN: tuple[str, dict[str, Any]] = ("no_such_tool", {"x": 1})
#: Null where the schema allows it, beside a string (``anyOf``) and an integer (a type list).
NULLS: tuple[str, dict[str, Any]] = ("set_reminder", {"text": "Call Anna", "note": None, "minutes": None})


def consensus_families(
    table: FamilyTable | None = None, kinds: Sequence[str] = ("tool", "reasoning")
) -> list[Family]:
    """Families with a builtin parser and a parser in each framework (in table order)."""
    table = table or family_table()
    out = []
    for fam in table:
        if fam.kind in kinds and all(fam.parser_for(b) for b in ("builtin", *FRAMEWORKS)):
            out.append(fam)
    return out


def _tx(fam: Family, variant: str, output: str, **kw: Any) -> Transcript:
    return Transcript(
        id=f"{fam.kind}:{fam.name}/{variant}",
        family=fam.name,
        kind=fam.kind,
        output=output,
        tags=["consensus", variant.split("@", 1)[0]],
        **kw,
    )


def _cuts(text: str, markers: Sequence[str]) -> list[int]:
    """Cut points before, inside and after every occurrence of every marker (sorted, unique)."""
    found: set[int] = set()
    for m in markers:
        if not m:
            continue
        at = text.find(m)
        while at >= 0:
            found.update((at, at + max(1, len(m) // 2), at + len(m)))
            at = text.find(m, at + 1)
    return sorted(p for p in found if 0 < p < len(text))


def _format(fam: Family, lookup: Callable[[str], _F]) -> _F | None:
    """The family's format, else the format of the builtin parser that reads it (ling3 → glm45)."""
    for name in (fam.name, fam.parser_for("builtin")):
        try:
            return lookup(name or "")
        except UnknownFormatError:
            continue
    return None


# ---------------------------------------------------------------- tool families


def _tool_markers(fmt: ToolFormat) -> tuple[str, ...]:
    grammar = fmt.grammar.markers if fmt.grammar is not None else ()
    return tuple(dict.fromkeys((*grammar, *fmt.markers)))


def _drop_first(text: str, marker: str) -> str:
    return text.replace(marker, "", 1)


def _drop_last(text: str, marker: str) -> str:
    at = text.rfind(marker)
    return text if at < 0 else text[:at] + text[at + len(marker) :]


def tool_variants(fam: Family) -> Iterator[Transcript]:
    """Generated tool outputs of one family (see the module docstring)."""
    fmt = _format(fam, tool_format)
    if fmt is None:
        return
    render = fmt.render
    one, two = render([WEATHER]), render([WEATHER, TIME])
    markers = _tool_markers(fmt)
    start, end = markers[0], (markers[1] if len(markers) > 1 else "")
    cases: dict[str, str] = {
        "one-call": one,
        "two-calls": two,
        "typed-parameters": render([TYPED]),
        "undeclared-parameters": render([UNDECLARED_PARAMS]),
        "null-values": render([NULLS]),
        "unknown-tool": render([UNKNOWN]),
        "text-before": "Let me check. " + one,
        "text-after": one + " Done.",
        "text-before-after": "Let me check.\n" + one + "\nDone.",
        "text-between": render([WEATHER]) + "\nAnd the time:\n" + render([TIME]),
        "text-only": "No tool is needed here.",
        "missing-start": _drop_first(one, start),
        "doubled-start": one.replace(start, start + start, 1),
        "stray-start-in-text": f"A literal {start} in prose.",
        "stray-end-before": f"{end} " + one if end else "",
        "stray-end-after": one + f"{end}" if end else "",
        "missing-end": _drop_last(one, end) if end else "",
    }
    for i, eos in enumerate(EOS_TOKENS):
        cases[f"eos-{i}"] = one + eos
    extra = {"tools": TOOLS, "reasoning_family": fmt.reasoning_family}
    for name, text in cases.items():
        if text:
            yield _tx(fam, name, text, **extra)
    base = "Let me check. " + two
    for cut in _cuts(base, markers):
        yield _tx(fam, f"truncated@{cut}", base[:cut], **extra)


# ---------------------------------------------------------------- reasoning families


def reasoning_variants(fam: Family) -> Iterator[Transcript]:
    """Generated reasoning outputs of one family."""
    fmt = _format(fam, reasoning_format)
    if fmt is None:
        return
    if not fmt.splits_reasoning or fmt.render is not None:
        # a reading that is not reasoning + content, or a rendered grammar (harmony): fixtures only
        return
    s, e = fmt.start, fmt.end
    r, c = "I should check the weather.", "It is sunny."
    cases: dict[str, tuple[str, bool]] = {
        "basic": (s + r + e + c, False),
        "newlines": (s + "\n" + r + "\n" + e + "\n\n" + c, False),
        "prompt-opened": (r + e + c, True),
        "prompt-opened-unclosed": (r, True),
        "no-reasoning": (c, False),
        "empty-reasoning": (s + e + c, False),
        "unterminated": (s + r, False),
        "end-only": (r + e + c, False),
        "text-before-start": ("Hi. " + s + r + e + c, False),
        "stray-end-after": (s + r + e + c + e + " more", False),
        "nested-start": (s + s + r + e + c, False),
        "start-in-content": (s + r + e + c + " " + s + " again", False),
    }
    for i, alt in enumerate(fmt.alt_starts):
        cases[f"alt-start-{i}"] = (alt + r + (fmt.alt_ends[i] if i < len(fmt.alt_ends) else e) + c, False)
    tool_section = hermes.render_call("get_weather", {"location": "Paris"})
    closers = fmt.closers or (hermes.START,)
    for i, closer in enumerate(closers):
        section = tool_section if closer == hermes.START else closer + " get_weather"
        cases[f"tool-section-{i}"] = (s + r + "\n\n" + section, False)
        cases[f"prompt-opened-tool-section-{i}"] = ("plan\n\n" + section, True)
    for eos_i, eos in enumerate(EOS_TOKENS):
        cases[f"eos-{eos_i}"] = (s + r + e + c + eos, False)
    for name, (text, started) in cases.items():
        yield _tx(fam, name, text, reasoning_started_in_prompt=started)
    base = s + r + e + c
    for cut in _cuts(base, (s, e)):
        yield _tx(fam, f"truncated@{cut}", base[:cut])


# ---------------------------------------------------------------- the corpus


def as_case(t: Transcript) -> Transcript:
    """A transcript under the id the reviewed list names it by (``kind:family/id``), without `expected`
    (a consensus case is judged against the frameworks, not against a fixture's reading)."""
    return t.model_copy(update={"id": f"{t.kind}:{t.family_name}/{t.id}", "expected": None})


def fixture_cases(fam: Family) -> Iterator[Transcript]:
    """The bundled fixtures of the family (its own, not those of families it only pairs with)."""
    for t in bundled_transcripts(kinds=[fam.kind]):
        if t.resolve_family() is fam or (t.family_name == fam.name):
            yield as_case(t)


def consensus_corpus(
    families: Sequence[str] | None = None, *, table: FamilyTable | None = None
) -> list[Transcript]:
    """Fixtures and generated variants of every consensus family (or of those named)."""
    table = table or family_table()
    wanted = None
    if families:
        wanted = {(f.kind, f.name) for n in families for k in ("tool", "reasoning") if (f := table.get(k, n))}  # type: ignore[arg-type]
    out: list[Transcript] = []
    for fam in consensus_families(table):
        if wanted is not None and (fam.kind, fam.name) not in wanted:
            continue
        out.extend(fixture_cases(fam))
        out.extend(tool_variants(fam) if fam.kind == "tool" else reasoning_variants(fam))
    return out

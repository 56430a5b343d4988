"""Divergence classes, the comparisons that find them, and the status of a result.

Three comparisons, each producing `Difference`s tagged with where they came
from (`source`):

* ``expected`` — an observation against the transcript's `expected`
  (content/reasoning after stripping surrounding whitespace, None ≡ "";
  calls in order by name; arguments as parsed JSON, or `invalid_arguments`
  text after stripping);
* ``stream`` — a streamed observation against the one-shot one, exactly
  (stream ≡ one-shot; a difference that vanishes once whitespace
  is stripped is `whitespace_only`);
* ``invariant`` — protocol invariants of one observation (one id and one name
  per call, `finish()` agreeing with the deltas, no marker text in content
  when there is nothing to compare against).

`status_of` turns them into the documented status: ``error`` (the backend
raised), ``diverge`` (a streaming invariant broke, or only documented
divergences remain), ``fail`` (wrong against expected), ``pass``. The
``unsupported`` status is decided before anything runs (see `runner`).
`compare_observations` is the building block `compare` uses between specs.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..formats import reasoning_families, reasoning_format, tool_families, tool_format
from ..protocol.families import FamilyTable
from .classes import DivergenceClass
from .leaks import leaked_markers
from .observation import Observation
from .transcripts import Expected, KnownDivergence, Transcript

Status = Literal["pass", "diverge", "fail", "unsupported", "error"]
STATUSES: tuple[Status, ...] = ("pass", "diverge", "fail", "unsupported", "error")
Source = Literal["expected", "stream", "invariant", "backend"]


DC = DivergenceClass


@dataclass
class Difference:
    """One named difference. `known`/`reason` are set when a fixture documents it."""

    cls: DivergenceClass
    detail: str
    source: Source = "expected"
    known: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.cls.value, "detail": self.detail, "source": self.source}
        if self.known:
            out["known"] = True
            out["reason"] = self.reason
        return out


# ---------------------------------------------------------------- markers


def _known_markers() -> dict[str, tuple[str, ...]]:
    """``kind:family`` → the markers of the family's format (`parsebridge.formats`), aliases included."""
    out: dict[str, tuple[str, ...]] = {}
    for family in tool_families():
        fmt = tool_format(family)
        for name in (family, *fmt.aliases):
            out[f"tool:{name}"] = fmt.markers
    for family in reasoning_families():
        rfmt = reasoning_format(family)
        for name in (family, *rfmt.aliases):
            out[f"reasoning:{name}"] = rfmt.markers
    return out


#: Marker strings of each family's format (``kind:family``), checked in addition to `parser.markers`.
#: Taken from `parsebridge.formats`, the one home of each format.
KNOWN_MARKERS: dict[str, tuple[str, ...]] = _known_markers()


def family_markers(kind: str, family: str | None) -> tuple[str, ...]:
    """The markers of `family`'s format (none for a family without a format module)."""
    return KNOWN_MARKERS.get(f"{kind}:{family}", ()) if family else ()


def markers_for(
    transcript: Transcript, declared: Sequence[str] = (), table: FamilyTable | None = None
) -> tuple[str, ...]:
    """The markers a reading of `transcript` is checked for: the parser's `declared` ones
    (`subject.parser_markers`) and those of the transcript's families' formats."""
    fam = transcript.resolve_family(table)
    rfam = transcript.resolve_reasoning_family(table)
    found = list(declared)
    if fam is not None:
        found.extend(family_markers(fam.kind, fam.name))
    if rfam is not None and rfam is not fam:
        found.extend(family_markers("reasoning", rfam.name))
    return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------- comparing texts


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def _snip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _missing_text(ref: str, got: str) -> str:
    sm = difflib.SequenceMatcher(None, ref, got, autojunk=False)
    return "".join(ref[i1:i2] for op, i1, i2, _, _ in sm.get_opcodes() if op in ("delete", "replace"))


def _extra_text(ref: str, got: str) -> str:
    sm = difflib.SequenceMatcher(None, ref, got, autojunk=False)
    return "".join(got[j1:j2] for op, _, _, j1, j2 in sm.get_opcodes() if op in ("insert", "replace"))


def compare_text(
    what: Literal["content", "reasoning"],
    ref: str | None,
    got: str | None,
    *,
    markers: Sequence[str] = (),
    exact: bool = True,
    source: Source = "stream",
) -> Difference | None:
    """How `got` differs from `ref` (None ≡ ""), or None when they agree.

    With `exact`, a difference that vanishes after stripping surrounding
    whitespace is `whitespace_only`; without, texts are compared stripped.
    """
    r, g = ref or "", got or ""
    if r == g:
        return None
    rs, gs = r.strip(), g.strip()
    if rs == gs:
        if not exact:
            return None
        return Difference(DC.WHITESPACE_ONLY, f"{what}: {_snip(r)} vs {_snip(g)}", source)
    if not exact:
        r, g = rs, gs
    leaked = [m for m in markers if g.count(m) > r.count(m)]
    if leaked:
        return Difference(
            DC.MARKER_LEAKED, f"{what} holds {', '.join(map(repr, leaked))}: {_snip(g)}", source
        )
    lost = DC.CONTENT_LOST if what == "content" else DC.REASONING_LOST
    differs = DC.CONTENT_DIFFERS if what == "content" else DC.REASONING_DIFFERS
    if not gs:
        return Difference(lost, f"{what} {_snip(r)} is missing entirely", source)
    if len(g) < len(r) and _subsequence(g, r):
        return Difference(lost, f"{what} lost {_snip(_missing_text(r, g))}: got {_snip(g)}", source)
    if len(g) > len(r) and _subsequence(r, g):
        extra = _extra_text(r, g)
        bare_extra, bare_ref = "".join(extra.split()), "".join(r.split())
        if what == "content" and bare_extra and _subsequence(bare_extra, bare_ref):
            return Difference(
                DC.CONTENT_DUPLICATED, f"content repeats {_snip(extra)}: got {_snip(g)}", source
            )
        return Difference(
            differs,
            f"{what} has extra {_snip(extra)} ({len(g)} chars, reference {len(r)}): got {_snip(g)}",
            source,
        )
    return Difference(differs, f"{what}: expected {_snip(r)}, got {_snip(g)}", source)


def _misplaced(ref: dict[str, Any], got: dict[str, Any], source: Source) -> Difference | None:
    r_reason, r_content = (ref.get("reasoning") or "").strip(), (ref.get("content") or "").strip()
    g_reason, g_content = (got.get("reasoning") or "").strip(), (got.get("content") or "").strip()
    if r_reason and g_reason != r_reason and r_reason in g_content:
        return Difference(DC.REASONING_MISPLACED, f"reasoning {_snip(r_reason)} landed in content", source)
    if r_content and g_content != r_content and r_content in g_reason and r_content not in g_content:
        return Difference(DC.REASONING_MISPLACED, f"content {_snip(r_content)} landed in reasoning", source)
    return None


# ---------------------------------------------------------------- comparing calls


def same_json(a: Any, b: Any) -> bool:
    """JSON equality that keeps `true` and `1` apart (Python's == does not).

    Iterative: arguments nested hundreds deep (adversarial output) must not
    hit the recursion limit.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            same = type(x) is type(y) and x == y
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            same = x == y or (x != x and y != y)  # NaN (a parser of one's own may return it) is itself
        elif isinstance(x, dict) and isinstance(y, dict):
            same = x.keys() == y.keys()
            if same:
                stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            same = len(x) == len(y)
            if same:
                stack.extend(zip(x, y, strict=True))
        else:
            same = type(x) is type(y) and x == y
        if not same:
            return False
    return True


def _args_repr(call: dict[str, Any]) -> str:
    if "invalid_arguments" in call:
        return f"invalid {_snip(str(call['invalid_arguments']))}"
    import json

    return _snip(json.dumps(call.get("arguments", {}), ensure_ascii=False, sort_keys=True), 80)


def _compare_call(i: int, ref: dict[str, Any], got: dict[str, Any], source: Source) -> list[Difference]:
    out: list[Difference] = []
    if ref.get("name") != got.get("name"):
        out.append(
            Difference(DC.NAME_DIFFERS, f"call {i}: name {ref.get('name')!r} vs {got.get('name')!r}", source)
        )
    r_bad, g_bad = "invalid_arguments" in ref, "invalid_arguments" in got
    if not r_bad and g_bad:
        out.append(Difference(DC.ARGUMENTS_INVALID, f"call {i}: arguments {_args_repr(got)}", source))
    elif r_bad and g_bad:
        if str(ref["invalid_arguments"]).strip() != str(got["invalid_arguments"]).strip():
            out.append(
                Difference(DC.ARGUMENTS_DIFFER, f"call {i}: {_args_repr(ref)} vs {_args_repr(got)}", source)
            )
    elif r_bad != g_bad or not same_json(ref.get("arguments", {}), got.get("arguments", {})):
        out.append(
            Difference(DC.ARGUMENTS_DIFFER, f"call {i}: {_args_repr(ref)} vs {_args_repr(got)}", source)
        )
    return out


def compare_calls(
    ref: Sequence[dict[str, Any]], got: Sequence[dict[str, Any]], *, source: Source = "stream"
) -> list[Difference]:
    """Differences between two call lists, aligned by name so one missing call is one difference."""
    if len(ref) == len(got):
        pairs = [(i, i) for i in range(len(ref))]
        missing: list[int] = []
        extra: list[int] = []
    else:
        pairs, missing, extra = [], [], []
        sm = difflib.SequenceMatcher(
            None, [c.get("name") for c in ref], [c.get("name") for c in got], autojunk=False
        )
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            if op == "equal":
                pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
            else:
                n = min(i2 - i1, j2 - j1) if op == "replace" else 0
                pairs.extend(zip(range(i1, i1 + n), range(j1, j1 + n), strict=True))
                missing.extend(range(i1 + n, i2))
                extra.extend(range(j1 + n, j2))
    out: list[Difference] = []
    for i, j in pairs:
        out.extend(_compare_call(i, ref[i], got[j], source))
    for i in missing:
        out.append(
            Difference(
                DC.CALL_MISSING, f"call {i} {ref[i].get('name')!r} {_args_repr(ref[i])} is missing", source
            )
        )
    for j in extra:
        out.append(
            Difference(DC.EXTRA_CALL, f"extra call {got[j].get('name')!r} {_args_repr(got[j])}", source)
        )
    return out


# ---------------------------------------------------------------- whole readings


def compare_readings(
    ref: dict[str, Any],
    got: dict[str, Any],
    *,
    markers: Sequence[str] = (),
    exact: bool = True,
    source: Source = "stream",
) -> list[Difference]:
    """Differences between two `{reasoning, content, tool_calls}` readings (`ref` is the reference)."""
    out: list[Difference] = []
    misplaced = _misplaced(ref, got, source)
    if misplaced is not None:
        out.append(misplaced)
    else:
        what: Literal["reasoning", "content"]
        for what in ("reasoning", "content"):
            d = compare_text(what, ref.get(what), got.get(what), markers=markers, exact=exact, source=source)
            if d is not None:
                out.append(d)
    out.extend(compare_calls(ref.get("tool_calls") or [], got.get("tool_calls") or [], source=source))
    return out


def compare_observations(a: Observation, b: Observation, *, markers: Sequence[str] = ()) -> list[Difference]:
    """How `b` differs from `a` (exactly; an error on either side is `backend_error`)."""
    for obs in (a, b):
        if obs.error is not None:
            return [Difference(DC.BACKEND_ERROR, obs.error, "backend")]
    return compare_readings(a.reading(), b.reading(), markers=markers, exact=True, source="stream")


def check_expected(obs: Observation, expected: Expected, *, markers: Sequence[str] = ()) -> list[Difference]:
    """How an observation is wrong against `expected` (texts stripped, None ≡ "")."""
    return compare_readings(
        expected.normalized(), obs.reading(), markers=markers, exact=False, source="expected"
    )


def check_invariants(
    obs: Observation,
    *,
    markers: Sequence[str] = (),
    absolute_markers: bool = False,
    cut_output: str | None = None,
) -> list[Difference]:
    """Protocol invariants of one observation on its own.

    `absolute_markers` flags any marker in content/reasoning: used when there
    is no reference to compare with (no `expected`, one-shot). `cut_output`: the
    output, when the token limit cut it; the cut call the policy keeps as text
    is not a leak (`leaks`).
    """
    out: list[Difference] = []
    if obs.anomalies:
        out.append(Difference(DC.ID_PROTOCOL, "; ".join(obs.anomalies), "invariant"))
    if obs.finish_mismatch:
        out.append(Difference(DC.FINISH_DIFFERS, obs.finish_mismatch, "invariant"))
    if absolute_markers:
        for what in ("content", "reasoning"):
            text = getattr(obs, what) or ""
            leaked = leaked_markers(text, markers, cut_output)
            if leaked:
                out.append(
                    Difference(DC.MARKER_LEAKED, f"{what} holds {', '.join(map(repr, leaked))}", "invariant")
                )
    return out


# ---------------------------------------------------------------- status


def _matches(k: KnownDivergence, backend: str, spec: str | None, chunking: str, cls: DivergenceClass) -> bool:
    if k.backend not in (backend, spec) and not (spec and fnmatch.fnmatchcase(spec, k.backend)):
        return False
    if k.chunking is not None and not fnmatch.fnmatchcase(chunking, k.chunking):
        return False
    return not k.classes or cls.value in k.classes


def mark_known(
    diffs: Iterable[Difference],
    known: Sequence[KnownDivergence],
    *,
    backend: str,
    spec: str | None,
    chunking: str,
) -> None:
    """Flag the differences a fixture documents (in place)."""
    for d in diffs:
        for k in known:
            if _matches(k, backend, spec, chunking, d.cls):
                d.known, d.reason = True, k.reason
                break


@dataclass
class Verdict:
    """The status of one result and the differences behind it."""

    status: Status
    differences: list[Difference] = field(default_factory=list)
    #: How the reading differs from the backend's expected reading, all of it (None: no expected, or
    #: the backend raised); `differences` report a class streaming shows too as streaming instead.
    against_expected: list[Difference] | None = None

    @property
    def known(self) -> bool:
        """True when documented divergences (and nothing else) made the status `diverge`."""
        return self.status == "diverge" and all(d.known for d in self.differences) and bool(self.differences)

    @property
    def classes(self) -> list[str]:
        return list(dict.fromkeys(d.cls.value for d in self.differences))

    @property
    def reason(self) -> str | None:
        reasons = [d.reason for d in self.differences if d.known and d.reason]
        return "; ".join(dict.fromkeys(reasons)) or None

    @property
    def detail(self) -> str:
        return "; ".join(
            f"{d.cls.value}: {d.detail}" + (" (known)" if d.known else "") for d in self.differences
        )


def status_of(diffs: Sequence[Difference]) -> Status:
    """error > diverge-from-one-shot > fail > other invariants > documented-only > pass."""
    unknown = [d for d in diffs if not d.known]
    sources = {d.source for d in unknown}
    if "backend" in sources:
        return "error"
    if "stream" in sources:
        return "diverge"
    if "expected" in sources:
        return "fail"
    if unknown or diffs:
        return "diverge"
    return "pass"


def evaluate(
    transcript: Transcript,
    obs: Observation,
    oneshot: Observation | None,
    *,
    backend: str,
    spec: str | None = None,
    markers: Sequence[str] = (),
    more: Sequence[Difference] = (),
) -> Verdict:
    """The verdict for one observation (the documented status semantics).

    `oneshot` is the same parser's one-shot observation, the reference of a
    streamed one (None for the one-shot row itself). A backend with its own
    documented reading (`expected_by_backend`) is checked against it; where
    that reading differs from the common `expected`, the difference is
    reported as a documented (known) divergence rather than hidden. `more`:
    the request's checks of the same observation (`request_checks`), judged with it.
    """
    if obs.error is not None:
        diffs = [Difference(DC.BACKEND_ERROR, obs.error, "backend")]
        mark_known(diffs, transcript.known_divergences, backend=backend, spec=spec, chunking=obs.chunking)
        return Verdict(status_of(diffs), diffs)
    diffs: list[Difference] = []  # type: ignore[no-redef]
    expected = transcript.expected_for(backend)
    against = None
    if expected is not None:
        against = check_expected(obs, expected, markers=markers)
        diffs.extend(against)
        common = transcript.expected
        if common is not None and expected is not common and not diffs:
            documented = check_expected(obs, common, markers=markers)
            for d in documented:
                d.known, d.reason = True, f"expected_by_backend documents {backend}'s reading"
            diffs.extend(documented)
    if obs.mode == "stream" and oneshot is not None and oneshot.error is None:
        streamed = compare_observations(oneshot, obs, markers=markers)
        # the same defect seen against expected and against one-shot is reported once, as streaming
        seen = {d.cls for d in streamed}
        diffs = [d for d in diffs if d.cls not in seen or d.known] + streamed
    diffs.extend(
        check_invariants(
            obs,
            markers=markers,
            absolute_markers=expected is None and obs.mode == "oneshot",
            cut_output=transcript.output if transcript.finish_reason == "length" else None,
        )
    )
    diffs.extend(more)
    mark_known(diffs, transcript.known_divergences, backend=backend, spec=spec, chunking=obs.chunking)
    return Verdict(status_of(diffs), diffs, against)

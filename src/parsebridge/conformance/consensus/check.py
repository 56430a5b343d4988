"""Where vLLM and SGLang agree, does builtin agree? One-shot readings of the consensus corpus.

For each transcript, each of builtin, vLLM and SGLang parses the output once
(the family table picks the parsers; the conformance `Runner` builds and
caches them). Two readings agree when they are equal the way a fixture's
`expected` is checked: texts stripped, ``None`` ≡ ``""``, calls in order
with the same name and arguments. vLLM and SGLang agreeing is a
*consensus*; builtin differing from a consensus is a *disagreement*.

Every disagreement must be named in the reviewed data file
(``consensus.yaml`` beside this module), pinned to the classes builtin differs
in there: an `exception` is a case where the servers contradict themselves
(their one-shot reading differs from what their own stream already showed a
client; a verifier in `verify` re-checks it on both frameworks) and builtin
reads what the streams showed; a `divergence` is a case where both servers
agree on a reading builtin's own rules call wrong (a call that is not whole
returned as a call), re-checked the same way; a `baseline` group is a disagreement
still to be fixed. `check` reports disagreements named nowhere or with other classes
than pinned, and listed cases that no longer disagree (stale), so the list
only ever shrinks by review.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from ...adapters import get_backend
from ..checks import compare_readings
from ..observation import Observation
from ..runner import Result, Runner, target_for
from ..transcripts import Transcript
from .corpus import FRAMEWORKS

BACKENDS: tuple[str, ...] = ("builtin", *FRAMEWORKS)


@dataclass
class Outcome:
    """The three one-shot readings of one transcript and what they say."""

    id: str
    family: str  # ``kind:name``
    variant: str
    readings: dict[str, dict[str, Any] | None]  # backend -> reading (None: error or unsupported)
    errors: dict[str, str] = field(default_factory=dict)
    consensus: bool = False
    agrees: bool = True
    classes: tuple[str, ...] = ()  # how builtin differs from the consensus

    @property
    def disagrees(self) -> bool:
        return self.consensus and not self.agrees

    @property
    def group(self) -> str:
        """``variant: classes`` — what a baseline groups disagreements by."""
        return f"{self.variant}: {', '.join(self.classes)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "variant": self.variant,
            "consensus": self.consensus,
            "agrees": self.agrees,
            "classes": list(self.classes),
            "readings": self.readings,
            "errors": self.errors,
        }


def variant_of(t: Transcript) -> str:
    """The generated variant (``truncated`` for every cut point), or ``fixture``."""
    tail = t.id.split("/", 1)[-1]
    if "consensus" not in t.tags:
        return "fixture"
    return tail.split("@", 1)[0]


def _reading(obs: Observation | None) -> dict[str, Any] | None:
    if obs is None or obs.error is not None:
        return None
    return obs.reading()


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The divergence classes between two readings ([] when they agree)."""
    return [d.cls.value for d in compare_readings(a, b, exact=False, source="expected")]


def judge(t: Transcript, readings: dict[str, dict[str, Any] | None], errors: dict[str, str]) -> Outcome:
    fam = t.resolve_family()
    out = Outcome(t.id, f"{t.kind}:{fam.name if fam else t.family}", variant_of(t), readings, errors)
    v, s, b = (readings.get(k) for k in ("vllm", "sglang", "builtin"))
    if v is None or s is None or differences(v, s):
        return out
    out.consensus = True
    if b is None:
        out.agrees, out.classes = False, ("backend_error",)
        return out
    diff = differences(v, b)
    out.agrees, out.classes = not diff, tuple(dict.fromkeys(diff))
    return out


def frameworks_missing() -> str | None:
    """Why the check cannot run here (a framework it needs is not importable), or None."""

    for name in FRAMEWORKS:
        reason = get_backend(name).unavailable_reason()
        if reason is not None:
            return f"{name}: {reason}"
    return None


#: A one-shot reading a run already holds: (case id, backend, spec, reasoning spec) -> its result.
Known = Mapping[tuple[str, str, str, str | None], Result]


def run_consensus(
    transcripts: Iterable[Transcript], runner: Runner | None = None, known: Known | None = None
) -> list[Outcome]:
    """Each transcript one-shot through builtin (``conventions="servers"``), vLLM and SGLang; the verdicts.

    `known` holds readings a run already made (see `column.known_readings`): a backend whose
    target has one there is not run again.
    """
    runner = runner or Runner(["oneshot"], conventions="servers")
    oneshot = runner.chunkings[:1]
    known = known or {}
    out = []
    for t in transcripts:
        readings: dict[str, dict[str, Any] | None] = {}
        errors: dict[str, str] = {}
        for backend in BACKENDS:
            target = target_for(t, backend, runner.table)
            row = known.get((t.id, backend, target.spec, target.reasoning_spec))
            if row is None:
                row = runner.run_transcript(target, t, oneshot)[0]
            readings[backend] = _reading(row.observation)
            if readings[backend] is None:
                errors[backend] = row.detail or row.status
        out.append(judge(t, readings, errors))
    return out


# ---------------------------------------------------------------- the reviewed list


@dataclass(frozen=True)
class Entry:
    """A named disagreement: the cases it explains, each pinned to how builtin differs there.

    `pins` maps each case id to the difference classes (`differences`) builtin shows there; the
    entry explains a case only while builtin differs there in exactly those classes, so a new
    regression on a listed case is not hidden. An exception names the `verify`-er (`verify`
    module) that re-checks, on both frameworks, the server behaviour its reason states.
    """

    reason: str
    pins: tuple[tuple[str, tuple[str, ...]], ...]
    kind: str  # "exception" | "divergence" | "baseline"
    group: str = ""
    verify: str = ""

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.pins)

    def classes_of(self, case_id: str) -> tuple[str, ...] | None:
        return next((cls for c, cls in self.pins if c == case_id), None)

    def matches(self, case_id: str) -> bool:
        return self.classes_of(case_id) is not None


@dataclass(frozen=True)
class Reviewed:
    versions: dict[str, str]
    exceptions: tuple[Entry, ...]
    baseline: tuple[Entry, ...]
    divergences: tuple[Entry, ...] = ()

    @property
    def entries(self) -> tuple[Entry, ...]:
        return self.exceptions + self.divergences + self.baseline

    def entry_for(self, case_id: str) -> Entry | None:
        return next((e for e in self.entries if e.matches(case_id)), None)

    def case_count(self, kind: str | None = None) -> int:
        """How many cases the list names (of one kind: "exception", "divergence" or "baseline")."""
        return sum(len(e.pins) for e in self.entries if kind is None or e.kind == kind)


def _pins(cases: Any, reason: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(cases, Mapping) or not cases:
        raise ValueError(f"consensus.yaml: {reason[:60]!r}: cases must map each case id to its classes")
    return tuple((str(c), tuple(sorted(str(x) for x in cls or ()))) for c, cls in cases.items())


def _entries(rows: Sequence[dict[str, Any]] | None, kind: str) -> tuple[Entry, ...]:
    return tuple(
        Entry(
            str(r["reason"]),
            _pins(r.get("cases"), str(r["reason"])),
            kind,
            str(r.get("group", "")),
            str(r.get("verify", "")),
        )
        for r in rows or ()
    )


def load_reviewed(text: str | None = None) -> Reviewed:
    """The reviewed list (``consensus.yaml`` beside this module unless `text` is given)."""
    import yaml  # type: ignore[import-untyped,unused-ignore]

    if text is None:
        text = _shipped()
    data = yaml.safe_load(text) or {}
    return Reviewed(
        {k: str(v) for k, v in (data.get("versions") or {}).items()},
        _entries(data.get("exceptions"), "exception"),
        _entries(data.get("baseline"), "baseline"),
        _entries(data.get("divergences"), "divergence"),
    )


@cache
def _shipped() -> str:
    return resources.files(__package__).joinpath("consensus.yaml").read_text(encoding="utf-8")


@dataclass
class Verdict:
    """What the reviewed list says about a run."""

    outcomes: list[Outcome]
    unexplained: list[Outcome]  # disagreements no entry names
    stale: list[str]  # case ids an entry names that no longer disagree
    by_entry: dict[str, list[str]]  # entry reason -> disagreeing case ids it explains
    #: listed cases where builtin now differs in other classes than the entry pins ("id: pinned -> now")
    changed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.stale and not self.changed


def check(outcomes: list[Outcome], reviewed: Reviewed) -> Verdict:
    """Disagreements the list does not name (or names with other classes), and named ids that agree now."""
    unexplained: list[Outcome] = []
    changed: list[str] = []
    by_entry: dict[str, list[str]] = {}
    disagreeing = {o.id for o in outcomes if o.disagrees}
    ran = {o.id for o in outcomes}
    for o in outcomes:
        if not o.disagrees:
            continue
        entry = reviewed.entry_for(o.id)
        if entry is None:
            unexplained.append(o)
            continue
        pinned, now = entry.classes_of(o.id), tuple(sorted(o.classes))
        if pinned != now:
            changed.append(f"{o.id}: pinned {list(pinned or ())} -> now {list(now)}")
            unexplained.append(o)
        else:
            by_entry.setdefault(entry.reason, []).append(o.id)
    stale = [c for e in reviewed.entries for c in e.cases if c in ran and c not in disagreeing]
    return Verdict(outcomes, unexplained, stale, by_entry, changed)


def summary(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Per family: cases, consensus cases, builtin disagreements."""
    out: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = out.setdefault(o.family, {"cases": 0, "consensus": 0, "disagree": 0})
        row["cases"] += 1
        row["consensus"] += o.consensus
        row["disagree"] += o.disagrees
    return out

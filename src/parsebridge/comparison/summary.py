"""The summary of a run: each `TranscriptComparison` folded into a `CompareSummary`.

`SummaryBuilder` keeps counts, not comparisons (beyond a bounded few to show): its memory
is bounded by specs² + top-N, never by the log. Every executor feeds the same builder,
so the summary is the same whichever ran the comparisons (only their order may differ).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from .._version import __version__
from ..adapters import get_backend
from .models import CompareSummary, PairAgreement, Ranked, Reading, SpecStats, TranscriptComparison


def backend_group(label: str) -> str:
    """``vllm:hermes`` → ``vllm``; ``builtin:qwen3 + vllm:hermes`` → ``builtin+vllm``."""
    parts = [p.strip().split(":", 1)[0] for p in label.split(" + ") if p.strip()]
    return "+".join(dict.fromkeys(parts)) or label


def _spec_mode(ref: str) -> tuple[str, str]:
    spec, _, mode = ref.rpartition("/")
    return spec, mode


def _differences(
    rec: TranscriptComparison,
) -> tuple[dict[str, set[str]], set[str], dict[tuple[str, str], tuple[set[str], set[str]]]]:
    """The classes within each spec (its streams vs its one-shot, and what a reading of it alone
    breaks: an invariant, an error), the specs whose stream reads otherwise than their one-shot
    (a difference between two of its modes), and per pair of specs the modes and classes at which
    they differ."""
    within: dict[str, set[str]] = {}
    apart: set[str] = set()
    cross: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for d in rec.differences:
        sa, ma = _spec_mode(d.a)
        sb, mb = _spec_mode(d.b)
        if sa == sb:
            within.setdefault(sa, set()).add(d.class_)
            if ma != mb:
                apart.add(sa)
        else:
            modes, classes = cross.setdefault((sa, sb), (set(), set()))
            modes.add(ma)
            classes.add(d.class_)
    return within, apart, cross


def _stream_is_oneshot(spec: str, apart: set[str], readings: Mapping[str, Reading]) -> bool:
    """Whether every stream of `spec` read what its own one-shot read: no difference between two
    of its modes, and none errored where the one-shot did not (or the reverse). A difference of
    one reading alone (an invariant such as `unknown_tool`, found in the one-shot and the
    streams alike) is no difference between them; how the one-shot compares with other specs is
    the pair tables' business."""
    if spec in apart:
        return False
    one = readings.get("oneshot")
    if one is None:
        return True
    return all(r.status == one.status for mode, r in readings.items() if mode != "oneshot")


@dataclass
class _Pair:
    transcripts: int = 0
    agree: int = 0
    oneshot_agree: int = 0
    stream_agree: int = 0
    classes: dict[str, int] = field(default_factory=dict)

    def add(self, modes: set[str], classes: set[str]) -> None:
        self.transcripts += 1
        self.agree += not modes
        self.oneshot_agree += "oneshot" not in modes
        self.stream_agree += not (modes - {"oneshot"})
        for c in classes:
            self.classes[c] = self.classes.get(c, 0) + 1

    def out(self, a: str, b: str) -> PairAgreement:
        rate = self.agree / self.transcripts if self.transcripts else 0.0
        return PairAgreement(
            a=a,
            b=b,
            transcripts=self.transcripts,
            agree=self.agree,
            oneshot_agree=self.oneshot_agree,
            stream_agree=self.stream_agree,
            rate=round(rate, 6),
            classes=dict(sorted(self.classes.items())),
        )


class _Earlier:
    """Orders transcript ids backwards, so among equal scores the top-N keeps the smallest ids.

    Ties are broken by id, not by arrival, so the summary is the same whatever order the
    results came back in (``--unordered``, a process pool, Ray workers).
    """

    __slots__ = ("tid",)

    def __init__(self, tid: str) -> None:
        self.tid = tid

    def __lt__(self, other: _Earlier) -> bool:
        return self.tid > other.tid

    def __gt__(self, other: _Earlier) -> bool:
        return self.tid < other.tid

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Earlier) and self.tid == other.tid

    def __hash__(self) -> int:
        return hash(self.tid)


class SummaryBuilder:
    """Folds comparisons into a `CompareSummary`; memory bounded by specs² + top-N.

    Keeps the first `keep` comparisons (for showing small runs in full) and the
    `top` most different ones (for showing large runs): both bounded.
    """

    def __init__(
        self, modes: dict[str, str], *, top: int = 10, keep: int = 0, conventions: str = "servers"
    ) -> None:
        self.modes = modes
        self.conventions = conventions
        self.top = top
        self.keep = keep
        self.transcripts = 0
        self.agreeing = 0
        self.differing = 0
        self.not_run = 0
        self.wrong = 0
        self.skipped = 0
        self.specs: dict[str, SpecStats] = {}
        self.pairs: dict[tuple[str, str], _Pair] = {}
        self.backend_pairs: dict[tuple[str, str], _Pair] = {}
        self.classes: dict[str, int] = {}
        self.unsupported: dict[str, int] = {}
        self._heap: list[tuple[int, _Earlier, int, str, tuple[str, ...], TranscriptComparison]] = []
        self.first: list[TranscriptComparison] = []
        self._order: dict[str, int] = {}

    def _spec(self, s: str) -> SpecStats:
        st = self.specs.get(s)
        if st is None:
            st = self.specs[s] = SpecStats(spec=s)
            self._order[s] = len(self._order)
        return st

    def add(self, rec: TranscriptComparison) -> None:
        """Fold one comparison in."""
        self.transcripts += 1
        specs = rec.specs or list(rec.results)
        if not specs:
            self.not_run += 1
        elif rec.differences:
            self.differing += 1
        else:
            self.agreeing += 1
        self.wrong += bool(rec.against_expected)
        for u in rec.unsupported:
            self.unsupported[u] = self.unsupported.get(u, 0) + 1
        within, apart, cross = _differences(rec)
        wrong: dict[str, set[str]] = {}
        for d in rec.against_expected:
            wrong.setdefault(_spec_mode(d.a)[0], set()).add(d.class_)
        correct = {spec: all(modes.values()) for spec, modes in (rec.expected or {}).items()}
        for s in specs:
            st = self._spec(s)
            st.transcripts += 1
            st.stream_consistent += _stream_is_oneshot(s, apart, rec.results.get(s, {}))
            st.errors += any(r.status == "error" for r in rec.results.get(s, {}).values())
            if s in correct:
                st.scored += 1
                st.correct += bool(correct[s])
            for c in within.get(s, set()) | wrong.get(s, set()):
                st.classes[c] = st.classes.get(c, 0) + 1
        for a, b in combinations(specs, 2):
            modes, classes = cross.get((a, b)) or cross.get((b, a)) or (set(), set())
            self.pairs.setdefault((a, b), _Pair()).add(modes, classes)
            ga, gb = backend_group(a), backend_group(b)
            if ga != gb:
                key = (ga, gb) if (gb, ga) not in self.backend_pairs else (gb, ga)
                self.backend_pairs.setdefault(key, _Pair()).add(modes, classes)
        present = set(rec.classes())
        for c in present:
            self.classes[c] = self.classes.get(c, 0) + 1
        self._keep(rec, tuple(sorted(present)))

    def _keep(self, rec: TranscriptComparison, classes: tuple[str, ...]) -> None:
        """The first `keep` comparisons, and the `top` most different (ties: smallest id first)."""
        if len(self.first) < self.keep:
            self.first.append(rec)
        if self.top and rec.score:
            item = (rec.score, _Earlier(rec.transcript), -self.transcripts, rec.transcript, classes, rec)
            if len(self._heap) < self.top:
                heapq.heappush(self._heap, item)
            elif item[:3] > self._heap[0][:3]:
                heapq.heapreplace(self._heap, item)

    def most_different(self) -> list[TranscriptComparison]:
        """The kept comparisons of the most different transcripts, most different first."""
        return [item[5] for item in sorted(self._heap, key=lambda item: item[:3], reverse=True)]

    def summary(self, *, elapsed: float = 0.0, complete: bool = True) -> CompareSummary:
        return CompareSummary(
            parsebridge=__version__,
            backends=backend_versions(sorted({backend_group(s) for s in self.specs})),
            details=_spec_details(self.specs),
            modes=dict(self.modes),
            conventions=self.conventions,
            transcripts=self.transcripts,
            agreeing=self.agreeing,
            differing=self.differing,
            not_run=self.not_run,
            wrong=self.wrong,
            pairs=[p.out(a, b) for (a, b), p in self.pairs.items()],
            backend_pairs=[p.out(a, b) for (a, b), p in self.backend_pairs.items()],
            specs=sorted(self.specs.values(), key=lambda s: self._order[s.spec]),
            classes=dict(sorted(self.classes.items(), key=lambda kv: (-kv[1], kv[0]))),
            most_different=[
                Ranked(transcript=t, score=score, classes=list(cls))
                for score, _, _, t, cls, _ in sorted(self._heap, key=lambda item: item[:3], reverse=True)
            ],
            unsupported=dict(sorted(self.unsupported.items())),
            skipped=self.skipped,
            elapsed_s=round(elapsed, 3),
            complete=complete,
        )


def backend_versions(groups: Iterable[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for g in groups:
        for b in g.split("+"):
            if b in out:
                continue
            try:
                out[b] = get_backend(b).version()
            except Exception:
                out[b] = None
    return out


def _spec_details(labels: Iterable[str]) -> dict[str, str]:
    """Spec → what it runs, for the specs whose name does not say it (`Backend.describe`)."""
    out: dict[str, str] = {}
    for label in labels:
        for spec in (p.strip() for p in label.split(" + ")):
            backend, _, name = spec.partition(":")
            if spec in out or not name:
                continue
            try:
                detail = get_backend(backend).describe(name)
            except Exception:  # a backend that cannot say: the label stands alone
                detail = None
            if detail:
                out[spec] = detail
    return out

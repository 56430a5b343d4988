"""The summary of a run: small per-transcript records folded into a `CompareSummary`.

Workers send a `Compact` beside each JSON line; the driver folds them with
`SummaryBuilder`, whose memory is bounded by specs² + top-N, never by the
log. Every executor feeds the same builder, so the summary is the same
whichever ran the comparisons (only the order of lines may differ).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, NamedTuple

from .models import (
    CompareSummary,
    PairAgreement,
    Ranked,
    SpecStats,
)

# ---------------------------------------------------------------- compact records (what the summary needs)


class Compact(NamedTuple):
    """The part of a comparison the summary needs; small, so workers can send it cheaply."""

    transcript: str
    specs: tuple[str, ...]
    differences: tuple[tuple[str, str, str], ...]  # (class, a, b)
    against: tuple[tuple[str, str], ...]  # (class, a)
    expected: tuple[tuple[str, bool], ...]  # (spec, every mode correct)
    errors: tuple[str, ...]  # specs with an errored reading
    unsupported: tuple[str, ...]

    @property
    def score(self) -> int:
        return len(self.differences) + len(self.against)


def compact(d: dict[str, Any]) -> Compact:
    """The summary's view of one `TranscriptComparison` dict (a fresh one, or one read back)."""
    results = d.get("results") or {}
    errors = tuple(
        spec
        for spec, modes in results.items()
        if any((r or {}).get("status") == "error" for r in modes.values())
    )
    expected = d.get("expected") or {}
    return Compact(
        str(d.get("transcript", "")),
        tuple(d.get("specs") or results),
        tuple((x["class"], x["a"], x["b"]) for x in d.get("differences") or ()),
        tuple((x["class"], x["a"]) for x in d.get("against_expected") or ()),
        tuple((spec, all(modes.values())) for spec, modes in expected.items()),
        errors,
        tuple(d.get("unsupported") or ()),
    )


def backend_group(label: str) -> str:
    """``vllm:hermes`` → ``vllm``; ``builtin:qwen3 + vllm:hermes`` → ``builtin+vllm``."""
    parts = [p.strip().split(":", 1)[0] for p in label.split(" + ") if p.strip()]
    return "+".join(dict.fromkeys(parts)) or label


def _spec_mode(ref: str) -> tuple[str, str]:
    spec, _, mode = ref.rpartition("/")
    return spec, mode


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
    """Aggregates compact records into a `CompareSummary`; memory bounded by specs² + top-N.

    Keeps the first `keep` lines (for showing small runs in full) and the
    `top` most different lines (for showing large runs): both bounded.
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
        self._heap: list[tuple[int, _Earlier, str, tuple[str, ...], str]] = []
        self.first: list[str] = []
        self._order: dict[str, int] = {}

    def _spec(self, s: str) -> SpecStats:
        st = self.specs.get(s)
        if st is None:
            st = self.specs[s] = SpecStats(spec=s)
            self._order[s] = len(self._order)
        return st

    def add(self, rec: Compact, line: str = "") -> None:
        self.transcripts += 1
        if not rec.specs:
            self.not_run += 1
        elif rec.differences:
            self.differing += 1
        else:
            self.agreeing += 1
        self.wrong += bool(rec.against)
        for u in rec.unsupported:
            self.unsupported[u] = self.unsupported.get(u, 0) + 1
        cross: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
        within: dict[str, set[str]] = {}
        for cls, a, b in rec.differences:
            sa, ma = _spec_mode(a)
            sb, _ = _spec_mode(b)
            if sa == sb:
                within.setdefault(sa, set()).add(cls)
            else:
                modes, classes = cross.setdefault((sa, sb), (set(), set()))
                modes.add(ma)
                classes.add(cls)
        wrong: dict[str, set[str]] = {}
        for cls, a in rec.against:
            wrong.setdefault(_spec_mode(a)[0], set()).add(cls)
        correct = dict(rec.expected)
        for s in rec.specs:
            st = self._spec(s)
            st.transcripts += 1
            st.stream_consistent += s not in within
            st.errors += s in rec.errors
            if s in correct:
                st.scored += 1
                st.correct += bool(correct[s])
            for c in within.get(s, set()) | wrong.get(s, set()):
                st.classes[c] = st.classes.get(c, 0) + 1
        for a, b in combinations(rec.specs, 2):
            modes, classes = cross.get((a, b)) or cross.get((b, a)) or (set(), set())
            self.pairs.setdefault((a, b), _Pair()).add(modes, classes)
            ga, gb = backend_group(a), backend_group(b)
            if ga != gb:
                key = (ga, gb) if (gb, ga) not in self.backend_pairs else (gb, ga)
                self.backend_pairs.setdefault(key, _Pair()).add(modes, classes)
        present = {c for c, _, _ in rec.differences} | {c for c, _ in rec.against}
        for c in present:
            self.classes[c] = self.classes.get(c, 0) + 1
        if line and len(self.first) < self.keep:
            self.first.append(line)
        if self.top and rec.score:
            item = (rec.score, _Earlier(rec.transcript), rec.transcript, tuple(sorted(present)), line)
            if len(self._heap) < self.top:
                heapq.heappush(self._heap, item)
            elif item > self._heap[0]:
                heapq.heapreplace(self._heap, item)

    def most_different_lines(self) -> list[str]:
        """The kept lines of the most different transcripts, most different first."""
        return [item[4] for item in sorted(self._heap, reverse=True) if item[4]]

    def summary(self, *, elapsed: float = 0.0, complete: bool = True) -> CompareSummary:
        from .._version import __version__

        return CompareSummary(
            parsebridge=__version__,
            backends=_backend_versions(sorted({backend_group(s) for s in self.specs})),
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
                for score, _, t, cls, _ in sorted(self._heap, reverse=True)
            ],
            unsupported=dict(sorted(self.unsupported.items())),
            skipped=self.skipped,
            elapsed_s=round(elapsed, 3),
            complete=complete,
        )


def _backend_versions(groups: Iterable[str]) -> dict[str, str | None]:
    from ..adapters import get_backend

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

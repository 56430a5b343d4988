"""Backends side by side on the same transcripts: from one pasted output to a production log.

`compare` answers "if I switch this model from one backend's parser to
another, does what my clients see change?". For each transcript every spec
(a reasoning and/or tool parser, possibly from different backends) reads the
output one-shot and streamed at several chunkings; readings are compared
with the conformance suite's own classifier (`checks.compare_observations`),
within a spec (one-shot vs each stream: streaming bugs) and across specs at
each mode (what a client of either backend gets). Transcripts that carry
`expected` are also scored against it.

Nothing here runs a parser by itself: the conformance `Runner` builds and
caches parsers and produces the observations, exactly as the suite does, so
`compare` and `parsebridge conformance` can never disagree about what a
backend did.

Scale (a production log of 10⁵–10⁶ responses):

* input is consumed lazily and at most ``jobs × INFLIGHT`` batches are in
  flight, so memory does not grow with the log;
* workers are processes (parsing is CPU-bound Python), each with its own
  `Runner` whose parser cache is bounded (`_BoundedRunner`);
* workers return finished JSON lines plus a small `Compact` record; the
  parent only writes and aggregates, and keeps a bounded top-N of the most
  different transcripts for display.

The Python API (`compare`, `iter_compare`) returns the same structures as
``parsebridge compare --format json`` (see `parsebridge.compare.models`).
"""

from __future__ import annotations

import heapq
import json
import multiprocessing
import os
import signal
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from itertools import combinations, islice
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from ..conformance.checks import check_expected, compare_observations
from ..conformance.chunking import Chunking, parse_chunkings
from ..conformance.observation import Observation
from ..conformance.runner import Result, Runner, Subject, Target, target_for
from ..conformance.transcripts import Transcript, iter_transcripts, transcript_from
from ..protocol import InvalidSpecError, ParserSpec, family_table
from .defaults import DEFAULT_COMPARE_CHUNKINGS
from .models import (
    CompareSummary,
    PairAgreement,
    Ranked,
    SpecStats,
    TranscriptComparison,
)

#: Batches in flight per worker: enough to keep workers busy, few enough to keep memory flat.
INFLIGHT = 4
#: Transcripts per task sent to a worker (amortises inter-process overhead).
BATCH = 16
#: Parser objects each worker keeps (keyed by specs and tools list); logs may carry many tools lists.
SUBJECT_CACHE = 128

SpecLike = str | Target


# ---------------------------------------------------------------- what to compare


def _canon(spec: str) -> str:
    return str(ParserSpec.parse(spec))


def _target(tool: str | None, reasoning: str | None) -> Target:
    return Target.explicit(
        tool=_canon(tool) if tool else None, reasoning=_canon(reasoning) if reasoning else None
    )


def _split_label(text: str) -> tuple[str | None, str | None]:
    """``"R + T"`` (or ``R+T``) → (reasoning, tool); a single spec is a tool spec."""
    if "+" in text:
        r, _, t = text.partition("+")
        return (r.strip() or None), (t.strip() or None)
    return None, text.strip()


def targets_from(
    specs: Sequence[SpecLike] | None = None, reasoning_parsers: Sequence[str] | None = None
) -> list[Target]:
    """Explicit targets from tool specs and reasoning specs (the CLI's repeated flags).

    Pairing: equal counts are zipped (the i-th reasoning parser with the i-th
    tool parser); one of either kind is combined with every one of the
    other; only one kind gives single-parser targets. A spec may also be a
    whole pipeline, ``"builtin:qwen3 + vllm:hermes"`` (reasoning + tool), or
    a `Target`. Duplicates are dropped.
    """
    tools: list[Target | str] = []
    for s in specs or ():
        if isinstance(s, Target):
            tools.append(s)
        else:
            reasoning, tool = _split_label(s)
            tools.append(_target(tool, reasoning) if reasoning else (tool or ""))
    reasons = [_canon(r) for r in reasoning_parsers or ()]
    plain = [t for t in tools if isinstance(t, str)]
    fixed = [t for t in tools if isinstance(t, Target)]
    out: list[Target] = list(fixed)
    if plain and reasons:
        if len(plain) == len(reasons):
            out += [_target(t, r) for t, r in zip(plain, reasons, strict=True)]
        elif len(reasons) == 1:
            out += [_target(t, reasons[0]) for t in plain]
        elif len(plain) == 1:
            out += [_target(plain[0], r) for r in reasons]
        else:
            raise InvalidSpecError(
                f"{len(plain)} tool parsers and {len(reasons)} reasoning parsers: give equal numbers "
                "(paired in order), or one of either kind (combined with each of the other)"
            )
    else:
        out += [_target(t, None) for t in plain]
        out += [_target(None, r) for r in reasons]
    seen: dict[str, Target] = {}
    for t in out:
        seen.setdefault(t.label, t)
    return list(seen.values())


def available_backends() -> list[str]:
    """Backends of the family table that can run here (frameworks installed), in table order."""
    from ..adapters import get_backend

    out = []
    for name in family_table().backends():
        try:
            if get_backend(name).is_available():
                out.append(name)
        except Exception:  # a third-party backend whose module is broken: not available
            continue
    return out


def resolve_families(families: Sequence[str]) -> tuple[str | None, str | None]:
    """``--family`` names (comma/``+`` separated) → (tool family, reasoning family), canonical names."""
    table = family_table()
    tool_fam = reasoning_fam = None
    for item in families:
        for name in (n.strip() for n in item.replace("+", ",").split(",")):
            if not name:
                continue
            t, r = table.get("tool", name), table.get("reasoning", name)
            if t is None and r is None:
                known = ", ".join(sorted({f.name for f in table}))
                raise InvalidSpecError(f"unknown family {name!r}; families: {known}")
            tool_fam = t.name if t is not None else tool_fam
            reasoning_fam = (
                r.name if r is not None and (t is None or reasoning_fam is None) else reasoning_fam
            )
    return tool_fam, reasoning_fam


def family_targets(families: Sequence[str], backends: Sequence[str]) -> tuple[list[Target], dict[str, str]]:
    """Each backend's parsers for the named families (a tool family and/or a reasoning family).

    Returns the runnable targets and, per backend that lacks a parser, why.
    """
    table = family_table()
    tool_fam, reasoning_fam = resolve_families(families)
    probe = Transcript(
        id="family",
        output="",
        family=tool_fam or reasoning_fam,
        kind="tool" if tool_fam else "reasoning",
        reasoning_family=reasoning_fam if tool_fam else None,
    )
    targets, unsupported = [], {}
    for b in backends:
        target = target_for(probe, b, table)
        if target.unsupported:
            unsupported[b] = target.unsupported
        else:
            targets.append(target)
    return targets, unsupported


def mode_names(chunkings: Sequence[Chunking]) -> dict[str, str]:
    """MODE → chunking name: ``oneshot``, ``stream`` (first streamed), ``stream:NAME`` (the others)."""
    out: dict[str, str] = {}
    for c in chunkings:
        if not c.streamed:
            out["oneshot"] = c.name
        elif "stream" not in out:
            out["stream"] = c.name
        else:
            out[f"stream:{c.name}"] = c.name
    return out


@dataclass(frozen=True)
class ComparePlan:
    """What every transcript is run through; picklable, sent once to each worker.

    `targets` set: those for every transcript (explicit specs or ``--family``).
    Empty: each transcript's own family, on each of `backends` (via the family table).
    """

    targets: tuple[Target, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    backends: tuple[str, ...] = ()
    chunkings: tuple[str, ...] = ("oneshot", *DEFAULT_COMPARE_CHUNKINGS)
    explicit: bool = True
    #: ``--family`` given: (kind, family) pairs; a transcript of that family also gets its own
    #: reasoning family's parser (a hermes transcript whose prompt opened ``<think>``).
    families: tuple[tuple[str, str], ...] = ()

    @classmethod
    def build(
        cls,
        specs: Sequence[SpecLike] | None = None,
        *,
        reasoning_parsers: Sequence[str] | None = None,
        family: str | Sequence[str] | None = None,
        backends: Sequence[str] | None = None,
        chunkings: Sequence[str] | None = None,
        validate: bool = True,
    ) -> ComparePlan:
        """Check specs, families, backends and chunkings up front (a typo fails before any work)."""
        from ..adapters import get_backend, resolve

        names = list(chunkings) if chunkings else list(DEFAULT_COMPARE_CHUNKINGS)
        parsed = parse_chunkings(names)
        if not any(not c.streamed for c in parsed):
            parsed.insert(0, parse_chunkings(["oneshot"])[0])
        else:
            parsed.sort(key=lambda c: c.streamed)
        chunk_names = tuple(c.name for c in parsed)
        if backends:
            for b in backends:
                get_backend(b)  # unknown backend → error listing the known ones
        targets = targets_from(specs, reasoning_parsers)
        if targets:
            if family or backends:
                raise InvalidSpecError("give parser specs, or --family/--backends, not both")
            if validate:
                from ..adapters.python_backend import load_class

                for t in targets:
                    for kind, spec in (("reasoning", t.reasoning_spec), ("tool", t.tool_spec)):
                        if spec:
                            backend, name = resolve(kind, spec)  # type: ignore[arg-type]
                            if backend.name == "python":
                                load_class(name)  # a typo in module:Class fails now, not per transcript
            return cls(tuple(targets), chunkings=chunk_names, explicit=True)
        chosen = list(backends) if backends else available_backends()
        if backends and validate:
            for b in backends:
                get_backend(b).require()  # asked for by name: say how to install it
        if family:
            fams = [family] if isinstance(family, str) else list(family)
            found, unsupported = family_targets(fams, chosen)
            if not found:
                raise InvalidSpecError(
                    "no backend here has a parser for "
                    + ", ".join(fams)
                    + "".join(f"\n  {b}: {why}" for b, why in unsupported.items())
                )
            tool_fam, reasoning_fam = resolve_families(fams)
            named = tuple((k, f) for k, f in (("tool", tool_fam), ("reasoning", reasoning_fam)) if f)
            return cls(
                tuple(found),
                tuple(unsupported.items()),
                tuple(chosen),
                chunk_names,
                explicit=False,
                families=named,
            )
        return cls((), (), tuple(chosen), chunk_names, explicit=False)

    def parsed_chunkings(self) -> list[Chunking]:
        return parse_chunkings(list(self.chunkings))

    @property
    def modes(self) -> dict[str, str]:
        return mode_names(self.parsed_chunkings())


# ---------------------------------------------------------------- one transcript


class _BoundedRunner(Runner):
    """The conformance runner with a bounded (LRU) parser cache, so a log with many tools lists stays flat."""

    def __init__(self, chunkings: Sequence[str], limit: int = SUBJECT_CACHE) -> None:
        super().__init__(chunkings)
        self._lru: OrderedDict[tuple[Any, ...], Subject | BaseException] = OrderedDict()
        self._limit = limit

    def subject(self, target: Target, tools: Sequence[dict[str, Any]]) -> Subject:
        key = (target.reasoning_spec, target.tool_spec, json.dumps(tools, sort_keys=True, default=str))
        cached = self._lru.get(key)
        if cached is None:
            try:
                cached = Subject(target, tools, **self.parser_options)
            except Exception as exc:
                cached = exc
            self._lru[key] = cached
            if len(self._lru) > self._limit:
                self._lru.popitem(last=False)
        else:
            self._lru.move_to_end(key)
        if isinstance(cached, BaseException):
            raise cached
        return cached


def _reading(obs: Observation | None, result: Result) -> dict[str, Any]:
    if obs is None:
        return {
            "reasoning": None,
            "content": None,
            "tool_calls": [],
            "chunking": result.chunking,
            "status": result.status if result.status == "unsupported" else "error",
            "error": result.reason,
        }
    calls = [
        {
            "name": c.get("name"),
            "arguments": c.get("arguments", {}),
            "invalid_arguments": c.get("invalid_arguments"),
        }
        for c in obs.tool_calls
    ]
    return {
        "reasoning": obs.reasoning,
        "content": obs.content,
        "tool_calls": calls,
        "chunking": obs.chunking,
        "status": "ok" if obs.error is None else "error",
        "error": obs.error,
    }


def _diff(cls: str, a: str, b: str, detail: str) -> dict[str, str]:
    return {"class": cls, "a": a, "b": b, "detail": detail}


class Comparer:
    """Compares one transcript at a time; holds the runner (parser cache) of one process."""

    def __init__(self, plan: ComparePlan) -> None:
        self.plan = plan
        self.runner = _BoundedRunner(plan.chunkings)
        self.chunkings = self.runner.chunkings
        self.modes = mode_names(self.chunkings)
        self._mode_of = {v: k for k, v in self.modes.items()}
        self._unsupported = dict(plan.unsupported)

    def targets_for(self, t: Transcript) -> tuple[list[Target], dict[str, str]]:
        if self.plan.targets and not self._own_family(t):
            return list(self.plan.targets), dict(self._unsupported)
        if not t.family:
            return [], {"*": "the transcript names no family: give parser specs or --family"}
        targets, unsupported = [], {}
        for b in self.plan.backends:
            target = target_for(t, b, self.runner.table)
            if target.unsupported:
                unsupported[b] = target.unsupported
            else:
                targets.append(target)
        return targets, unsupported

    def _own_family(self, t: Transcript) -> bool:
        """With ``--family``: is this transcript of that family (so its own reasoning family applies too)?"""
        if not self.plan.families or not t.family:
            return False
        fam = t.resolve_family(self.runner.table)
        return fam is not None and (fam.kind, fam.name) in self.plan.families

    def compare(self, t: Transcript) -> dict[str, Any]:
        """The `TranscriptComparison` of one transcript, as a JSON-ready dict."""
        targets, unsupported = self.targets_for(t)
        results: dict[str, dict[str, Any]] = {}
        observed: dict[str, dict[str, Observation]] = {}
        differences: list[dict[str, str]] = []
        markers: dict[str, tuple[str, ...]] = {}
        expected_ok: dict[str, dict[str, bool]] = {}
        against: list[dict[str, str]] = []
        for target in targets:
            rows = self.runner.run_transcript(target, t, self.chunkings, explicit=self.plan.explicit)
            if rows and all(r.status == "unsupported" for r in rows):
                unsupported[target.backend if not self.plan.explicit else target.label] = rows[0].reason or ""
                continue
            label = target.label
            results[label] = {}
            observed[label] = {}
            for r in rows:
                mode = self._mode_of[r.chunking]
                results[label][mode] = _reading(r.observation, r)
                if r.observation is not None:
                    observed[label][mode] = r.observation
                for d in r.verdict.differences:  # within one spec: stream vs one-shot, invariants, errors
                    if d.source == "stream":
                        differences.append(
                            _diff(d.cls.value, f"{label}/oneshot", f"{label}/{mode}", d.detail)
                        )
                    elif d.source in ("invariant", "backend"):
                        differences.append(_diff(d.cls.value, f"{label}/{mode}", f"{label}/{mode}", d.detail))
            markers[label] = self._markers(t, target)
            expected = t.expected_for(target.backend)
            if expected is not None:
                expected_ok[label] = {}
                for mode, obs in observed[label].items():
                    wrong = check_expected(obs, expected, markers=markers[label]) if obs.ok else None
                    expected_ok[label][mode] = wrong == []
                    for d in wrong or ():
                        against.append(_diff(d.cls.value, f"{label}/{mode}", "expected", d.detail))
        for a, b in combinations(list(observed), 2):
            both = tuple(dict.fromkeys(markers[a] + markers[b]))
            for mode in self.modes:
                oa, ob = observed[a].get(mode), observed[b].get(mode)
                if oa is None or ob is None:
                    continue
                for d in compare_observations(oa, ob, markers=both):
                    differences.append(_diff(d.cls.value, f"{a}/{mode}", f"{b}/{mode}", d.detail))
        return {
            "type": "transcript",
            "transcript": t.id,
            "family": t.family,
            "specs": list(results),
            "results": results,
            "differences": differences,
            "expected": expected_ok if t.expected is not None or t.expected_by_backend else None,
            "against_expected": against,
            "unsupported": unsupported,
        }

    def _markers(self, t: Transcript, target: Target) -> tuple[str, ...]:
        try:
            return self.runner.markers_for(t, self.runner.subject(target, t.tools))
        except Exception:
            return ()


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


class SummaryBuilder:
    """Aggregates compact records into a `CompareSummary`; memory bounded by specs² + top-N.

    Keeps the first `keep` lines (for showing small runs in full) and the
    `top` most different lines (for showing large runs): both bounded.
    """

    def __init__(self, modes: dict[str, str], *, top: int = 10, keep: int = 0) -> None:
        self.modes = modes
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
        self._heap: list[tuple[int, int, str, tuple[str, ...], str]] = []
        self.first: list[str] = []
        self._order: dict[str, int] = {}

    def _spec(self, s: str) -> SpecStats:
        st = self.specs.get(s)
        if st is None:
            st = self.specs[s] = SpecStats(spec=s)
            self._order[s] = len(self._order)
        return st

    def add(self, rec: Compact, line: str = "") -> None:
        seq = self.transcripts
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
            item = (rec.score, -seq, rec.transcript, tuple(sorted(present)), line)
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


# ---------------------------------------------------------------- running many (in parallel)

Done = tuple[str, Compact]

_WORKER: Comparer | None = None


def _init_worker(plan: ComparePlan) -> None:
    global _WORKER
    # Ctrl-C goes to the whole process group: the parent decides, workers must not die mid-batch noisily.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = Comparer(plan)


def _finish(d: dict[str, Any]) -> Done:
    return json.dumps(d, ensure_ascii=False), compact(d)


def _work(batch: list[Transcript]) -> list[Done]:
    assert _WORKER is not None
    return [_finish(_WORKER.compare(t)) for t in batch]


def _batched(items: Iterable[Transcript], n: int) -> Iterator[list[Transcript]]:
    it = iter(items)
    while batch := list(islice(it, n)):
        yield batch


def _context() -> Any:
    # fork: workers inherit imported frameworks (vLLM/torch take ~8 s to import) and the spec caches.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _warm(plan: ComparePlan) -> None:
    """Import each framework's parser registry in the parent, so forked workers share one import
    (vLLM/SGLang take seconds of CPU each) instead of paying it once per worker."""
    from ..adapters import parser_names

    backends = {t.backend for t in plan.targets} | set(plan.backends)
    for b in sorted(backends - {"builtin", "python"}):
        try:
            parser_names(b, "tool")
        except Exception:  # unavailable here: the workers will report it per transcript
            continue


def run_comparisons(
    transcripts: Iterable[Transcript],
    plan: ComparePlan,
    *,
    jobs: int = 1,
    ordered: bool = True,
    batch: int = BATCH,
) -> Iterator[Done]:
    """(JSON line, compact record) per transcript; in input order unless `ordered` is False.

    ``jobs == 1`` runs in this process. Otherwise a process pool with at
    most ``jobs × INFLIGHT`` batches in flight: input is read only as fast as
    results are consumed, so memory stays flat however long the log is.
    """
    jobs = (os.cpu_count() or 1) if jobs <= 0 else jobs
    if jobs == 1:
        comparer = Comparer(plan)
        for t in transcripts:
            yield _finish(comparer.compare(t))
        return
    _warm(plan)
    batches = _batched(transcripts, batch)
    ex = ProcessPoolExecutor(jobs, mp_context=_context(), initializer=_init_worker, initargs=(plan,))
    pending: deque[Future[list[Done]]] = deque()
    try:
        for b in islice(batches, jobs * INFLIGHT):
            pending.append(ex.submit(_work, b))
        while pending:
            if ordered:
                done = [pending.popleft()]
            else:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                done = [f for f in pending if f in finished]
                for f in done:
                    pending.remove(f)
            for fut in done:
                nxt = next(batches, None)
                if nxt is not None:
                    pending.append(ex.submit(_work, nxt))
                yield from fut.result()
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


# ---------------------------------------------------------------- the Python API


class CompareResult(BaseModel):
    """What `compare` returns: the same objects `--format json` prints, one per transcript, and the summary."""

    comparisons: list[TranscriptComparison] = Field(default_factory=list)
    summary: CompareSummary = Field(default_factory=CompareSummary)

    def to_jsonl(self) -> str:
        """Exactly what ``parsebridge compare --format json`` would print."""
        from .models import dump_line

        return "".join(dump_line(c) + "\n" for c in [*self.comparisons, self.summary])


TranscriptsLike = (
    str | Path | Transcript | dict[str, Any] | Iterable[str | Path | Transcript | dict[str, Any]]
)


def as_transcripts(source: TranscriptsLike) -> Iterator[Transcript]:
    """Lazily: a `str` is one raw output, a `Path` a transcript file, a dict a transcript object."""
    items: Iterable[Any] = [source] if isinstance(source, (str, Path, Transcript, dict)) else source
    for n, item in enumerate(items, 1):
        if isinstance(item, Transcript):
            yield item
        elif isinstance(item, Path):
            yield from iter_transcripts(item)
        elif isinstance(item, str):
            yield transcript_from({"output": item}, "text" if n == 1 else f"text-{n}")
        else:
            yield transcript_from(item, f"transcript-{n}")


def iter_compare(
    transcripts: TranscriptsLike,
    specs: Sequence[SpecLike] | None = None,
    *,
    reasoning_parsers: Sequence[str] | None = None,
    family: str | Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    chunkings: Sequence[str] | None = None,
    jobs: int = 1,
    ordered: bool = True,
) -> Iterator[TranscriptComparison]:
    """One `TranscriptComparison` per transcript, lazily (for logs too large to hold)."""
    plan = ComparePlan.build(
        specs, reasoning_parsers=reasoning_parsers, family=family, backends=backends, chunkings=chunkings
    )
    for line, _ in run_comparisons(as_transcripts(transcripts), plan, jobs=jobs, ordered=ordered):
        yield TranscriptComparison.model_validate_json(line)


def compare(
    transcripts: TranscriptsLike,
    specs: Sequence[SpecLike] | None = None,
    *,
    reasoning_parsers: Sequence[str] | None = None,
    family: str | Sequence[str] | None = None,
    backends: Sequence[str] | None = None,
    chunkings: Sequence[str] | None = None,
    jobs: int = 1,
    top: int = 10,
    progress: Callable[[int], None] | None = None,
) -> CompareResult:
    """Compare parsers on transcripts; the same structures as ``parsebridge compare --format json``.

    `transcripts`: one raw output (``str``), a transcript file (``Path``),
    `Transcript`/dict objects, or an iterable of those. `specs`: tool specs
    (``"vllm:hermes"``), pipelines (``"builtin:qwen3 + vllm:hermes"``) or
    `Target`s; `reasoning_parsers` pair with them (see `targets_from`).
    Without specs, `family` (e.g. ``"hermes"``) picks each backend's parser
    from the family table, and without that each transcript's own family
    is used; `backends` limits which backends (default: all installed).
    `chunkings`: streamed chunkings (default ``token, token-5, token-20``;
    ``oneshot`` is always added). Exceptions from parsers never escape:
    they are readings with ``status: "error"`` and ``backend_error``
    differences. Bad specs raise `InvalidSpecError` before any work.

        >>> r = pb.compare(text, ["builtin:hermes", "vllm:hermes"])
        >>> r.summary.pairs[0].rate, r.comparisons[0].differences
    """
    plan = ComparePlan.build(
        specs, reasoning_parsers=reasoning_parsers, family=family, backends=backends, chunkings=chunkings
    )
    start = time.perf_counter()
    builder = SummaryBuilder(plan.modes, top=top)
    out: list[TranscriptComparison] = []
    for line, rec in run_comparisons(as_transcripts(transcripts), plan, jobs=jobs):
        builder.add(rec)
        out.append(TranscriptComparison.model_validate_json(line))
        if progress is not None:
            progress(1)
    return CompareResult(comparisons=out, summary=builder.summary(elapsed=time.perf_counter() - start))

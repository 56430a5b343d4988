"""One transcript through every spec of a plan: readings, differences, scoring against `expected`.

Nothing here runs a parser by itself: the conformance `Runner` builds and
caches parsers and produces the observations, exactly as the suite does, so
`compare` and `parsebridge conformance` can never disagree about what a
backend did. A `Comparer` lives once per worker process (or Ray actor).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ..conformance.checks import compare_observations
from ..conformance.observation import Observation
from ..conformance.runner import BoundedCache, Result, Runner, Target, target_for
from ..conformance.transcripts import Transcript
from .models import TranscriptComparison
from .plan import ComparePlan, mode_names
from .undeclared import name_undeclared

#: Parser objects each worker keeps (keyed by specs and tools list); logs may carry many tools lists.
SUBJECT_CACHE = 128


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
        "tokenizer": obs.tokenizer,
        "status": "ok" if obs.error is None else "error",
        "error": obs.error,
    }


def _diff(cls: str, a: str, b: str, detail: str) -> dict[str, str]:
    return {"class": cls, "a": a, "b": b, "detail": detail}


def _reads_all(target: Target, t: Transcript) -> bool:
    """Whether `target` has a parser for each part of `t` its `expected` was written for: a
    reasoning parser alone reads no calls (a record of kind tool expects them), a tool parser alone
    no reasoning (a record with a reasoning family expects it), so such a reading is not scored."""
    needs_tool = t.kind == "tool"
    needs_reasoning = t.kind == "reasoning" or bool(t.reasoning_family)
    return (target.tool_spec is not None or not needs_tool) and (
        target.reasoning_spec is not None or not needs_reasoning
    )


class Comparer:
    """Compares one transcript at a time; holds the runner (parser cache) of one process."""

    def __init__(self, plan: ComparePlan) -> None:
        self.plan = plan
        self.runner = Runner(plan.chunkings, conventions=plan.conventions, cache=BoundedCache(SUBJECT_CACHE))
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
        """With ``--family``: is this transcript of that family, or is its reasoning family that one
        (so it is read with its own parsers, both of them: a reasoning parser alone, scored against
        the calls its record expects, would read every call as missing)?"""
        if not self.plan.families or not t.family:
            return False
        table = self.runner.table
        return any(
            fam is not None and (fam.kind, fam.name) in self.plan.families
            for fam in (t.resolve_family(table), t.resolve_reasoning_family(table))
        )

    def compare(self, t: Transcript) -> TranscriptComparison:
        """The comparison of one transcript: every target's readings, their differences, the scoring."""
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
            results[label], observed[label] = {}, {}
            markers[label] = rows[0].markers if rows else ()
            scored = t.expected_for(target.backend) is not None and _reads_all(target, t)
            if scored:
                expected_ok[label] = {}
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
                if scored and r.observation is not None:
                    wrong = r.verdict.against_expected  # None: the backend raised
                    expected_ok[label][mode] = wrong == []
                    against.extend(
                        _diff(d.cls.value, f"{label}/{mode}", "expected", d.detail) for d in wrong or ()
                    )
        for a, b in combinations(list(observed), 2):
            both = tuple(dict.fromkeys(markers[a] + markers[b]))
            for mode in self.modes:
                oa, ob = observed[a].get(mode), observed[b].get(mode)
                if oa is None or ob is None:
                    continue
                for d in compare_observations(oa, ob, markers=both):
                    differences.append(_diff(d.cls.value, f"{a}/{mode}", f"{b}/{mode}", d.detail))
        name_undeclared(t, [*differences, *against], observed)
        return TranscriptComparison.model_validate(
            {
                "transcript": t.id,
                "family": t.family,
                "specs": list(results),
                "results": results,
                "differences": differences,
                "expected": expected_ok if t.expected is not None or t.expected_by_backend else None,
                "against_expected": against,
                "unsupported": unsupported,
            }
        )

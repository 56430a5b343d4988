"""What the fuzz and corpus tests saw per backend: inputs, escapes, errors, divergence classes.

Framework divergences are data, not failures: the tests record them here and
`conftest.py` prints the tally at the end of the session and, when
``PARSEBRIDGE_FUZZ_REPORT`` (a file) or ``REPORT_DIR`` (tox) is set, writes it
as JSON next to the conformance report.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parsebridge.conformance.adversarial import ProbeResult


@dataclass
class Tally:
    inputs: int = 0
    escaped: int = 0
    errors: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    wrong: Counter[str] = field(default_factory=Counter)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    over_budget: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "escaped": self.escaped,
            "errors": self.errors,
            "classes": dict(self.classes.most_common()),
            "wrong_vs_expected": dict(self.wrong.most_common()),
            "examples": self.examples,
            "over_budget": self.over_budget,
        }


LOG: dict[str, Tally] = {}


def record(
    backend: str, spec: str, text: str, result: ProbeResult, *, source: str, wrong: list[str] | None = None
) -> None:
    """Count one input; keep the first (shortest seen) example of each class per spec."""
    tally = LOG.setdefault(backend, Tally())
    tally.inputs += 1
    tally.escaped += bool(result.escaped)
    tally.errors += bool(result.errors)
    for cls in result.classes:
        tally.classes[cls] += 1
        key = f"{spec} {cls}"
        old = tally.examples.get(key)
        if old is None or len(text) < len(old["output"]):
            detail = next((d.detail for d in result.differences if d.cls.value == cls), "")
            tally.examples[key] = {"source": source, "output": text[:2000], "detail": detail[:500]}
    for cls in wrong or ():
        tally.wrong[cls] += 1


def slow(backend: str, spec: str, transcript: str, budget: float) -> None:
    """A corpus transcript that ran past its CPU budget (a runaway parser, or a quadratic one)."""
    tally = LOG.setdefault(backend, Tally())
    tally.inputs += 1
    tally.over_budget.append(f"{spec} {transcript} > {budget:g} CPU-s")


def report_path() -> Path | None:
    explicit = os.environ.get("PARSEBRIDGE_FUZZ_REPORT")
    if explicit:
        return Path(explicit)
    report_dir = os.environ.get("REPORT_DIR")
    return Path(report_dir) / "fuzz.json" if report_dir else None


def write_report(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({b: t.as_dict() for b, t in LOG.items()}, indent=2))


def summary_lines() -> list[str]:
    lines = []
    for backend, t in sorted(LOG.items()):
        classes = ", ".join(f"{c} {n}" for c, n in t.classes.most_common()) or "none"
        lines.append(
            f"{backend}: {t.inputs} inputs, {t.escaped} escaped exceptions, {t.errors} with typed errors; "
            f"divergences: {classes}"
        )
        if t.over_budget:
            lines.append(f"  over the CPU budget: {'; '.join(t.over_budget)}")
        if t.wrong:
            lines.append(f"  corpus readings wrong vs expected: {dict(t.wrong.most_common())}")
    return lines

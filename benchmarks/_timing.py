"""Timing helpers: repeat, keep min and median, never trust one sample.

Machines here are shared and noisy, so a benchmark compares two things
measured alternately in the same run and reports their ratio, with the raw
min/median of each printed beside it.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Sample:
    """Seconds per run of one measured thing."""

    label: str
    runs: list[float] = field(default_factory=list)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "min_s": self.min, "median_s": self.median, "runs": len(self.runs)}


def measure(fn: Callable[[], object], *, repeat: int = 5, number: int = 1, label: str = "") -> Sample:
    """Time `fn` `repeat` times (each `number` calls); seconds per call."""
    sample = Sample(label)
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sample.runs.append((time.perf_counter() - start) / number)
    return sample


def measure_pair(
    a: Callable[[], object],
    b: Callable[[], object],
    *,
    repeat: int = 5,
    number: int = 1,
    labels: tuple[str, str] = ("a", "b"),
) -> tuple[Sample, Sample]:
    """Time two things alternately, so drifting machine load hits both alike."""
    sa, sb = Sample(labels[0]), Sample(labels[1])
    for _ in range(repeat):
        for fn, sample in ((a, sa), (b, sb)):
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            sample.runs.append((time.perf_counter() - start) / number)
    return sa, sb


def ratio(a: Sample, b: Sample) -> float:
    """a/b on the minimum (the least disturbed run of each)."""
    return a.min / b.min if b.min else float("inf")


@dataclass
class Row:
    """One line of the results table."""

    section: str
    name: str
    value: float
    unit: str
    target: str = ""
    met: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

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


def measure_many(
    fns: dict[str, Callable[[], object]], *, repeat: int = 5, numbers: dict[str, int] | None = None
) -> dict[str, Sample]:
    """Time several things round-robin (each with its own call count), as `measure_pair` does for two."""
    samples = {label: Sample(label) for label in fns}
    for _ in range(repeat):
        for label, fn in fns.items():
            number = (numbers or {}).get(label, 1)
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[label].runs.append((time.perf_counter() - start) / number)
    return samples


def ratio(a: Sample, b: Sample) -> float:
    """a/b on the minimum (the least disturbed run of each)."""
    return a.min / b.min if b.min else float("inf")


def median_ratio(a: Sample, b: Sample) -> float:
    """a/b on the medians: printed beside `ratio` so a lucky minimum shows up."""
    return a.median / b.median if b.median else float("inf")


def spread(a: Sample, b: Sample) -> float:
    """How much the median ratio a/b moves between two runs of the same code: the ratio on the
    even rounds against the ratio on the odd rounds (rounds alternate, so both halves saw the
    same machine). Printed beside a ratio, it says how far that ratio can be trusted."""
    halves = []
    for part in (slice(0, None, 2), slice(1, None, 2)):
        ra, rb = a.runs[part], b.runs[part]
        if not ra or not rb or not statistics.median(rb):
            return float("nan")
        halves.append(statistics.median(ra) / statistics.median(rb))
    return abs(halves[0] - halves[1])


def calibrate(fn: Callable[[], object], target_s: float, cap: int = 10_000) -> int:
    """How many calls of `fn` make one timed run last about `target_s` (at least 1)."""
    once = float("inf")
    for _ in range(3):  # the least disturbed of three calls: one slow call must not shrink samples
        start = time.perf_counter()
        fn()
        once = min(once, time.perf_counter() - start)
    if once <= 0:
        return cap
    return max(1, min(cap, int(target_s / once)))


def least_cpu(fn: Callable[[], object], repeat: int) -> float:
    """The least process CPU time of `repeat` runs of `fn`, each after a collection (time the
    process waited for a core is not in it: the machine is shared)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def fmt_seconds(seconds: float) -> str:
    """Seconds in the unit that keeps three significant digits readable."""
    if seconds >= 1:
        return f"{seconds:.2f}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f}ms"
    return f"{seconds * 1e6:.1f}µs"


def describe(*samples: Sample) -> str:
    """``label min/median`` of each sample, for the table's raw column."""
    return " · ".join(f"{s.label} {fmt_seconds(s.min)}/{fmt_seconds(s.median)}" for s in samples)


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
    #: The raw numbers behind a ratio (min/median of each side), or why a figure is missing.
    raw: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["value"] != out["value"]:  # NaN (a figure that could not be measured) → null in JSON
            out["value"] = None
        return out

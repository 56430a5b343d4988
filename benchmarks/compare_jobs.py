"""compare --jobs: parallel worker processes against one process, on the same log.

Parsing is CPU-bound Python, so only processes scale. The figure is the
wall-time ratio jobs 1 / jobs 2 (above 1: parallel is faster), measured
alternately in one run (`measure_pair`) so machine load hits both alike;
pool start-up (fork) is included, as a user pays it.

`python -m benchmarks.compare_jobs [--quick]` runs it alone.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

from ._timing import Row, measure_pair, ratio
from .compare_memory import make_log


def run(quick: bool) -> list[Row]:
    from parsebridge.comparison.engine import ComparePlan, run_comparisons
    from parsebridge.conformance.transcripts import iter_transcripts

    n = 600 if quick else 3000
    repeat = 2 if quick else 3
    plan = ComparePlan.build(["builtin:hermes"], reasoning_parsers=["builtin:qwen3"])
    with tempfile.TemporaryDirectory() as tmp:
        log = make_log(Path(tmp) / "log.jsonl", n)

        def go(jobs: int) -> None:
            count = sum(1 for _ in run_comparisons(iter_transcripts(log), plan, jobs=jobs))
            assert count == n

        one, two = measure_pair(lambda: go(1), lambda: go(2), repeat=repeat, labels=("jobs 1", "jobs 2"))
        # Where the CPU goes with jobs 2: the parent only reads, writes and aggregates.
        self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        go(2)
        self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    parent_cpu = (self1.ru_utime - self0.ru_utime) + (self1.ru_stime - self0.ru_stime)
    worker_cpu = (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)
    share = parent_cpu / (parent_cpu + worker_cpu) if parent_cpu + worker_cpu else 0.0
    speedup = ratio(one, two)
    cpus = os.cpu_count() or 1
    return [
        Row("compare", f"jobs 1, {n:,} transcripts", one.min, "s", detail=one.as_dict()),
        Row("compare", f"jobs 2, {n:,} transcripts", two.min, "s", detail=two.as_dict()),
        Row(
            "compare",
            "parent's share of CPU with jobs 2",
            share * 100,
            "%",
            target="small: workers do the parsing",
            detail={"parent_cpu_s": round(parent_cpu, 3), "worker_cpu_s": round(worker_cpu, 3)},
        ),
        Row(
            "compare",
            "speed-up jobs 2 vs jobs 1",
            speedup,
            "x",
            target="> 1.0 (2 cores)",
            met=speedup > 1.0,
            detail={
                "cpus": cpus,
                "per_transcript_ms_jobs1": round(one.min / n * 1000, 3),
                "load_avg": os.getloadavg(),
            },
        ),
    ]


def _main() -> None:
    quick = "--quick" in sys.argv
    for r in run(quick):
        met = "" if r.met is None else (" ok" if r.met else " MISSED")
        print(f"{r.name}: {r.value:,.3f} {r.unit} {r.target}{met} {r.detail}")


if __name__ == "__main__":
    _main()

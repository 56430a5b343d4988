"""compare at scale: ``--jobs 1``, ``--jobs 2`` and ``--executor ray`` (2 local workers) on one log.

Each mode is one fresh `parsebridge compare LOG --format json -o OUT` driver
process over the same 20k-transcript log (`compare_memory.make_log`, quick:
2k), timed from the command's start to its end, so interpreter start, the
process pool's fork and the Ray runtime's start-up are included, as a user
pays them. The driver reports its own peak RSS (``RUSAGE_SELF``: the driver
only, not its workers): it reads the log lazily and holds only the blocks in
flight, so it must stay far below what holding the log would cost, and not
grow with the log (full run: the Ray driver on the 2k and the 20k log).
Every mode's records are checked equal as a set, and the summaries equal.

Ray is measured where it is installed (``pip install '.[ray]'``,
``tox -e ray``); elsewhere its rows say so. The runs follow one another
(not alternated: each is minutes long), so machine load can differ between
them; the load average is in each row's detail.

`python -m benchmarks.compare_ray [--quick]` runs it alone.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ._timing import Row
from .compare_memory import SPECS, make_log

#: Run in a fresh interpreter: time the whole command, report the driver's own peak RSS.
_DRIVER = """
import json, resource, sys, time
t0 = time.perf_counter()
from parsebridge.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "seconds": time.perf_counter() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

MODES: dict[str, list[str]] = {
    "jobs 1": ["--jobs", "1"],
    "jobs 2": ["--jobs", "2"],
    "ray, 2 local workers": ["--executor", "ray", "--jobs", "2"],
}


def _drive(log: Path, out: Path, extra: list[str]) -> dict[str, float]:
    argv = ["compare", str(log), *SPECS, "--format", "json", "-o", str(out), "--no-progress", *extra]
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *argv], capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"compare {' '.join(extra)} failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["rc"] != 0:
        raise RuntimeError(f"compare {' '.join(extra)} exited {result['rc']}: {done.stderr[-2000:]}")
    return result


def _records(out: Path) -> tuple[set[str], dict[str, object]]:
    lines = out.read_text(encoding="utf-8").splitlines()
    summary = json.loads(lines.pop())
    summary.pop("elapsed_s")
    return set(lines), summary


def run(quick: bool) -> list[Row]:
    n = 2_000 if quick else 20_000
    have_ray = importlib.util.find_spec("ray") is not None
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        log = make_log(Path(tmp) / "log.jsonl", n)
        log_mb = log.stat().st_size / 1e6
        reference: tuple[set[str], dict[str, object]] | None = None
        for label, extra in MODES.items():
            if "--executor" in extra and not have_ray:
                rows.append(
                    Row(
                        "compare",
                        f"transcripts/s, {label}, {n:,} transcripts",
                        math.nan,
                        "",
                        raw="Ray not installed here (pip install '.[ray]'; tox -e ray)",
                    )
                )
                continue
            out = Path(tmp) / f"out-{len(rows)}.jsonl"
            got = _drive(log, out, extra)
            records = _records(out)
            if reference is None:
                reference = records
            same = records == reference
            if not same:
                raise RuntimeError(f"{label}: records or summary differ from jobs 1")
            rows.append(
                Row(
                    "compare",
                    f"transcripts/s, {label}, {n:,} transcripts",
                    n / got["seconds"],
                    "/s",
                    raw=f"{got['seconds']:.1f} s wall, driver peak RSS {got['peak_mb']:.0f} MB",
                    detail={
                        "seconds": round(got["seconds"], 2),
                        "driver_peak_mb": round(got["peak_mb"], 1),
                        "log_mb": round(log_mb, 1),
                        "same_records_and_summary_as_jobs_1": same,
                        "load_avg": os.getloadavg(),
                    },
                )
            )
            rows.append(
                Row(
                    "compare",
                    f"driver peak RSS, {label}, {n:,} transcripts ({log_mb:.0f} MB log)",
                    got["peak_mb"],
                    "MB",
                    target="flat: the driver holds blocks in flight, not the log",
                )
            )
        if have_ray and not quick:  # the Ray driver's memory must not grow with the log
            small = make_log(Path(tmp) / "small.jsonl", n // 10)
            got = _drive(small, Path(tmp) / "small-out.jsonl", MODES["ray, 2 local workers"])
            big = next(r for r in rows if r.name.startswith("driver peak RSS, ray")).value
            growth = big / got["peak_mb"]
            rows.append(
                Row(
                    "compare",
                    f"Ray driver peak RSS growth {n // 10:,} → {n:,} transcripts",
                    growth,
                    "x",
                    target="< 1.15x (flat)",
                    met=growth < 1.15,
                    detail={"mb_small": round(got["peak_mb"], 1), "mb_big": round(big, 1)},
                )
            )
    return rows


def _main() -> None:
    quick = "--quick" in sys.argv
    for r in run(quick):
        met = "" if r.met is None else (" ok" if r.met else " MISSED")
        print(f"{r.name}: {r.value:,.2f} {r.unit} {r.target}{met} {r.raw} {r.detail}")


if __name__ == "__main__":
    _main()

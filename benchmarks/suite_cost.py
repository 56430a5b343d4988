"""Section 5: wall time of the conformance suite per backend (what a CI matrix cell costs).

Runs ``python -m parsebridge conformance --backend X --report DIR`` in a
subprocess, with the interpreter that has the framework (`--python`), once
per backend (a suite run is long; its spread is printed by CI step timings).
Beside it, the same interpreter's CLI start (``parsebridge --version``), so
the suite's own share shows even on a loaded machine. A missing
`conformance` command, a missing framework or a timeout gives a row saying
so. Quick mode runs the builtin backend only, with a short timeout.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._backends import BACKENDS, SETTINGS, installed, skip_row
from ._timing import Row

SECTION = "suite"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(cmd: list[str], timeout: float) -> tuple[float, subprocess.CompletedProcess[str] | None]:
    wall, _, done = _timed_cpu(cmd, timeout)
    return wall, done


def _timed_cpu(
    cmd: list[str], timeout: float
) -> tuple[float, float, subprocess.CompletedProcess[str] | None]:
    """Wall seconds, CPU seconds (the command and its workers: what the load does not inflate), result."""
    start, cpu0 = time.perf_counter(), _cpu()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, _cpu() - cpu0, None
    return time.perf_counter() - start, _cpu() - cpu0, done


def _python_for(backend: str) -> str | None:
    if backend in SETTINGS.pythons:
        return SETTINGS.pythons[backend]
    if backend == "builtin" or installed(backend):
        return sys.executable
    return None


def _statuses(report_dir: Path) -> str:
    try:
        data = json.loads((report_dir / "report.json").read_text())
    except (OSError, ValueError):
        return "no report.json"
    counts = collections.Counter(r.get("status", "?") for r in data.get("results", []))
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no results"


def run(quick: bool) -> list[Row]:
    timeout = SETTINGS.suite_timeout or (60.0 if quick else 1200.0)
    backends = (
        ["builtin"]
        if quick
        else [b for b in BACKENDS if b == "builtin" or b in SETTINGS.pythons or installed(b)]
    )
    rows: list[Row] = []
    checked: dict[str, str | None] = {}
    for backend in BACKENDS:
        if backend not in backends:
            if not quick:
                rows.append(skip_row(SECTION, f"conformance --backend {backend}", "not installed"))
            continue
        python = _python_for(backend)
        if python is None:
            rows.append(skip_row(SECTION, f"conformance --backend {backend}", "not installed"))
            continue
        if python not in checked:
            _, probe = _timed([python, "-m", "parsebridge", "conformance", "--help"], 120)
            checked[python] = (
                None
                if probe is not None and probe.returncode == 0
                else "`parsebridge conformance` not available"
            )
        if checked[python]:
            rows.append(skip_row(SECTION, f"conformance --backend {backend}", str(checked[python])))
            continue
        start_s, _ = _timed([python, "-m", "parsebridge", "--version"], 120)
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [python, "-m", "parsebridge", "conformance", "--backend", backend, "--report", tmp]
            wall, cpu, done = _timed_cpu(cmd, timeout)
            if done is None:
                rows.append(
                    skip_row(SECTION, f"conformance --backend {backend}", f"timed out after {timeout:.0f}s")
                )
                continue
            statuses = _statuses(Path(tmp))
        rows.append(
            Row(
                SECTION,
                f"conformance --backend {backend} wall time",
                wall,
                "s",
                raw=f"exit {done.returncode}; {cpu:.1f} s CPU; CLI start {start_s:.2f}s "
                f"({wall / start_s:.0f}× it); {statuses}",
                detail={
                    "python": python,
                    "cpu_s": cpu,
                    "load_average": os.getloadavg()[0],
                    "exit": done.returncode,
                    "cli_start_s": start_s,
                    "statuses": statuses,
                    "stderr_tail": done.stderr[-400:],
                },
            )
        )
    if not quick and len(backends) == len(BACKENDS) and len({_python_for(b) for b in BACKENDS}) == 1:
        rows.append(_all_backends(str(_python_for("builtin")), timeout))
    return rows


def _all_backends(python: str, timeout: float) -> Row:
    """The three backends in one run, as the README's conformance command (target: under 120 s wall)."""
    name = "conformance, all three backends in one run, wall time"
    args = [a for b in BACKENDS for a in ("--backend", b)]
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu, done = _timed_cpu(
            [python, "-m", "parsebridge", "conformance", *args, "--report", tmp], timeout
        )
        if done is None:
            return skip_row(SECTION, name, f"timed out after {timeout:.0f}s")
        statuses = _statuses(Path(tmp))
    load = os.getloadavg()[0]
    return Row(
        SECTION,
        name,
        wall,
        "s",
        target="< 120 s",
        met=wall < 120,
        raw=f"exit {done.returncode}; {cpu:.1f} s CPU; load average {load:.1f}; {statuses}",
        detail={"python": python, "exit": done.returncode, "cpu_s": cpu, "load_average": load},
    )

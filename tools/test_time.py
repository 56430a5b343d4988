#!/usr/bin/env python3
"""Time the README's test command on a fresh clone; render the measured figure into the README.

Run:  python tools/test_time.py --measure   clone HEAD into a temporary directory, run
                                            ``python3 -m tox -e core`` there as a newcomer
                                            would (environment creation included), write
                                            benchmarks/results/test-time.json
      python tools/test_time.py             render the README's sentence from that JSON
      python tools/test_time.py --check     fail if the README's sentence is stale (a test runs it)

The README never states a time by hand: the sentence between the markers is
written from the JSON, which records the run (wall time, tox's own
setup/command split, the pytest summary, CPUs, load average, commit, date).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results" / "test-time.json"
COMMAND = "python3 -m tox -e core"
BEGIN, END = "<!-- test-time:begin (tools/test_time.py) -->", "<!-- test-time:end -->"


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def measure(python: str) -> dict[str, Any]:
    """Clone HEAD, run the test command in the clone, and return what the run showed."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="pb-test-time-") as tmp:
        clone = Path(tmp) / "parsebridge"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        load_start = os.getloadavg()[0]
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        # A newcomer has no pip cache: every dependency is downloaded, as theirs would be.
        env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
        done = subprocess.run(
            [python, "-m", "tox", "-e", "core"],
            cwd=clone,
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        wall = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_end = os.getloadavg()[0]
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    out = done.stdout + done.stderr
    if done.returncode != 0:  # the run is recorded as failed: say why
        print(out[-4000:], file=sys.stderr)
    summary = re.findall(r"^=*\s*(\d+ passed.*? in [\d.]+s.*?)\s*=*$", out, re.M)
    tox_line = re.findall(r"^\s*core: (OK|FAIL) \((.*?) seconds\)", out, re.M)
    return {
        "command": COMMAND,
        "commit": commit,
        "date": datetime.date.today().isoformat(),
        "cpus": _cpus(),
        "load_average_start": round(load_start, 2),
        "load_average_end": round(load_end, 2),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "ok": done.returncode == 0,
        "tox": " ".join(tox_line[-1]) if tox_line else None,
        "pytest": summary[-1] if summary else None,
        "pip_cache": "disabled (PIP_NO_CACHE_DIR=1)",
        "nice": os.nice(0),
    }


def _duration(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def sentence(run: dict[str, Any]) -> str:
    """The README's sentence about the test command's time, from a recorded run."""
    if not run.get("ok"):
        raise SystemExit(f"{RESULTS.name}: the recorded run failed; re-measure before rendering")
    return (
        f"On a {run['cpus']}-vCPU machine, command 2 took **{_duration(run['wall_s'])}** from a fresh "
        f"clone, environment creation included (measured {run['date']} at commit {run['commit']} by "
        f"`python tools/test_time.py --measure`{_nice(run)}; the machine was shared, load average "
        f"{run['load_average_start']:.1f} at the start{_cpu(run)}). `python3 -m tox -e thorough` runs "
        "the same tests at their full property-test example counts, and the ones marked `slow` "
        "(streams' memory: every builtin family, 20 and 50 MB outputs) that command 2 leaves out."
    )


def _cpu(run: dict[str, Any]) -> str:
    """The run's CPU time, which the load does not inflate (older records lack it)."""
    return (
        f"; {_duration(run['cpu_s'])} of CPU time in all, which the load does not inflate"
        if run.get("cpu_s")
        else ""
    )


def _nice(run: dict[str, Any]) -> str:
    """The niceness the run had, when it gave way to other work (older records lack it)."""
    return f" under `nice -n {run['nice']}`" if run.get("nice") else ""


def render(readme: str, run: dict[str, Any]) -> str:
    head, sep, rest = readme.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"README.md lacks the markers {BEGIN!r} … {END!r}")
    return f"{head}{BEGIN}\n{sentence(run)}\n{END}{tail}"


def load() -> dict[str, Any]:
    if not RESULTS.exists():
        raise SystemExit(f"missing {RESULTS.relative_to(ROOT)}: run python tools/test_time.py --measure")
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--measure", action="store_true", help="time the command on a fresh clone")
    group.add_argument("--check", action="store_true", help="fail if the README's sentence is stale")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs tox (default: this one)")
    args = ap.parse_args(argv)
    if args.measure:
        run = measure(args.python)
        RESULTS.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(run, indent=1))
        if not run["ok"]:
            return 1
    text = README.read_text(encoding="utf-8")
    new = render(text, load())
    if args.check:
        if new != text:
            print("README.md test-time sentence is stale: run python tools/test_time.py", file=sys.stderr)
            return 1
        print("README.md test-time sentence matches benchmarks/results/test-time.json")
        return 0
    README.write_text(new, encoding="utf-8")
    print("README.md test-time sentence written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""compare over a production-sized log: peak memory must not grow with the log.

Each size runs `parsebridge compare LOG --format json -o FILE` in a fresh
interpreter (so earlier sizes cannot warm or bloat it) and reads that
process's peak RSS from the kernel (`wait4` rusage). Flat means the 100k
run peaks within a few MB of the 10k run: input is streamed, workers get
bounded batches, and the summary keeps counters and a top-N, not results.

`python -m benchmarks.compare_memory [--quick]` runs it alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parsebridge.formats import hermes, think

from ._timing import Row

SPECS = ["--reasoning-parser", "builtin:qwen3", "--tool-parser", "builtin:hermes"]
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
    for name in ("get_weather", "get_time", "search_web")
]


def make_log(path: Path, n: int) -> Path:
    """A synthetic log shaped like production traffic: plain answers, calls, reasoning, malformed output."""
    cities = ["Paris", "Oslo", "Lisbon", "Tokyo", "Lima", "Cairo", "Perth"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            city = cities[i % len(cities)]
            args = {"city": city, "days": i % 9}
            call = hermes.render_call("get_weather", args, ascii_only=True)
            kind = i % 5
            if kind == 0:
                out = f"The weather in {city} should be mild today; request {i} needs no tool."
            elif kind == 1:
                out = f"Let me check {city} for you.\n{call}"
            elif kind == 2:
                out = (
                    f"{think.START}The user asks about {city}; I should call the tool (#{i}).{think.END}"
                    f"{call}"
                )
            elif kind == 3:
                out = hermes.TOOL.render([("get_weather", args), ("get_time", {"city": city})])
            else:
                out = f"Trying {city}." + call[: len(hermes.START) + 21 + i % 15]  # truncated mid-call
            fh.write(json.dumps({"id": f"req-{i}", "output": out, "tools": _TOOLS[: 1 + i % 3]}) + "\n")
    return path


def peak_rss_mb(argv: list[str]) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of one fresh `python -m parsebridge ARGV` process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "parsebridge", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"compare failed ({proc.returncode}): {err[-2000:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start  # Linux: KiB


def run(quick: bool) -> list[Row]:
    sizes = (1_000, 5_000) if quick else (10_000, 100_000)
    rows: list[Row] = []
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            log = make_log(Path(tmp) / f"log-{n}.jsonl", n)
            out = Path(tmp) / f"out-{n}.jsonl"
            mb, secs = peak_rss_mb(
                ["compare", str(log), *SPECS, "--format", "json", "-o", str(out), "--no-progress"]
            )
            with out.open("rb") as fh:  # the summary is the last line
                fh.seek(max(0, out.stat().st_size - 65536))
                summary = json.loads(fh.read().splitlines()[-1])
            assert summary["type"] == "summary" and summary["transcripts"] == n, summary
            peaks[n] = mb
            rows.append(
                Row(
                    "compare",
                    f"peak RSS, {n:,} transcripts (jobs 1)",
                    mb,
                    "MB",
                    detail={
                        "seconds": round(secs, 1),
                        "per_transcript_ms": round(secs / n * 1000, 3),
                        "differing": summary["differing"],
                    },
                )
            )
    small, big = sizes
    growth = peaks[big] / peaks[small]
    rows.append(
        Row(
            "compare",
            f"peak RSS growth {small:,} → {big:,} transcripts",
            growth,
            "x",
            target="< 1.15x (flat)",
            met=growth < 1.15,
            detail={"mb_small": round(peaks[small], 1), "mb_big": round(peaks[big], 1)},
        )
    )
    return rows


def _main() -> None:
    quick = "--quick" in sys.argv
    for r in run(quick):
        met = "" if r.met is None else (" ok" if r.met else " MISSED")
        print(f"{r.name}: {r.value:,.2f} {r.unit} {r.target}{met} {r.detail}")


if __name__ == "__main__":
    _main()

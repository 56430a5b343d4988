"""`parse --stream --json` over 1, 8 and 50 MB of hermes output: peak memory must not grow with it.

Each size runs `parsebridge parse --stream --json` (builtin hermes + qwen3, the
shape of tests/test_parse_cli.py: a reasoning block, then content lines with a
call every 20 lines) in a fresh interpreter, stdout to a file, and reads that
process's peak RSS from the kernel (`wait4` rusage). Flat means the 50 MB run
peaks within a few MB of the 1 MB run: deltas are printed as they come,
reasoning and content are spooled, and so are the calls (each call's span is
let go once its raw text is spooled: `release_calls`), so what stays in
memory is bounded by the largest call and chunk, not by the input. The ratios
are side by side (50 MB / 1 MB, 8 MB / 1 MB), with the growth in MB: a loaded
machine moves the seconds, not the peaks.

`python -m benchmarks.stream_memory [--quick] [--chunk-size N]` runs it alone
(`--quick`: 1 and 8 MB).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parsebridge.formats import hermes, think

from ._timing import Row

ARGS = [
    "parse",
    "--stream",
    "--json",
    "--tool-parser",
    "builtin:hermes",
    "--reasoning-parser",
    "builtin:qwen3",
    "--conventions",
    "lossless",
]
#: Characters per chunk: 4 is the command's default; larger chunks keep the 50 MB run to minutes.
CHUNK_SIZE = 64


def write_output(path: Path, size: int) -> Path:
    """A reasoning block, then content lines with a hermes call every 20 lines, to `size` bytes."""
    with path.open("w", encoding="utf-8") as fh:
        head = think.START + "let me think about this. " * 200 + think.END
        fh.write(head)
        written, i = len(head), 0
        while written < size:
            piece = f"Some content line {i}, ünïcode.\n" * 20
            piece += (
                hermes.START
                + f'{{"name": "f{i % 7}", "arguments": {{"a": {i}, "b": "x y"}}}}'
                + hermes.END
                + "\n"
            )
            fh.write(piece)
            written += len(piece.encode())
            i += 1
    return path


def peak_rss_mb(argv: list[str], out: Path) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of one fresh `python -m parsebridge ARGV` process, stdout to `out`."""
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "parsebridge", *argv], stdout=fh, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if code != 0:
        raise RuntimeError(f"parse failed ({code}): {err[-2000:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - start  # Linux: KiB


def run(quick: bool, chunk_size: int = CHUNK_SIZE) -> list[Row]:
    sizes = (1, 8) if quick else (1, 8, 50)
    rows: list[Row] = []
    peaks: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            src = write_output(Path(tmp) / f"out-{mb}.txt", mb << 20)
            peak, secs = peak_rss_mb([*ARGS, "--chunk-size", str(chunk_size), str(src)], Path(tmp) / "o.json")
            peaks[mb] = peak
            rows.append(
                Row(
                    "stream",
                    f"parse --stream --json peak RSS, {mb} MB of hermes output",
                    peak,
                    "MB",
                    detail={"seconds": round(secs, 1), "chunk_size": chunk_size},
                )
            )
    for big in sizes[1:]:
        growth = peaks[big] / peaks[1]
        rows.append(
            Row(
                "stream",
                f"peak RSS growth 1 → {big} MB",
                growth,
                "x",
                target="< 1.05x (flat)",
                met=growth < 1.05,
                detail={
                    "mb_1": round(peaks[1], 1),
                    f"mb_{big}": round(peaks[big], 1),
                    "growth_mb": round(peaks[big] - peaks[1], 2),
                },
            )
        )
    return rows


def _main() -> None:
    quick = "--quick" in sys.argv
    chunk = int(sys.argv[sys.argv.index("--chunk-size") + 1]) if "--chunk-size" in sys.argv else CHUNK_SIZE
    for r in run(quick, chunk):
        met = "" if r.met is None else (" ok" if r.met else " MISSED")
        print(f"{r.name}: {r.value:,.2f} {r.unit} {r.target}{met} {r.detail}", flush=True)


if __name__ == "__main__":
    _main()

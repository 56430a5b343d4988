"""The README's benchmark table and docs/benchmarks.md's results come from the runs' JSON, never by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RENDER = ROOT / "benchmarks" / "results-issue13-round5" / "render.py"


def test_benchmark_figures_match_the_runs() -> None:
    out = subprocess.run([sys.executable, str(RENDER), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr

"""The README's figure for how long the test command takes comes from a recorded run (tools/test_time.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_test_time_matches_the_recorded_run() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "test_time.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_failed_run_is_not_rendered() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import test_time

    run = {
        "ok": True,
        "cpus": 2,
        "wall_s": 161.4,
        "date": "2026-01-01",
        "commit": "abc",
        "load_average_start": 1.0,
    }
    assert "**2 min 41 s**" in test_time.sentence(run)
    with pytest.raises(SystemExit, match="failed"):
        test_time.sentence({**run, "ok": False})

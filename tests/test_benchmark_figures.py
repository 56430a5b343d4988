"""The README's benchmark table and docs/benchmarks.md's results come from the runs' JSON, never by hand."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RENDER = ROOT / "benchmarks" / "render_results.py"
RUN = ROOT / "benchmarks" / "results" / "2026-11-25-1448-hot-path"


def test_benchmark_figures_match_the_runs() -> None:
    out = subprocess.run([sys.executable, str(RENDER), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_served_backend_figures_match_their_run() -> None:
    """docs/benchmarks.md's dynamo:/smg: block is the stored run's (benchmarks/served.py --render)."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.served", "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, "stale: run python -m benchmarks.served --render\n" + out.stderr


def _render_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_bench_render", RENDER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_render_refuses_a_missing_or_empty_input(tmp_path: Path) -> None:
    """A missing JSON is an error naming the file, not a table of empty rows."""
    render = _render_module()
    with pytest.raises(SystemExit, match=r"missing input .*nope\.json"):
        render.load(tmp_path / "nope.json")
    (tmp_path / "empty.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(SystemExit, match="no rows"):
        render.load(tmp_path / "empty.json")
    assert render.load(tmp_path / "nope.json", optional=True) == {"rows": []}


def test_the_overhead_headline_mentions_an_earlier_pair_that_missed() -> None:
    import json

    here = RUN
    earlier = [json.loads((here / f"overhead-import-earlier-run{i}.json").read_text()) for i in (1, 2)]
    missed_any = any(
        r.get("met") is False for run in earlier for r in run["rows"] if r.get("section") == "overhead"
    )
    row = next(
        line for line in (ROOT / "README.md").read_text().splitlines() if "met on both runs by" in line
    )
    assert ("earlier pair of runs" in row) == missed_any


def test_the_overhead_spread_is_how_far_the_ratio_moves_between_halves() -> None:
    """The spread printed beside every overhead ratio: the median ratio on the even rounds against
    the one on the odd rounds (two runs of the same code, on the same machine)."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks._timing import Sample, median_ratio, spread
    finally:
        sys.path.remove(str(ROOT))
    steady = Sample("pb", [1.1, 1.1, 1.1, 1.1]), Sample("direct", [1.0, 1.0, 1.0, 1.0])
    assert spread(*steady) == pytest.approx(0.0) and median_ratio(*steady) == pytest.approx(1.1)
    # the odd rounds ran 20 % slower on the bridge side only: the ratio moves by 0.2
    noisy = Sample("pb", [1.0, 1.2, 1.0, 1.2]), Sample("direct", [1.0, 1.0, 1.0, 1.0])
    assert spread(*noisy) == pytest.approx(0.2)
    assert spread(Sample("pb", [1.0]), Sample("direct", [1.0])) != spread(*steady)  # NaN: one round

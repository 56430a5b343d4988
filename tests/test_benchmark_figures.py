"""docs/benchmarks.md's headline table and results come from the runs' JSON, never by hand."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RENDER = ROOT / "benchmarks" / "render_results.py"
RUN = ROOT / "benchmarks" / "results" / "2026-11-27-1900-processes"
#: The run before it, whose throughput and scaling files a test reuses.
BEFORE_RUN = ROOT / "benchmarks" / "results" / "2026-11-27-1625-hot-path"


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


TARGETS = {"one-shot": 10.0, "streamed": 15.0}


def _missed_on_median(run: dict) -> list[str]:  # type: ignore[type-arg]
    """The overhead figures of one run over target on the median ratio (what the pages judge)."""
    return [
        r["name"]
        for r in run["rows"]
        if r.get("section") == "overhead"
        and "ratio_median" in r["detail"]
        and (r["detail"]["ratio_median"] - 1) * 100 > TARGETS[r["detail"]["mode"]]
    ]


def test_the_overhead_headline_mentions_an_earlier_pair_that_missed() -> None:
    kept = [RUN / f"overhead-import-earlier-run{i}.json" for i in (1, 2)]
    earlier = [json.loads(path.read_text()) for path in kept if path.exists()]
    missed_any = any(_missed_on_median(run) for run in earlier)
    row = next(
        line
        for line in (ROOT / "docs" / "benchmarks.md").read_text().splitlines()
        if "bridge overhead over the framework called directly" in line
    )
    assert ("earlier pair of runs" in row) == missed_any


def test_the_pages_render_the_overhead_runs_on_medians_with_their_spread(tmp_path: Path) -> None:
    """A folder as the lead assembles it (two overhead runs that write the spread, throughput and
    scaling) renders the median of both runs, the spread and the figures met per run and on both."""
    render = _render_module()
    runs = ROOT / "benchmarks" / "results" / "2026-11-27-overhead-two-runs"
    for i in (1, 2):
        (tmp_path / f"overhead-import-run{i}.json").write_text((runs / f"overhead-run{i}.json").read_text())
    for name in ("throughput.json", "scaling-builtin.json", "narrative.md"):
        (tmp_path / name).write_text((BEFORE_RUN / name).read_text())
    render.HERE, render.BEFORE = tmp_path, BEFORE_RUN
    d = render.Runs()
    block, table = render.readme_block(d), render.overhead_table(d)
    pair = [json.loads((runs / f"overhead-run{i}.json").read_text()) for i in (1, 2)]
    n = sum(1 for r in pair[0]["rows"] if r["section"] == "overhead")
    met = [n - len(_missed_on_median(run)) for run in pair]
    both = n - len(set(_missed_on_median(pair[0])) | set(_missed_on_median(pair[1])))
    assert f"met by {met[0]}/{n} (run 1), {met[1]}/{n} (run 2), {both}/{n} on both" in block
    for name in {*_missed_on_median(pair[0]), *_missed_on_median(pair[1])}:
        assert f"`{name}`" in block
    spreads = [r["detail"]["spread"] * 100 for run in pair for r in run["rows"] if r["section"] == "overhead"]
    assert f"± {min(spreads):.1f}–{max(spreads):.1f} % spread" in block
    # these runs measured no import: the row says so instead of judging nothing
    assert "not measured in these runs" in block
    row = next(line for line in table.splitlines() if line.startswith("| vllm:deepseek_v3 streamed"))
    first = next(r for r in pair[0]["rows"] if r["name"] == "vllm:deepseek_v3 streamed overhead")
    assert (
        f"| {(first['detail']['ratio_median'] - 1) * 100:.1f} | {first['detail']['spread'] * 100:.1f} |"
        in row
    )


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


def _overhead_module():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT))
    try:
        import benchmarks.overhead as overhead
    finally:
        sys.path.remove(str(ROOT))
    return overhead


def _figure(pb: list[float], direct: list[float], mode: str = "one-shot") -> dict:  # type: ignore[type-arg]
    return {
        "family": "hermes",
        "mode": mode,
        "spec": "vllm:hermes",
        "transcripts": 6,
        "chunks": 258,
        "number": 10,
        "runs": {"pb": pb, "direct": direct},
    }


def test_an_overhead_figure_is_judged_on_the_median_process_with_the_spread_between_processes() -> None:
    """A full run times each figure in several fresh processes: the figure is the median of their
    median ratios, so one process that sits apart (a disturbed one) cannot decide it, and the
    spread is how far the ratio moves between them."""
    overhead = _overhead_module()
    processes = [
        _figure([1.05, 1.05, 1.05], [1.0, 1.0, 1.0]),
        _figure([1.20, 1.20, 1.20], [1.0, 1.0, 1.0]),  # the odd process out
        _figure([1.08, 1.08, 1.08], [1.0, 1.0, 1.0]),
    ]
    row = overhead.figure_row("vllm", processes, judge=True)
    assert row.value == pytest.approx(8.0) and row.met is True
    assert row.detail["spread"] == pytest.approx(0.15) and row.detail["spread_between"] == "processes"
    assert row.detail["process_ratios_median"] == pytest.approx([1.05, 1.20, 1.08])
    assert "±15.0 % spread between 3 processes (5.0, 20.0, 8.0 %)" in row.raw
    # one process (--quick): the spread is its even rounds against its odd ones, and nothing is judged
    single = overhead.figure_row("vllm", [_figure([1.0, 1.2, 1.0, 1.2], [1.0] * 4)], judge=False)
    assert single.detail["spread"] == pytest.approx(0.2) and single.met is None
    assert "between halves" in single.raw


def test_a_failed_worker_or_a_skipped_figure_is_a_row_that_says_why() -> None:
    overhead = _overhead_module()
    failed = overhead.backend_rows(
        "vllm", [[_figure([1.0], [1.0])], "worker exited 1: ImportError"], judge=True
    )
    assert [r.raw for r in failed] == ["worker exited 1: ImportError"]
    skipped = {"family": "qwen3", "skipped": "vllm has no parser for family 'qwen3'"}
    rows = overhead.backend_rows("vllm", [[_figure([1.1], [1.0]), skipped]] * 2, judge=True)
    assert rows[0].value == pytest.approx(10.0) and rows[1].raw == skipped["skipped"]
    # a family one process could not build at all, measured by another: one row, saying why
    built = [_figure([1.1], [1.0]), _figure([1.2], [1.0], mode="streamed")]
    for figure in built:
        figure["family"] = "qwen3"
    mixed = overhead.backend_rows("vllm", [[skipped], built], judge=True)
    assert [(r.name, r.raw) for r in mixed] == [("vllm:qwen3", skipped["skipped"])]

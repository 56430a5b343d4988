"""`compare --executor ray`: the same records (as a set) and the same summary as ``--jobs 1``.

The tests marked `ray` start a local Ray runtime (2 CPUs) and run where
Ray is installed (``tox -e ray``, ``pip install '.[ray]'``); the
missing-Ray error is tested everywhere, by hiding the module.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.cli import compare_command, main
from parsebridge.comparison import RayUnavailableError
from parsebridge.comparison import engine as compare_mod

HAVE_RAY = importlib.util.find_spec("ray") is not None


def needs_ray(test):  # type: ignore[no-untyped-def]
    """Marked `ray` (``tox -e ray`` runs ``-m ray``); skipped, saying why, where Ray is missing."""
    reason = "Ray is not installed (pip install '.[ray]'; tox -e ray)"
    for mark in (pytest.mark.ray, pytest.mark.skipif(not HAVE_RAY, reason=reason), pytest.mark.timeout(600)):
        test = mark(test)
    return test


HERE = Path(__file__).parent
P = "python:_compare_parsers:"
SPECS = [f"{P}Tagged", f"{P}LossyTagged", f"{P}NoArgs", f"{P}Boom"]
SPEC_ARGS = [a for s in SPECS for a in ("--tool-parser", s)]
CALL = '<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'
OUTPUTS = [
    f"Sure, let me check the weather for you now.{CALL}",
    "a plain answer",
    f"BOOM goes the parser {CALL}",
    f"{CALL} and then some text after the call",
]


def _lines(text: str) -> list[dict]:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def _write(path: Path, start: int, n: int) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:  # type: ignore[operator]
        for i in range(start, start + n):
            fh.write(json.dumps({"id": f"t{i:03d}", "output": OUTPUTS[i % len(OUTPUTS)]}) + "\n")
    return path


@pytest.fixture
def log_parts(tmp_path: Path) -> list[Path]:
    """A log in three parts, the last one gzipped."""
    return [
        _write(tmp_path / "chat-1.jsonl", 0, 25),
        _write(tmp_path / "chat-2.jsonl", 25, 20),
        _write(tmp_path / "chat-3.jsonl.gz", 45, 25),
    ]


@pytest.fixture
def workers_import_test_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray workers are fresh processes: they find the tests' `python:` parsers through PYTHONPATH."""
    paths = [str(HERE), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    src = Path(pb.__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [*paths, str(src)] if p))


def _records_and_summary(path: Path) -> tuple[set[str], dict]:
    """The transcript records (as a set: Ray may finish them in any order) and the summary; the
    `run` line that heads the output goes in with the records, so its settings are compared too."""
    objs = _lines(path.read_text(encoding="utf-8"))
    assert objs[0]["type"] == "run" and all(o["type"] != "run" for o in objs[1:])
    summary = objs.pop()
    assert summary["type"] == "summary"
    summary.pop("elapsed_s")
    return {json.dumps(o, sort_keys=True) for o in objs}, summary


# ---------------------------------------------------------------- everywhere: Ray missing


def test_missing_ray_is_a_typed_error_with_the_install_command(
    tmp_path: Path, log_parts: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    out = tmp_path / "out.jsonl"
    argv = [
        "compare",
        *map(str, log_parts),
        *SPEC_ARGS,
        "--format",
        "json",
        "-o",
        str(out),
        "--executor",
        "ray",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pip install '.[ray]'" in err and "Traceback" not in err
    assert not out.exists()  # failed before any output was opened
    with pytest.raises(RayUnavailableError, match=r"pip install '\.\[ray\]'"):
        pb.compare("text", SPECS, executor="ray")
    with pytest.raises(pb.ParsebridgeError, match="unknown executor"):
        pb.compare("text", SPECS, executor="dask")


def test_address_needs_the_ray_executor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--text", "text", *SPEC_ARGS, "--address", "auto"]) == 2
    assert "--executor ray" in capsys.readouterr().err


def test_globs_and_gzip_read_like_plain_files(tmp_path: Path, log_parts: list[Path]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for p in log_parts:
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        (plain / p.name.removesuffix(".gz")).write_bytes(data)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    args = [*SPEC_ARGS, "--format", "json", "--no-progress", "-o"]
    assert main(["compare", str(tmp_path / "chat-*.jsonl*"), *args, str(a)]) == 0
    assert main(["compare", *map(str, sorted(plain.iterdir())), *args, str(b)]) == 0
    assert _records_and_summary(a) == _records_and_summary(b)
    assert _records_and_summary(a)[1]["transcripts"] == 70


def test_glob_matching_nothing_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "none-*.jsonl.gz"), *SPEC_ARGS]) == 2
    assert "no file matches" in capsys.readouterr().err


# ---------------------------------------------------------------- on a local Ray runtime


@needs_ray
@pytest.mark.usefixtures("workers_import_test_parsers")
@pytest.mark.parametrize("unordered", [False, True], ids=["ordered", "unordered"])
def test_ray_gives_the_records_and_summary_of_jobs_1(
    tmp_path: Path, log_parts: list[Path], unordered: bool
) -> None:
    local, ray = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    args = [*map(str, log_parts), *SPEC_ARGS, "--format", "json", "--no-progress", "-o"]
    assert main(["compare", *args, str(local), "--jobs", "1"]) == 0
    extra = ["--unordered"] if unordered else []
    assert main(["compare", *args, str(ray), "--executor", "ray", "--jobs", "2", *extra]) == 0
    records, summary = _records_and_summary(ray)
    want_records, want_summary = _records_and_summary(local)
    assert len(records) == 1 + 70 and records == want_records  # the run line and 70 transcripts
    assert summary == want_summary
    assert summary["differing"] > 0 and any(s["errors"] for s in summary["specs"])  # not a trivial log


@needs_ray
@pytest.mark.usefixtures("workers_import_test_parsers")
def test_resume_with_ray(tmp_path: Path, log_parts: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    local, out = tmp_path / "local.jsonl", tmp_path / "out.jsonl"
    base = [*map(str, log_parts), *SPEC_ARGS, "--format", "json", "--no-progress", "-o"]
    assert main(["compare", *base, str(local)]) == 0
    real = compare_mod.run_comparisons

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        for i, item in enumerate(real(*args, **kwargs)):
            if i == 30:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(compare_command, "run_comparisons", interrupted)
    ray_args = [*base, str(out), "--executor", "ray", "--jobs", "2"]
    assert main(["compare", *ray_args]) == 130
    assert len(_lines(out.read_text())) == 31  # the run's settings, 30 records
    monkeypatch.setattr(compare_command, "run_comparisons", real)
    assert main(["compare", *ray_args, "--resume", "--unordered"]) == 0
    records, summary = _records_and_summary(out)
    want_records, want_summary = _records_and_summary(local)
    assert records == want_records
    assert summary.pop("skipped") == 30 and want_summary.pop("skipped") == 0
    assert summary == want_summary


@needs_ray
@pytest.mark.usefixtures("workers_import_test_parsers")
def test_python_api_on_an_existing_cluster(log_parts: list[Path]) -> None:
    """`pb.compare(..., executor="ray", address=...)` on a cluster started apart (as `ray start --head`)."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "object_store_memory": 100 << 20})
    try:
        want = pb.compare(log_parts, SPECS)
        got = pb.compare(log_parts, SPECS, executor="ray", jobs=2, address=cluster.address)
    finally:
        cluster.shutdown()
    assert [c.model_dump() for c in got.comparisons] == [c.model_dump() for c in want.comparisons]
    assert got.summary.model_dump(exclude={"elapsed_s"}) == want.summary.model_dump(exclude={"elapsed_s"})

"""`parsebridge conformance`: exit codes, report files, explicit specs and family runs."""

from __future__ import annotations

import json

import pytest

from parsebridge.cli import main
from parsebridge.conformance import DEFAULT_CHUNKINGS

TRANSCRIPT = {
    "id": "toy-hermes",
    "family": "hermes",
    "output": 'Hi <call>{"name": "f", "arguments": {"a": 1}}</call>',
    "expected": {"content": "Hi", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
}


@pytest.fixture
def tfile(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(TRANSCRIPT) + "\n")
    return str(p)


def run(*args):
    return main(["conformance", "-q", *args])


def test_pass_exits_zero_even_strict_and_writes_reports(tfile, tmp_path, capsys):
    rep = tmp_path / "rep"
    assert (
        run(
            "--transcripts",
            tfile,
            "--tool-parser",
            "python:_confparsers:Good",
            "--strict",
            "--report",
            str(rep),
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "family × backend" in out and "wall" in out
    data = json.loads((rep / "report.json").read_text())
    assert {r["status"] for r in data["results"]} == {"pass"}
    assert data["backends"] == {"python": data["parsebridge"]}
    assert (rep / "report.md").exists() and (rep / "report.html").exists()
    assert data["timing"]["wall_s"] > 0


def test_fail_exits_one_only_with_strict(tfile):
    args = ("--transcripts", tfile, "--tool-parser", "python:_confparsers:WrongName")
    assert run(*args) == 0
    assert run(*args, "--strict") == 1


def test_error_exits_one_with_strict(tfile):
    assert run("--transcripts", tfile, "--tool-parser", "python:_confparsers:Raises", "--strict") == 1


def test_divergence_does_not_fail_strict(tfile):
    assert run("--transcripts", tfile, "--tool-parser", "python:_confparsers:TwoIds", "--strict") == 0


def test_usage_errors_exit_two(tfile):
    assert (
        run("--transcripts", tfile, "--tool-parser", "python:_confparsers:Good", "--chunking", "bogus") == 2
    )
    assert run("--family", "no_such_family") == 2
    assert (
        run("--transcripts", tfile, "--backend", "builtin", "--tool-parser", "python:_confparsers:Good") == 2
    )


def test_strict_with_nothing_to_run_fails(tfile):
    assert run("--transcripts", tfile, "--kind", "reasoning", "--strict") == 1


def test_empty_transcripts_file_is_a_usage_error(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert run("--transcripts", str(empty), "--strict") == 2
    assert "empty.jsonl: no transcripts in it" in capsys.readouterr().err


def test_family_run_on_a_toy_backend(toy_backends, toy_table, tmp_path):
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({**TRANSCRIPT, "id": "toy", "family": "toycall"}) + "\n")
    rep = tmp_path / "rep"
    assert (
        run(
            "--transcripts",
            str(p),
            "--backend",
            "toyfw",
            "--chunking",
            "oneshot,char",
            "--report",
            str(rep),
            "--strict",
        )
        == 0
    )
    data = json.loads((rep / "report.json").read_text())
    statuses = {(r["backend"], r["chunking"]): r["status"] for r in data["results"]}
    assert statuses == {
        ("toyfw", "oneshot"): "pass",
        ("toyfw", "char"): "pass",
    }
    assert data["backends"] == {"toyfw": "9.9.9"}
    assert data["parsers"]["toyfw"]["tool"] == ["good", "incremental", "loses", "raises", "two_ids"]


def test_help_documents_exit_status(capsys):
    with pytest.raises(SystemExit):
        main(["conformance", "--help"])
    out = capsys.readouterr().out
    assert "exit status" in out and "--strict" in out


def _rows(path):
    data = json.loads(path.read_text())
    return [{k: v for k, v in r.items() if k not in ("elapsed_ms", "observed")} for r in data["results"]]


def test_jobs_do_not_change_the_report(tmp_path):
    p = tmp_path / "many.jsonl"
    p.write_text(
        "".join(
            json.dumps({**TRANSCRIPT, "id": f"t{i}", "output": TRANSCRIPT["output"] * (i + 1)}) + "\n"
            for i in range(6)
        )
    )
    common = ("--transcripts", str(p), "--tool-parser", "python:_confparsers:LosesContentInBigChunks")
    assert run(*common, "--jobs", "1", "--report", str(tmp_path / "one")) == 0
    assert run(*common, "--jobs", "3", "--report", str(tmp_path / "three")) == 0
    one, three = _rows(tmp_path / "one" / "report.json"), _rows(tmp_path / "three" / "report.json")
    assert one == three and len(one) == 6 * len(DEFAULT_CHUNKINGS)
    assert json.loads((tmp_path / "three" / "report.json").read_text())["timing"]["jobs"] == 3
    assert run(*common, "--jobs", "zero") == 2


def test_diff_subcommand_is_wired(tfile, tmp_path, capsys):
    common = ("--transcripts", tfile, "--chunking", "oneshot")
    assert run(*common, "--tool-parser", "python:_confparsers:Good", "--report", str(tmp_path / "a")) == 0
    assert (
        run(*common, "--tool-parser", "python:_confparsers:WrongName", "--report", str(tmp_path / "b")) == 0
    )
    capsys.readouterr()
    assert main(["conformance", "diff", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"]) == 0
    assert "regressed" in capsys.readouterr().out


# ---------------------------------------------------------------- backends named on the command line


def test_a_named_backend_that_is_not_installed_is_a_usage_error(toy_backends, toy_table, tmp_path, capsys):
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({"id": "toy", "family": "toycall", "output": "Hi"}) + "\n")
    code = main(["conformance", "-q", "--transcripts", str(p), "--backend", "toyfw,notinstalled"])
    assert code == 2  # like `compare --backends toyfw,notinstalled`, not a run of "unsupported" rows
    err = capsys.readouterr().err
    assert "backend 'notinstalled' needs" in err and "pip install surely-not-installed" in err


def test_backend_names_are_case_insensitive_and_shown_canonical(toy_backends, toy_table, tmp_path, capsys):
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({"id": "toy", "family": "toycall", "output": "Hi"}) + "\n")
    rep = tmp_path / "rep"
    code = main(["conformance", "-q", "--transcripts", str(p), "--backend", "TOYFW", "--report", str(rep)])
    assert code == 0
    assert "TOYFW" not in capsys.readouterr().out
    data = json.loads((rep / "report.json").read_text())
    assert list(data["backends"]) == ["toyfw"] and {r["backend"] for r in data["results"]} == {"toyfw"}


def test_a_framework_that_raises_on_import_is_run_and_reported_not_dropped(
    toy_backends, toy_table, tmp_path, monkeypatch
):
    """Which backends run is decided without importing a framework (the imports happen in the run's
    stages, `parallel`): one that is installed but raises on import runs in a default run too, and
    each of its results is an error saying why; the report lists it as unavailable with the reason."""
    from parsebridge.conformance import run_output

    monkeypatch.setattr(run_output, "DEFAULT_BACKENDS", ("toyfw", "toybroken"))
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({**TRANSCRIPT, "id": "toy", "family": "toycall"}) + "\n")
    rep = tmp_path / "rep"
    args = ("--transcripts", str(p), "--chunking", "oneshot,token", "--report", str(rep))
    assert run(*args) == 0
    data = json.loads((rep / "report.json").read_text())
    rows = {(r["backend"], r["chunking"]): r for r in data["results"]}
    assert {k: r["status"] for k, r in rows.items()} == {
        ("toyfw", "oneshot"): "pass",
        ("toyfw", "token"): "pass",
        ("toybroken", "oneshot"): "error",
        ("toybroken", "token"): "error",
    }
    assert "libfoo.so" in rows[("toybroken", "oneshot")]["detail"]
    assert "libfoo.so" in data["unavailable"]["toybroken"] and "toybroken" not in data["parsers"]
    assert run(*args, "--strict") == 1

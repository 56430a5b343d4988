"""compare's output files (``-o``, ``--summary``) never destroy an input, and ``--summary`` is
written whatever the format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main

LOG = "".join(
    json.dumps({"id": f"r{i}", "family": "hermes", "output": out}) + "\n"
    for i, out in enumerate(['Sure.<tool_call>{"name": "f", "arguments": {}}</tool_call>', "No tool."], 1)
)
RUN = ["--backends", "builtin", "--no-progress"]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text(LOG, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "extra",
    [
        ["--format", "json"],
        ["--format", "json", "--resume"],
        ["--format", "html"],
        ["--format", "table"],
    ],
)
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(
    log: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(log), *RUN, *extra, "-o", str(log)]) == 2
    err = capsys.readouterr().err
    assert f"--output {log} is the input {log}" in err and "no transcripts" not in err
    assert log.read_text(encoding="utf-8") == LOG


def test_the_same_file_under_another_name_is_the_same_input(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    (tmp_path / "sub").mkdir()
    other_name = tmp_path / "sub" / ".." / "log.jsonl"
    assert main(["compare", str(link), *RUN, "--format", "json", "-o", str(other_name)]) == 2
    assert main(["compare", str(tmp_path / "*.jsonl"), *RUN, "--format", "json", "-o", str(log)]) == 2
    assert main(["compare", str(tmp_path), *RUN, "--format", "json", "-o", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.count("is the input") == 3  # a directory: its file is named
    assert log.read_text(encoding="utf-8") == LOG


def test_summary_may_not_be_an_input_or_the_output(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert main(["compare", str(log), *RUN, "--format", "json", "-o", str(out), "--summary", str(log)]) == 2
    assert main(["compare", str(log), *RUN, "--format", "json", "-o", str(out), "--summary", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--summary {log} is the input {log}" in err
    assert "--output and --summary are the same file" in err
    assert log.read_text(encoding="utf-8") == LOG and not out.exists()


@pytest.mark.parametrize("fmt", ["table", "html", "json"])
def test_summary_is_written_whatever_the_format(
    log: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "s.json"
    assert main(["compare", str(log), *RUN, "--format", fmt, "--summary", str(summary)]) == 0
    got = json.loads(summary.read_text(encoding="utf-8"))
    assert got["type"] == "summary" and got["transcripts"] == 2
    out = capsys.readouterr().out
    if fmt == "json":  # the summary went to its file, not into the records
        assert [json.loads(x)["type"] for x in out.splitlines()] == ["run", "transcript", "transcript"]
    else:
        assert "r1" in out


@pytest.mark.parametrize("fmt", ["json", "table", "html"])
def test_output_dash_is_standard_output(
    log: Path, fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o -` wrote a file named "-" in the current folder (and said `wrote … to -`), where an
    input `-` is standard input."""
    monkeypatch.chdir(log.parent)
    assert main(["compare", str(log), *RUN, "--format", fmt, "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert not (log.parent / "-").exists()
    assert "r1" in out and ("<html" in out if fmt == "html" else True)


def test_summary_dash_is_refused_before_anything_runs(
    log: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(log.parent)
    assert main(["compare", str(log), *RUN, "--summary", "-"]) == 2
    assert "--summary takes a file" in capsys.readouterr().err
    assert not (log.parent / "-").exists()


@pytest.mark.parametrize(
    ("option", "fmt", "where", "said"),
    [
        ("-o", "table", "log.jsonl/out.txt", "{d}/log.jsonl is a file, not a folder"),
        ("--summary", "table", "log.jsonl/new/summary.json", "{d}/log.jsonl is a file, not a folder"),
        ("-o", "html", ".", " is a directory, not a file"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_run(
    log: Path, option: str, fmt: str, where: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table, page or summary file is written whole at the end: a folder on its path that is a
    file (or the path a folder) was found only then, after the whole run, naming a temporary file
    (`error: …/new/.out.html.1234-ab12.tmp: No such file or directory`)."""
    target = str(log.parent / where)
    assert main(["compare", str(log), *RUN, "--format", fmt, option, target]) == 2
    captured = capsys.readouterr()
    assert said.format(d=log.parent) in captured.err and ".tmp" not in captured.err
    assert captured.out == ""  # refused before anything was compared or shown


@pytest.mark.parametrize("fmt", ["json", "html", "table"])
def test_an_output_in_folders_that_do_not_exist_makes_them(
    log: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o newdir/x.json`` was refused ('the folder newdir does not exist') where ``conformance
    --report`` and ``conformance diff --out`` make their folders: now compare makes them too, for
    ``-o`` and ``--summary``, in every format."""
    out = log.parent / "new" / "deeper" / f"out.{fmt}"
    summary = log.parent / "other" / "summary.json"
    assert main(["compare", str(log), *RUN, "--format", fmt, "-o", str(out), "--summary", str(summary)]) == 0
    assert "r1" in out.read_text(encoding="utf-8")
    assert json.loads(summary.read_text(encoding="utf-8"))["type"] == "summary"
    capsys.readouterr()

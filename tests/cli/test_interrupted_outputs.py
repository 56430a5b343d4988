"""Ctrl-C after `conformance` printed its results (the round trip, the report) says what was and was
not written and exits 130; every report file, and compare's whole-file outputs, is the old file or
the complete new one, never half of one."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from _cli_run import SRC, run

from parsebridge.cli import compare_command, conformance_run, main
from parsebridge.comparison import render
from parsebridge.conformance import report
from parsebridge.terminal import write_whole

RUN = ["conformance", "-q", "--backend", "builtin", "--family", "hermes", "--chunking", "oneshot"]
OLD = "from an earlier run\n"


def _ctrl_c(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


@pytest.fixture
def earlier(tmp_path: Path) -> Path:
    """A report folder holding an earlier run's three files."""
    folder = tmp_path / "rep"
    folder.mkdir()
    for name in ("report.json", "report.md", "report.html"):
        (folder / name).write_text(OLD, encoding="utf-8")
    return folder


def _left(folder: Path) -> dict[str, str]:
    """Every file in `folder` (temporary ones too) and its text."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def test_ctrl_c_while_a_report_file_lands_names_what_was_written(
    earlier: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real, calls = os.replace, []

    def second_is_interrupted(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(os, "replace", second_is_interrupted)
    assert main([*RUN, "--roundtrip", "0", "--report", str(earlier)]) == 130
    out, err = capsys.readouterr()
    assert "tool:hermes" in out  # the table was printed before
    assert err.strip().splitlines() == [
        f"interrupted while writing the report (after the results table); wrote report.json to {earlier}; "
        "not report.md, report.html (any from an earlier run are left as they were)"
    ]
    left = _left(earlier)
    assert list(left) == ["report.html", "report.json", "report.md"]  # no temporary file stays
    assert json.loads(left["report.json"])["summary"]["total"] > 0  # the new one, whole
    assert left["report.md"] == left["report.html"] == OLD  # the old ones, untouched


def test_ctrl_c_while_the_report_renders_leaves_every_file_as_it_was(
    earlier: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report, "render_markdown", _ctrl_c)
    assert main([*RUN, "--roundtrip", "0", "--report", str(earlier)]) == 130
    assert capsys.readouterr().err.strip() == (
        "interrupted while writing the report (after the results table); no report file was written to "
        f"{earlier} (any from an earlier run are left as they were)"
    )
    assert _left(earlier) == {name: OLD for name in ("report.html", "report.json", "report.md")}


def test_ctrl_c_during_the_round_trip_says_so_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(conformance_run, "run_roundtrip", _ctrl_c)
    assert main([*RUN, "--roundtrip", "2", "--report", str(tmp_path / "rep")]) == 130
    out, err = capsys.readouterr()
    assert "tool:hermes" in out
    assert err.strip() == (
        "interrupted while running the round trip (after the results table); no report file was written "
        f"to {tmp_path / 'rep'} (any from an earlier run are left as they were)"
    )
    assert not (tmp_path / "rep").exists()


def test_ctrl_c_without_a_report_says_none_was_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(conformance_run, "run_roundtrip", _ctrl_c)
    assert main([*RUN, "--roundtrip", "2"]) == 130
    assert capsys.readouterr().err.strip() == (
        "interrupted while running the round trip (after the results table); no report was asked for "
        "(--report DIR), so no file was written"
    )


def _one_transcript_log(folder: Path) -> Path:
    log = folder / "log.jsonl"
    log.write_text(
        json.dumps({"id": "r1", "family": "hermes", "output": "No tool."}) + "\n", encoding="utf-8"
    )
    return log


def _compare(log: Path) -> list[str]:
    return ["compare", str(log), "--backends", "builtin", "--no-progress"]


@pytest.mark.parametrize("option", ["--summary", "--output"])
def test_compare_whole_file_outputs_are_the_old_file_or_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    log = _one_transcript_log(tmp_path)
    target = tmp_path / "out"
    target.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "replace", _ctrl_c)  # the moment the new file would land
    assert main([*_compare(log), "--format", "html", option, str(target)]) == 130
    assert _left(tmp_path) == {"log.jsonl": log.read_text(encoding="utf-8"), "out": OLD}


def test_compare_ctrl_c_after_the_comparisons_says_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Interrupted while the table is written: the summary file is (it comes first), the table's
    file is the old one, and one line says so."""
    log = _one_transcript_log(tmp_path)
    summary, table = tmp_path / "summary.json", tmp_path / "table.txt"
    table.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(render, "print_table", _ctrl_c)
    assert main([*_compare(log), "--summary", str(summary), "-o", str(table)]) == 130
    assert capsys.readouterr().err.strip() == (
        f"interrupted while showing the results of 1 transcript; wrote {summary}; {table} left as before"
    )
    assert json.loads(summary.read_text(encoding="utf-8"))["type"] == "summary"
    assert table.read_text(encoding="utf-8") == OLD


def test_a_whole_file_output_through_a_link_or_into_a_pipe(tmp_path: Path) -> None:
    """A link is followed (the file it names gets the text, the link stays a link); a named pipe
    (as ``-o /dev/stdout`` is) is written in place: replacing it would put a file where it was."""
    real = tmp_path / "real.html"
    real.write_text(OLD, encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    write_whole(link, "new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    write_whole(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "pipe", "real.html"]


def test_compare_writes_its_page_to_dev_stdout(tmp_path: Path) -> None:
    """``-o /dev/stdout`` (a link to the process's stdout, here a pipe) gets the page; it failed:
    the temporary file went beside the link's target, a pipe's name under /proc."""
    log = _one_transcript_log(tmp_path)
    p = run(*_compare(log), "--format", "html", "-o", "/dev/stdout", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("<!DOCTYPE html>") and "r1" in p.stdout


def test_ctrl_c_before_a_command_has_said_anything_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while compare or conformance started (reading the inputs, loading parsers: the first
    seconds of a run) exited 130 without a word."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(conformance_run, "_select_transcripts", _ctrl_c)
    assert main(RUN) == 130
    out, err = capsys.readouterr()
    assert (out, err) == ("", "interrupted (Ctrl-C)\n")
    monkeypatch.setattr(compare_command, "sources", _ctrl_c)
    assert main(["compare", "--bundled", "--family", "hermes", "--format", "json", "-o", "c.jsonl"]) == 130
    assert capsys.readouterr() == ("", "interrupted (Ctrl-C)\n")
    assert not Path("c.jsonl").exists()


def test_ctrl_c_during_the_run_is_said_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def three_then_ctrl_c(*args: Any, progress: Any, **kwargs: Any) -> Any:
        progress(3)
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(conformance_run, "run_units", three_then_ctrl_c)
    assert main(RUN) == 130
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert (
        len(lines) == 1 and lines[0].startswith("interrupted after 3 of ") and "nothing reported" in lines[0]
    )


def test_ctrl_c_while_the_modules_load_is_no_traceback(tmp_path: Path) -> None:
    """`python -m parsebridge` interrupted while it imports its modules printed a traceback (the
    import of pydantic is made to raise what Ctrl-C raises there)."""
    fake = tmp_path / "fake" / "pydantic"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise KeyboardInterrupt\n")
    p = run("list", cwd=tmp_path, PYTHONPATH=os.pathsep.join([str(tmp_path / "fake"), SRC]))
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "interrupted (Ctrl-C)\n")


@pytest.mark.parametrize("fmt", ["html", "table", "json"])
def test_an_interrupted_compare_says_what_its_outputs_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """A page or table -o was told to continue with --resume, which only continues json output
    (and refuses the rest): now it says the file was not written, and what --summary holds."""
    log = tmp_path / "log.jsonl"
    log.write_text("".join(f'{{"id": "t{i}", "family": "hermes", "output": "x"}}\n' for i in range(3)))
    real = compare_command.run_comparisons

    def one_then_ctrl_c(*args: Any, **kwargs: Any) -> Any:
        yield next(iter(real(*args, **kwargs)))
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_command, "run_comparisons", one_then_ctrl_c)
    out, summary = tmp_path / f"out.{fmt}", tmp_path / "s.json"
    args = [
        "compare",
        str(log),
        "--backends",
        "builtin",
        "--format",
        fmt,
        "-o",
        str(out),
        "--summary",
        str(summary),
    ]
    assert main(args) == 130
    err = capsys.readouterr().err.strip()
    said = "interrupted after 1 of 3 transcripts; "
    if fmt == "json":
        said += f"run the same command with --resume to continue {out}"
        assert [json.loads(line)["type"] for line in out.read_text().splitlines()] == ["run", "transcript"]
    else:
        said += f"{out} not written (left as it was)"
        assert not out.exists()
    assert err == said + f"; wrote the summary of those to {summary}"
    assert json.loads(summary.read_text())["complete"] is False

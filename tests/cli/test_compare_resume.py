"""compare --resume continues only its own run: a file of other lines, or a run made with other
options, is refused (exit 2) and left as it was; only a torn last line is ever dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main

LOG = "".join(
    json.dumps({"id": f"r{i}", "family": "hermes", "output": out}) + "\n"
    for i, out in enumerate(['Sure.<tool_call>{"name": "f", "arguments": {}}</tool_call>', "No.", "Yes."], 1)
)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text(LOG, encoding="utf-8")
    return path


def _compare(log: Path, out: Path, *extra: str) -> int:
    return main(["compare", str(log), "--format", "json", "-o", str(out), "--no-progress", *extra])


def _refused(log: Path, out: Path, *extra: str) -> None:
    """Resume is refused (exit 2); the output file's bytes are unchanged, no temporary file is left."""
    before = out.read_bytes()
    assert _compare(log, out, "--resume", *extra) == 2
    assert out.read_bytes() == before and not list(out.parent.glob("*.resume-tmp"))


def test_complete_lines_that_are_not_compare_records_are_refused_not_dropped(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "foreign.jsonl"
    out.write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    _refused(log, out, "--backends", "builtin")
    err = capsys.readouterr().err
    assert f"{out}:1: a line that is not a compare record" in err and "resume: dropped" not in err


def test_a_complete_line_that_is_not_json_is_refused_only_a_torn_last_line_is_dropped(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert _compare(log, out, "--backends", "builtin") == 0
    run, first, *_ = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text(run + "not json\n" + first, encoding="utf-8")
    _refused(log, out, "--backends", "builtin")
    assert f"{out}:2: a complete line that is not JSON" in capsys.readouterr().err
    out.write_text(run + first + '{"type": "transcript", "transcript": "r2", "res', encoding="utf-8")
    assert _compare(log, out, "--backends", "builtin", "--resume") == 0
    assert "dropped the torn last line" in capsys.readouterr().err
    types = [json.loads(x)["type"] for x in out.read_text(encoding="utf-8").splitlines()]
    assert types == ["run", "transcript", "transcript", "transcript", "summary"]


@pytest.mark.parametrize(
    ("first", "then", "named"),
    [
        (
            ["--chunking", "token"],
            [],
            "chunkings (modes): oneshot, token there, oneshot, token, token-5, token-20 here",
        ),
        ([], ["--tool-parser", "builtin:json"], "parsers: none there, builtin:json here"),  # hermes before
        (
            [],
            ["--backends", "builtin", "--conventions", "lossless"],
            "--conventions: servers there, lossless here",
        ),
        (
            [],
            ["--backends", "builtin", "--reasoning-started"],
            "--reasoning-started: not given there, given here",
        ),
        ([], ["--backends", "builtin", "--tools", "TOOLS"], "--tools definitions (SHA-256): none there, "),
    ],
)
def test_resume_with_other_settings_is_refused_naming_them(
    log: Path,
    tmp_path: Path,
    first: list[str],
    then: list[str],
    named: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": {}}}]))
    then = [str(tools) if a == "TOOLS" else a for a in then]
    out = tmp_path / "out.jsonl"
    assert _compare(log, out, "--backends", "builtin", *first) == 0
    capsys.readouterr()
    _refused(log, out, *(then or ["--backends", "builtin"]))
    err = capsys.readouterr().err
    assert f"{out} was made with other settings (" in err and named in err, err
    assert "nothing new to compare" not in err


def test_the_same_settings_resume(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    args = ["--backends", "builtin", "--chunking", "token", "--reasoning-started"]
    assert _compare(log, out, *args) == 0
    assert _compare(log, out, *args, "--resume") == 0
    assert "nothing new to compare: all 3 transcripts were already in" in capsys.readouterr().err


def test_an_output_without_recorded_settings_is_refused(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output of a parsebridge that did not record its settings: nothing to check them against."""
    out = tmp_path / "old.jsonl"
    assert _compare(log, out, "--backends", "builtin") == 0
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[1:3]), encoding="utf-8")  # the old format: records, no run line
    _refused(log, out, "--backends", "builtin")
    assert "starts without the line that records its run's settings" in capsys.readouterr().err


def test_an_empty_output_is_started_with_its_settings(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("", encoding="utf-8")  # stopped before its first comparison
    assert _compare(log, out, "--backends", "builtin", "--resume") == 0
    types = [json.loads(x)["type"] for x in out.read_text(encoding="utf-8").splitlines()]
    assert types == ["run", "transcript", "transcript", "transcript", "summary"]

"""Model text reaches the terminal with its control characters escaped (``\\x1b``), never acted on:
a transcript cannot recolour, retitle or clear the terminal through `conformance` or `compare`'s
tables and lines, nor is ``[bold]`` in it read as Rich markup; JSON output and report files keep
the text exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main

#: Colour, a window title ended by BEL, clear-screen, the C1 CSI (U+009B), a carriage return and
#: a DEL, around Rich markup: in the content, a call's name and arguments, and the transcript id.
OUTPUT = (
    "[bold red]hi[/] \x1b[31mRED\x1b]0;title\x07 \x1b[2J\x9b31m over\rwrite\x7f "
    '<tool_call>{"name": "f\x1b[1m", "arguments": {"a": "\x1b[5m"}}</tool_call>'
)
ID = "esc\x1b[31mid"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\x7f")
SHOWN = (
    "esc\\x1b[31mid",
    "[bold red]hi[/] \\x1b[31mRED\\x1b]0;title\\x07 \\x1b[2J\\x9b31m over\\rwrite\\x7f",
)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "esc.jsonl"
    record = {"id": ID, "family": "hermes", "output": OUTPUT, "expected": {"content": "no", "tool_calls": []}}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def _no_raw_controls(text: str) -> None:
    assert not [c for c in RAW if c in text], [c for c in RAW if c in text]


def test_the_compare_table_shows_control_characters_escaped_and_json_keeps_them(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = ["compare", str(log), "--backends", "builtin", "--no-progress", "--chunking", "token"]
    assert main(run) == 0
    out, err = capsys.readouterr()
    _no_raw_controls(out + err)
    for shown in SHOWN:
        assert shown in out
    assert "[bold red]hi[/]" in out  # literal, not read as markup
    assert main([*run, "--format", "json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (record,) = [r for r in records if r["type"] == "transcript"]
    assert record["transcript"] == ID  # JSON: every character as it was
    assert record["results"]["builtin:hermes"]["oneshot"]["content"] == OUTPUT


def test_conformance_lines_show_control_characters_escaped_and_the_report_keeps_them(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rep = tmp_path / "rep"
    args = ["conformance", "-q", "--transcripts", str(log), "--backend", "builtin", "--chunking", "oneshot"]
    assert main([*args, "--report", str(rep)]) == 0
    out, err = capsys.readouterr()
    _no_raw_controls(out + err)
    assert "fail builtin:hermes esc\\x1b[31mid [oneshot]" in out
    report = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    assert report["transcripts"][ID]["output"] == OUTPUT  # the file: every character as it was


def test_a_warning_quoting_a_transcript_id_escapes_it(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log.write_text(log.read_text(encoding="utf-8") * 2, encoding="utf-8")  # the id comes again
    args = ["conformance", "-q", "--transcripts", str(log), "--backend", "builtin", "--chunking", "oneshot"]
    assert main(args) == 0
    err = capsys.readouterr().err
    _no_raw_controls(err)
    assert "warning: esc\\x1b[31mid: duplicate id" in err


@pytest.mark.parametrize("repeat", [1, 20_000])  # a panel; past PANEL_MAX, written between two rules
def test_parse_shows_control_characters_escaped_at_any_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repeat: int
) -> None:
    out_file = tmp_path / "out.txt"
    out_file.write_text("Hi \x1b[2J there. " * repeat, encoding="utf-8")
    assert main(["parse", "--tool-parser", "builtin:hermes", str(out_file)]) == 0
    out = capsys.readouterr().out
    _no_raw_controls(out)
    assert out.count("Hi \\x1b[2J there.") == repeat


@pytest.mark.parametrize("calls", [1, 501])  # a table; past TABLE_MAX_ROWS, one line per call
def test_parse_shows_a_calls_name_and_invalid_arguments_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, calls: int
) -> None:
    """A parser that reports a call's arguments verbatim when they are not JSON (a framework's, a
    `python:` one): those arguments and the name reach the terminal escaped, in the table and in
    the one-line-per-call listing alike, and the listing keeps one line per call."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # python:_userparsers from tests/
    out_file = tmp_path / "out.txt"
    out_file.write_text("CALL f\x1b]0;title\x07 {\x1b[2J\tnot json\r\n" * calls, encoding="utf-8")
    assert main(["parse", "--tool-parser", "python:_userparsers:CallLine", str(out_file)]) == 0
    out = capsys.readouterr().out
    _no_raw_controls(out)
    assert out.count("f\\x1b]0;title\\x07") == calls
    assert out.count("\\x1b[2J") == calls
    if calls > 1:
        lines = [line for line in out.splitlines() if line.startswith(tuple("0123456789"))]
        assert len(lines) == calls and all(line.count("\t") == 3 for line in lines)


def test_text_that_reorders_or_breaks_the_line_unseen_is_shown_escaped(tmp_path: Path, capsys) -> None:
    """A right-to-left override (U+202E) shows the text after it in another order than it is read,
    an isolate (U+2066) likewise, and U+2028 breaks the line on some terminals: they reached the
    terminal raw while the C0/C1 controls were escaped."""
    out = tmp_path / "out.txt"
    out.write_text("pay \u202e0001$\u202c to \u2066bob\u2069\u2028done", encoding="utf-8")
    assert main(["parse", "--reasoning-parser", "builtin:qwen3", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "\\u202e0001$\\u202c" in shown and "\\u2066bob\\u2069\\u2028done" in shown, shown
    assert not any(c in shown for c in "\u202e\u202c\u2066\u2069\u2028")

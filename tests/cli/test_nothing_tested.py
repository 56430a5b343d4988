"""Runs that test nothing say so, and --strict fails them; JSON errors name their place once."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsebridge.cli import main


def test_conformance_strict_fails_when_nothing_was_tested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "mine.jsonl"
    log.write_text('{"id": "a", "output": "hi"}\n{"id": "b", "output": "yo"}\n', encoding="utf-8")
    args = ["conformance", "--transcripts", str(log), "--backend", "builtin", "--jobs", "1", "-q"]
    assert main([*args, "--strict"]) == 1
    assert "nothing was tested" in capsys.readouterr().err
    assert main(args) == 0  # without --strict the run is reported, and still said


def test_a_json_error_names_its_place_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad1.jsonl"
    bad.write_text('{"id": "a", "output": "x\n', encoding="utf-8")
    assert main(["compare", str(bad), "--tool-parser", "builtin:hermes"]) == 2
    err = capsys.readouterr().err
    assert "Unterminated string starting at line 1, column 23" in err and "at at" not in err
    tools = tmp_path / "tools.json"
    tools.write_text('[{"type": "function", "function": {"name": "f', encoding="utf-8")
    assert main(["compare", "--text", "hi", "--tool-parser", "builtin:hermes", "--tools", str(tools)]) == 2
    err = capsys.readouterr().err
    assert "Unterminated string starting at line 1" in err and "at at" not in err

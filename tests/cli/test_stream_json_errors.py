"""`parse --stream --json` writes its object as the stream goes; a failure part way (a parser that
raises under ``--on-error raise``, input that turns out not to be UTF-8) ends it with an ``error``
member, so stdout is one JSON object whatever happened, and the exit status is the failure's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main


def _parse(capsys: pytest.CaptureFixture[str], spec: str, path: Path, *extra: str) -> tuple[int, dict, str]:
    code = main(["parse", "--tool-parser", spec, "--stream", "--json", *extra, str(path)])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_a_parser_that_raises_mid_stream_ends_the_json_with_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "o.txt"
    path.write_text("hello there! more", encoding="utf-8")
    code, data, err = _parse(capsys, "python:_userparsers:ExplodesMidStream", path)
    assert code == 1
    assert data["deltas"] == [{"content": "hel"}, {"content": "lo t"}]  # what was shown before it failed
    message = "python:explodes_mid_stream raised in stream.feed: KeyError: 'bang'"
    assert data["error"] == {"type": "BackendError", "message": message}
    assert "result" not in data and "message" not in data
    assert message in err


def test_a_failure_at_the_end_of_the_stream_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "o.txt"
    path.write_text("ab?", encoding="utf-8")
    code, data, _err = _parse(capsys, "python:_userparsers:ExplodesAtEnd", path, "--chunk-size", "1")
    assert code == 1
    assert data["error"]["message"].endswith("raised in stream.flush: ValueError: end of stream")


def test_input_that_is_not_utf8_past_the_first_block_is_a_usage_error_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("parsebridge.cli.parse_command.READ_BLOCK", 4)  # the bad byte comes after deltas
    path = tmp_path / "o.txt"
    path.write_bytes(b"hello world \xff")
    code, data, _err = _parse(capsys, "builtin:hermes", path)
    assert code == 2
    assert data["deltas"] and data["error"]["type"] == "InputFileError"
    assert "not UTF-8 text (byte 0xff at offset 12" in data["error"]["message"]

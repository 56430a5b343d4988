"""`parsebridge parse` as a new user runs it (subprocess): byte-order marks, streamed results, memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import parsebridge as pb

SRC = str(Path(pb.__file__).resolve().parent.parent)
BOM = b"\xef\xbb\xbf"
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'


def pb_run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "parsebridge", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=timeout,
    )


# ---------------------------------------------------------------- a leading byte-order mark


@pytest.mark.parametrize("stream", [[], ["--stream"], ["--stream", "--chunk-size", "1"]])
def test_parse_drops_a_leading_bom(tmp_path: Path, stream: list[str]) -> None:
    (tmp_path / "o.txt").write_bytes(BOM + f"Hi {CALL}".encode())
    p = pb_run("parse", "--tool-parser", "builtin:hermes", "--json", *stream, "o.txt", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)["result"]
    assert result["content"] == "Hi " and result["tool_calls"][0]["name"] == "f"


def test_only_a_leading_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "o.txt").write_bytes(BOM + "a\ufeffb".encode())
    p = pb_run("parse", "--tool-parser", "builtin:hermes", "--json", "o.txt", cwd=tmp_path)
    assert json.loads(p.stdout)["result"]["content"] == "a\ufeffb"


def test_transcripts_with_a_bom_are_read(tmp_path: Path) -> None:
    from parsebridge.conformance.transcripts import iter_transcripts

    (tmp_path / "t.jsonl").write_bytes(BOM + b'{"output": "Hi"}\n')
    (tmp_path / "t.yaml").write_bytes(BOM + b"output: Hi\n")
    (tmp_path / "t.txt").write_bytes(BOM + b"Hi")
    for name in ("t.jsonl", "t.yaml", "t.txt"):
        assert [t.output for t in iter_transcripts(tmp_path / name)] == ["Hi"], name


def test_the_api_takes_text_as_given() -> None:
    """A BOM is a file's encoding signature; text handed to the API is data and is kept."""
    assert pb.get_tool_parser("builtin:hermes").parse("\ufeffHi").content == "\ufeffHi"

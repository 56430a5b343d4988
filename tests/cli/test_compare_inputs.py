"""compare's directory inputs: every file a named file could be read as transcripts from, in
subfolders too, and the files left out said on stderr."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from parsebridge.cli import main


def _line(tid: str) -> str:
    return json.dumps({"id": tid, "family": "hermes", "output": f"answer {tid}"}) + "\n"


def test_a_directory_reads_every_transcript_suffix_and_its_subfolders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "logs"
    (d / "sub" / "deeper").mkdir(parents=True)
    (d / "a.jsonl").write_text(_line("a"), encoding="utf-8")
    (d / "b.ndjson").write_text(_line("b"), encoding="utf-8")
    (d / "c.json").write_text(json.dumps([{"id": "c", "family": "hermes", "output": "x"}]), encoding="utf-8")
    (d / "d.yaml").write_text("- id: d\n  family: hermes\n  output: y\n", encoding="utf-8")
    (d / "empty.jsonl").write_text("", encoding="utf-8")
    with gzip.open(d / "sub" / "e.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(_line("e"))
    (d / "sub" / "deeper" / "f.jsonl").write_text(_line("f"), encoding="utf-8")
    (d / "notes.txt").write_text("not a transcript", encoding="utf-8")
    (d / "sub" / "tool.bin").write_bytes(b"\x7fELF\x00")
    assert main(["compare", str(d), "--backends", "builtin", "--format", "json", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(x) for x in out.splitlines()]
    assert [r["transcript"] for r in records if r["type"] == "transcript"] == [
        "a",
        "b",
        "c",
        "d",
        "f",
        "e",
    ]  # sub/deeper/ before sub/e.jsonl.gz
    assert err.splitlines() == [
        f"warning: {d}: skipped 2 files of another suffix (notes.txt, sub/tool.bin); a directory's "
        ".jsonl, .ndjson, .json, .yaml, .yml and .jsonl.gz files are read"
    ]


def test_a_directory_without_transcript_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert main(["compare", str(tmp_path), "--backends", "builtin"]) == 2
    assert f"{tmp_path}: no transcript files in this directory" in capsys.readouterr().err

"""compare's directory inputs (and conformance's ``--transcripts DIR``, read by the same rule): every
file a named file could be read as transcripts from, in subfolders too, and the files left out said
on stderr."""

from __future__ import annotations

import gzip
import json
import os
import threading
from pathlib import Path

import pytest
from _cli_run import run

from parsebridge.cli import main
from parsebridge.conformance import load_transcripts


def _line(tid: str) -> str:
    return json.dumps({"id": tid, "family": "hermes", "output": f"answer {tid}"}) + "\n"


def _logs(tmp_path: Path) -> Path:
    """A folder of transcripts in every suffix a directory input reads, and two other files."""
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
    return d


def _skipped(d: Path) -> str:
    return (
        f"warning: {d}: skipped 2 files of another suffix (notes.txt, sub/tool.bin); a directory's "
        ".jsonl, .ndjson, .json, .yaml, .yml and .jsonl.gz files are read"
    )


def test_a_directory_reads_every_transcript_suffix_and_its_subfolders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _logs(tmp_path)
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
    assert err.splitlines() == [_skipped(d)]


def test_conformance_reads_a_directory_as_compare_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _logs(tmp_path)
    rep = tmp_path / "rep"
    args = ["conformance", "-q", "--transcripts", str(d), "--backend", "builtin", "--chunking", "oneshot"]
    assert main([*args, "--report", str(rep)]) == 0
    report = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    assert sorted(report["transcripts"]) == ["a", "b", "c", "d", "e", "f"]  # subfolders, .ndjson, .json, .gz
    assert capsys.readouterr().err.splitlines() == [_skipped(d)]  # compare's warning, word for word


def test_conformance_reads_a_gzipped_log_named_on_its_own(tmp_path: Path) -> None:
    log = tmp_path / "chat-01.jsonl.gz"
    with gzip.open(log, "wt", encoding="utf-8") as fh:
        fh.write(_line("a") + _line("b"))
    rep = tmp_path / "rep"
    args = ["conformance", "-q", "--transcripts", str(log), "--backend", "builtin", "--chunking", "oneshot"]
    assert main([*args, "--report", str(rep)]) == 0
    assert sorted(json.loads((rep / "report.json").read_text(encoding="utf-8"))["transcripts"]) == ["a", "b"]


@pytest.mark.parametrize("damage", ["not gzip", "cut short"])
def test_compare_refuses_an_unreadable_gzip_log_as_conformance_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """compare counted a .gz log's lines before reading it, and the count let gzip's own error
    through: exit 1 and `error: BadGzipFile: …` / `EOFError: …`, the file unnamed; conformance
    named it and exited 2."""
    log = tmp_path / "chat-01.jsonl.gz"
    whole = gzip.compress((_line("a") * 2000).encode())
    log.write_bytes(b"plain text" if damage == "not gzip" else whole[: len(whole) // 2])
    for args in (
        ["compare", str(log), "--family", "hermes"],
        ["conformance", "-q", "--transcripts", str(log)],
    ):
        assert main([*args, "--backends" if args[0] == "compare" else "--backend", "builtin"]) == 2
        assert capsys.readouterr().err.startswith(f"error: {log}: not a readable gzip file: ")


def test_conformance_refuses_a_directory_without_transcript_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert main(["conformance", "-q", "--transcripts", str(tmp_path), "--backend", "builtin"]) == 2
    err = capsys.readouterr().err
    assert "skipped 1 file of another suffix (notes.txt)" in err
    assert f"{tmp_path}: no transcript files in this directory or its subfolders" in err


def test_a_directory_without_transcript_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert main(["compare", str(tmp_path), "--backends", "builtin"]) == 2
    assert f"{tmp_path}: no transcript files in this directory" in capsys.readouterr().err


def _fifo_with(tmp_path: Path, text: str) -> tuple[Path, threading.Thread]:
    """A named pipe whose writer sends `text` once (as ``<(zcat log.gz)`` gives compare a pipe)."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("w", encoding="utf-8") as fh:  # blocks until compare opens it
            fh.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return fifo, writer


def test_a_pipe_given_by_path_is_read_as_standard_input_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compare <(zcat log.jsonl.gz)``: the shell passes a pipe (/dev/fd/63), neither a file nor
    a directory, which was "no such file: /dev/fd/63"; it is read once, as ``-`` is."""
    fifo, writer = _fifo_with(tmp_path, _line("a") + _line("b"))
    code = main(["compare", str(fifo), "--backends", "builtin", "--format", "json"])
    writer.join(10)
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["transcript"] for r in rows if r["type"] == "transcript"] == ["a", "b"]


def test_a_raw_output_through_a_pipe_needs_a_family_as_standard_input_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo, writer = _fifo_with(tmp_path, "just an answer")
    assert main(["compare", str(fifo), "--backends", "builtin"]) == 2
    writer.join(10)
    assert f"{fifo} is a raw output, which names no family" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null on this system")
def test_an_empty_device_is_empty_not_missing(capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/null was "no such file: /dev/null"; it exists, and holds nothing to compare."""
    assert main(["compare", "/dev/null", "--backends", "builtin"]) == 2
    assert "/dev/null: empty (expected transcripts or one raw output)" in capsys.readouterr().err


def test_conformance_reads_a_pipe_given_by_path(tmp_path: Path) -> None:
    """``conformance --transcripts <(zcat log.jsonl.gz)``: a pipe has no size, so it was "no
    transcripts in it (empty file …)" after its text had been read as one raw output."""
    fifo, writer = _fifo_with(tmp_path, _line("a") + _line("b"))
    rep = tmp_path / "rep"
    args = ["conformance", "-q", "--transcripts", str(fifo), "--backend", "builtin", "--chunking", "oneshot"]
    assert main([*args, "--report", str(rep)]) == 0
    writer.join(10)
    assert sorted(json.loads((rep / "report.json").read_text(encoding="utf-8"))["transcripts"]) == ["a", "b"]


RAW_LINE_ENDS = "Windows line\r\nold Mac line\rlast line\n"


def _content(out: str) -> str:
    (row,) = [json.loads(line) for line in out.splitlines() if '"type":"transcript"' in line]
    return str(row["results"]["builtin:hermes"]["oneshot"]["content"])


def test_a_raw_output_keeps_its_line_ends_from_a_file_and_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare text file (and a pipe given by path) was read with universal newlines: "\\r\\n" and
    "\\r" came back as "\\n", so compare and conformance read another output than `parse`, standard
    input and the model gave."""
    raw = tmp_path / "out.txt"
    raw.write_bytes(RAW_LINE_ENDS.encode())
    args = ["--tool-parser", "builtin:hermes", "--chunking", "token", "--format", "json"]
    assert main(["compare", str(raw), *args]) == 0
    assert _content(capsys.readouterr().out) == RAW_LINE_ENDS
    fifo, writer = _fifo_with(tmp_path, RAW_LINE_ENDS)
    assert main(["compare", str(fifo), *args]) == 0
    writer.join(10)
    assert _content(capsys.readouterr().out) == RAW_LINE_ENDS
    assert [t.output for t in load_transcripts([raw])] == [RAW_LINE_ENDS]


def test_conformance_reads_standard_input_as_compare_does(tmp_path: Path) -> None:
    """``… | parsebridge conformance --transcripts -`` said "-: no such file or directory", where
    ``compare -`` reads standard input: the same rules now (JSON Lines or one raw output, UTF-8)."""
    args = ("conformance", "-q", "--transcripts", "-", "--backend", "builtin", "--chunking", "oneshot")
    done = run(
        *args, "--report", str(tmp_path / "rep"), cwd=tmp_path, stdin=(_line("a") + _line("b")).encode()
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert sorted(report["transcripts"]) == ["a", "b"]
    assert run(*args, cwd=tmp_path, stdin=b"").returncode == 2
    refused = run(*args, cwd=tmp_path, stdin=b"\xff\xfe")
    assert (
        refused.returncode == 2
        and "<stdin>: not UTF-8 text (byte 0xff at offset 0, line 1)" in refused.stderr
    )

"""conformance's options checked before the run: a report folder that cannot be made, and a round
trip asked of a run that makes none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsebridge.cli import main


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text(
        json.dumps({"id": "r1", "family": "hermes", "output": "No tool."}) + "\n", encoding="utf-8"
    )
    return path


def test_a_report_folder_that_cannot_be_made_is_refused_before_the_run(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """conformance ran the whole suite, then failed making the folder: exit 1 with
    `FileExistsError: [Errno 17] File exists` (a file in the way), or exit 2 after the run."""
    for report, said in (
        (log, "is a file, not a folder"),
        (log / "sub", "is a file, so no folder can be made"),
    ):
        args = [
            "conformance",
            "-q",
            "--transcripts",
            str(log),
            "--backend",
            "builtin",
            "--report",
            str(report),
        ]
        assert main(args) == 2
        captured = capsys.readouterr()
        assert said in captured.err and captured.out == ""


@pytest.mark.parametrize(
    "others",
    [
        ["--tool-parser", "builtin:hermes"],
        ["--transcripts", "LOG"],
        ["--kind", "reasoning", "--family", "qwen3"],
    ],
)
def test_a_roundtrip_asked_of_a_run_that_makes_none_is_a_usage_error(
    log: Path, others: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--roundtrip 5` beside --tool-parser, --transcripts or --kind reasoning was ignored without a
    word (exit 0, no round trip); the default and --roundtrip 0 still run there."""
    others = [str(log) if o == "LOG" else o for o in others]
    base = ["conformance", "-q", "--chunking", "oneshot", *others]
    base += [] if "--tool-parser" in others else ["--backend", "builtin"]
    assert main([*base, "--roundtrip", "5"]) == 2
    assert "--roundtrip draws examples" in capsys.readouterr().err
    assert main([*base, "--roundtrip", "0"]) == 0
    assert main(base) == 0

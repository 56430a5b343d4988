"""The `UserWarning`s of `parsebridge.compare` (a record field no reading uses, a directory's files
of another suffix) point at the caller's line, where they named a line of
parsebridge/comparison/executors.py: the depth from the warning to the caller varies (a record's
warning is raised while an executor pulls the next transcript), so no fixed stacklevel fits."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import parsebridge as pb
from parsebridge.comparison import iter_compare

#: ``token_texts`` that do not join to the output: a record warning (`unused_token_texts`).
RECORD = {"id": "r1", "output": "hello", "token_texts": ["he", "LL", "o"]}


def _where(call: Callable[[], object]) -> list[tuple[str, str]]:
    """(file, message) of each `UserWarning` `call()` gives: the file is this one when the warning
    points at the caller's line (the lambda's, here)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    return [(w.filename, str(w.message)) for w in seen if w.category is UserWarning]


def test_a_record_warning_points_at_the_callers_line() -> None:
    for run in (
        lambda: pb.compare([RECORD], "builtin:hermes"),
        lambda: list(iter_compare([RECORD], "builtin:hermes")),
    ):
        ((filename, message),) = _where(run)
        assert "r1: token_texts not used" in message
        assert filename == __file__, filename


def test_a_directory_warning_points_at_the_callers_line(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(RECORD | {"token_texts": ["hel", "lo"]}) + "\n")
    (tmp_path / "notes.txt").write_text("x")
    ((filename, message),) = _where(lambda: pb.compare(tmp_path, "builtin:hermes"))
    assert "skipped 1 file of another suffix" in message
    assert filename == __file__, filename

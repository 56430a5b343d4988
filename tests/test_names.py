"""Files and folders are named by what they hold, never after a tracker item or a review round."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The project's own folders (a clone's .venv, .tox and build output are not the project).
FOLDERS = ("src", "tests", "benchmarks", "docs", "tools", "examples")
#: "issue13", "issue-31", "round2", "round_5", "pr12": a work item, not a content. "roundtrip" is content.
WORK_ITEM = re.compile(r"(?i)(?<![a-z])(?:issue|round|pr|ticket)[-_ ]?\d+")
SKIP = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def _names() -> list[Path]:
    out: list[Path] = []
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT)
            if SKIP.intersection(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts):
                continue
            out.append(rel)
    return out


def test_no_file_or_folder_is_named_after_a_work_item() -> None:
    bad = sorted(str(p) for p in _names() if WORK_ITEM.search(p.name))
    assert not bad, f"name these by what they hold: {bad}"


def test_the_rule_catches_work_items_and_spares_content() -> None:
    assert all(
        WORK_ITEM.search(n) for n in ("results-issue13", "test_cli_round2.py", "round_5", "issue-31", "pr12")
    )
    assert not any(WORK_ITEM.search(n) for n in ("test_roundtrip.py", "2026-11-25-1448-hot-path", "expr2"))

"""The error messages the docs quote are the ones the command prints (a new backend, a changed
suggestion: the page must follow). A console line ``$ parsebridge ARGS`` followed by a line that
starts with ``error:`` is run; ``...`` in the quoted line stands for any text. A comment
``# X not installed`` runs the line only where framework X is not installed."""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import parsebridge as pb

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SRC = str(Path(pb.__file__).resolve().parent.parent)


def _quoted() -> list[tuple[str, str, str]]:
    """(where, command line, quoted error) of every quoted error of every page."""
    out = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n, (line, after) in enumerate(itertools.pairwise(lines), 1):
            if line.startswith("$ parsebridge ") and after.startswith("error:"):
                out.append((f"{page.relative_to(ROOT).as_posix()}:{n}", line[2:], after))
    return out


def _pattern(quoted: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part) for part in quoted.split("...")) + r"\s*$", re.S)


def test_quoted_errors_are_found() -> None:
    assert len(_quoted()) >= 3


@pytest.mark.parametrize(("where", "command", "quoted"), _quoted(), ids=[q[0] for q in _quoted()])
def test_a_quoted_error_is_what_the_command_prints(
    where: str, command: str, quoted: str, tmp_path: Path
) -> None:
    line, _, comment = command.partition("#")
    missing = re.match(r"\s*(\w+) not installed", comment, re.I)
    if missing and importlib.util.find_spec(missing[1].lower()) is not None:
        pytest.skip(f"{where} shows the error without {missing[1]}, which is installed here")
    (tmp_path / "out.txt").write_text("Hi", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="1000")
    args = line.split()[1:]
    p = subprocess.run(
        [sys.executable, "-m", "parsebridge", *args], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    printed = " ".join(p.stderr.split())
    assert p.returncode == 2, (where, p.stdout, p.stderr)
    assert _pattern(" ".join(quoted.split())).match(printed), f"{where}: prints {printed!r}"

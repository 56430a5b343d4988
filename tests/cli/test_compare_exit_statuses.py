"""`parsebridge compare`'s exit statuses as its ``--help`` and docs/compare.md list them: each
path run through the real command, and the status it gave found, with what caused it, in both
lists. The help said a parser that raised exits 1 (it exits 0: the error is a reading, and 1
only with --fail-on-diff) and named none of --unordered's, --address's or --executor ray's
usage errors."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest
from _cli_run import SRC, run

DOC = Path(__file__).resolve().parents[2] / "docs" / "compare.md"
RAISES = """\
import parsebridge as pb


class Boom(pb.ToolParserBase):
    backend = "python"

    def parse(self, text):
        raise RuntimeError("boom")
"""


def _entries(text: str, heading: str) -> dict[int, str]:
    """The exit-status list after `heading`: each status and its text (joined, white space single)."""
    section = text.split(heading, 1)[1]
    out: dict[int, str] = {}
    for code, words in re.findall(
        r"^\s*[*-]?\s*`?(\d{1,3})`?[:\s]\s*(.*?)(?=^\s*[*-]?\s*`?\d{1,3}`?[:\s]|\Z)", section, re.S | re.M
    ):
        out[int(code)] = " ".join(words.split())
    return out


@functools.cache
def _help(_: object = None) -> dict[int, str]:
    """compare --help's list (run once: the argument is ignored)."""
    p = run("compare", "--help", cwd=Path.cwd())
    assert p.returncode == 0, p.stderr
    return _entries(p.stdout, "exit status:\n")


CASES = [
    (["--text", "hi", "--tool-parser", "builtin:hermes", "--unordered"], 2, "--unordered"),
    (["--text", "hi", "--tool-parser", "builtin:hermes", "--address", "auto"], 2, "--address"),
    (["--text", "hi", "--tool-parser", "python:boom:Boom"], 0, "raised"),
    (["--text", "hi", "--tool-parser", "python:boom:Boom", "--fail-on-diff"], 1, "raised"),
    (["--text", "hi", "--tool-parser", "builtin:hermes", "--unordered", "-j", "2"], 0, "done"),
]


@pytest.mark.parametrize(("args", "code", "named"), CASES, ids=lambda v: str(v)[:40])
def test_each_exit_status_is_listed_with_its_cause(
    tmp_path: Path, args: list[str], code: int, named: str
) -> None:
    (tmp_path / "boom.py").write_text(RAISES)
    p = run("compare", *args, cwd=tmp_path)
    assert p.returncode == code, (p.returncode, p.stderr)
    assert named in _help(tmp_path)[code]
    assert named in _entries(DOC.read_text(), "## Exit status\n")[code]


def test_a_parser_that_raised_is_not_listed_under_1_alone(tmp_path: Path) -> None:
    for entries in (_help(tmp_path), _entries(DOC.read_text(), "## Exit status\n")):
        assert "--fail-on-diff" in entries[1]
        assert "or a parser raised" not in entries[1]
    p = run("--help", cwd=tmp_path)  # the statuses every subcommand shares say which one exits 1
    assert "parse's parser raised" in _entries(p.stdout, "(every subcommand):\n")[1]


def test_the_ray_executor_that_cannot_run_is_listed_under_2(tmp_path: Path) -> None:
    """--executor ray where Ray cannot be imported (here made so whatever is installed: a `ray`
    package that raises ImportError comes first on the path): exit 2, listed."""
    fake = tmp_path / "fake" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no Ray here')\n")
    args = ["--text", "hi", "--tool-parser", "builtin:hermes", "--executor", "ray"]
    p = run("compare", *args, cwd=tmp_path, PYTHONPATH=os.pathsep.join([str(tmp_path / "fake"), SRC]))
    assert p.returncode == 2 and "needs Ray" in p.stderr, p.stderr
    assert "--executor ray" in _help(tmp_path)[2]
    assert "--executor ray" in _entries(DOC.read_text(), "## Exit status\n")[2]

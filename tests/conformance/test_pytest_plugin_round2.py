"""The README's pytest-plugin example as a user runs it: plain `pytest` in the folder holding my_parsers.py.

The `pytest` console script does not put the current folder on `sys.path`
(`python -m pytest` does); `python -P -m pytest` starts the same way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import parsebridge

README = Path(__file__).resolve().parents[2] / "README.md"
SRC = str(Path(parsebridge.__file__).resolve().parent.parent)


def _readme_module() -> str:
    """The README's ``# my_parsers.py`` block, as a user would save it."""
    blocks = re.findall(
        r"```python\n(# my_parsers\.py\n.*?)```", README.read_text(encoding="utf-8"), re.DOTALL
    )
    assert blocks, "README has no '# my_parsers.py' block"
    return blocks[0]


def _readme_command() -> list[str]:
    m = re.search(
        r"^\$ pytest (--parsebridge-spec python:my_parsers:\S+.*)$", README.read_text(), re.MULTILINE
    )
    assert m, "README has no pytest --parsebridge-spec example"
    return m.group(1).split()


def plain_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = SRC  # the package under test, never the user's folder
    cmd = [sys.executable, "-P", "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(300)
def test_the_readme_example_runs_in_the_folder_holding_the_parser(tmp_path):
    (tmp_path / "my_parsers.py").write_text(_readme_module(), encoding="utf-8")
    proc = plain_pytest(tmp_path, *_readme_command(), "--parsebridge-chunking", "oneshot")
    assert "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    assert proc.returncode in (0, 1) and re.search(r"\d+ (passed|failed)", proc.stdout), proc.stdout[-3000:]


@pytest.mark.timeout(300)
def test_the_readme_parser_passes_transcripts_in_its_own_format(tmp_path):
    (tmp_path / "my_parsers.py").write_text(_readme_module(), encoding="utf-8")
    t = {
        "id": "line-call",
        "family": "hermes",
        "output": 'Hi\nCALL get_time {"tz": "UTC"}\n',
        "expected": {"content": "Hi\n", "tool_calls": [{"name": "get_time", "arguments": {"tz": "UTC"}}]},
    }
    (tmp_path / "mine.jsonl").write_text(json.dumps(t) + "\n", encoding="utf-8")
    proc = plain_pytest(
        tmp_path,
        "--parsebridge-spec",
        "python:my_parsers:LineParser",
        "--parsebridge-transcripts",
        "mine.jsonl",
        "--parsebridge-chunking",
        "oneshot,char",
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "2 passed" in proc.stdout


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("python:nope:X", "ERROR: --parsebridge-spec: python:nope:X: cannot import module 'nope'"),
        (
            "python:my_parsers:Nope",
            "ERROR: --parsebridge-spec: python:my_parsers:Nope: module 'my_parsers' has no class",
        ),
        ("no_such_parser", "ERROR: --parsebridge-spec no_such_parser: backend 'builtin' has no tool parser"),
    ],
)
def test_a_bad_spec_is_one_clear_line(tmp_path, spec, says):
    (tmp_path / "my_parsers.py").write_text(_readme_module(), encoding="utf-8")
    proc = plain_pytest(tmp_path, "--parsebridge-spec", spec)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out[-3000:]  # pytest's usage error
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    errors = [ln for ln in out.splitlines() if ln.startswith("ERROR:")]
    assert len(errors) == 1 and errors[0].startswith(says), out[-3000:]

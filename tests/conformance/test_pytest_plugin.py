"""The pytest plugin, run in a subprocess the way a user runs it (`pytest --parsebridge-spec ...`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import parsebridge

HERE = Path(__file__).parent

TRANSCRIPTS = [
    {
        "id": "p-call",
        "family": "hermes",
        "output": 'Hi <call>{"name": "f", "arguments": {"a": 1}}</call> bye',
        "expected": {"content": "Hi  bye", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
    },
    {
        "id": "p-text",
        "family": "hermes",
        "output": "Just text, no call.",
        "expected": {"content": "Just text, no call."},
    },
    {
        "id": "p-doc",
        "family": "hermes",
        "output": 'Hi <call>{"name": "f", "arguments": {}}</call>',
        "expected": {"content": "Hi", "tool_calls": [{"name": "f", "arguments": {}}]},
        "known_divergences": [
            {"backend": "python", "classes": ["id_protocol"], "reason": "documented toy bug"}
        ],
    },
    {
        "id": "p-think",
        "family": "qwen3",
        "kind": "reasoning",
        "output": "<r>hm</r>4",
        "expected": {"reasoning": "hm", "content": "4"},
    },
]


def pytest_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    tfile = tmp_path / "t.jsonl"
    tfile.write_text("\n".join(json.dumps(t) for t in TRANSCRIPTS) + "\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [
        sys.executable,
        "-m",
        "pytest",  # the plugin loads through the package's pytest11 entry point, as for a user
        "-p",
        "no:cacheprovider",
        "-rA",
        "--parsebridge-transcripts",
        str(tfile),
        *args,
    ]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(300)
def test_a_good_parser_passes_every_generated_test(tmp_path):
    proc = pytest_run(
        tmp_path,
        "--parsebridge-spec",
        "python:_confparsers:Incremental",
        "--parsebridge-chunking",
        "oneshot,char,token-5",
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "9 passed" in proc.stdout
    assert "parsebridge[python:_confparsers:Incremental|p-call|char]" in proc.stdout


@pytest.mark.timeout(300)
def test_failures_show_the_differences_and_documented_ones_xfail(tmp_path):
    proc = pytest_run(
        tmp_path,
        "--parsebridge-spec",
        "python:_confparsers:TwoIds",
        "--parsebridge-spec",
        "python:_confparsers:Think",
        "--parsebridge-chunking",
        "oneshot,char",
    )
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "id_protocol [invariant]: call 0: id sent 2 times" in out
    assert "FAILED ::parsebridge[python:_confparsers:TwoIds|p-call|char]" in out
    assert "XFAIL ::parsebridge[python:_confparsers:TwoIds|p-doc|char]" in out and "documented toy bug" in out
    assert (
        "parsebridge[python:_confparsers:Think|p-think|char] PASSED" in out
        or "PASSED ::parsebridge[python:_confparsers:Think|p-think|char]" in out
    )
    assert "1 failed" in out and "1 xfailed" in out


@pytest.mark.timeout(300)
def test_allow_diverge_and_keyword_selection(tmp_path):
    proc = pytest_run(
        tmp_path,
        "--parsebridge-spec",
        "python:_confparsers:TwoIds",
        "--parsebridge-allow-diverge",
        "--parsebridge-chunking",
        "char",
        "-k",
        "p-call",
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 passed" in proc.stdout and "deselected" in proc.stdout


@pytest.mark.timeout(300)
def test_without_the_option_the_plugin_adds_nothing(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    proc = pytest_run(tmp_path)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-2000:]
    assert "parsebridge[" not in proc.stdout


# ---------------------------------------------------------------- docs/own-parsers.md's example, run with plain `pytest`
# The `pytest` console script does not put the current folder on `sys.path` (`python -m pytest`
# does); `python -P -m pytest` starts the same way, in the folder holding my_parsers.py.

README = Path(__file__).resolve().parents[2] / "docs" / "own-parsers.md"
SRC = str(Path(parsebridge.__file__).resolve().parent.parent)


def _readme_module() -> str:
    """docs/own-parsers.md's ``# my_parsers.py`` block, as a user would save it."""
    blocks = re.findall(
        r"```python\n(# my_parsers\.py\n.*?)```", README.read_text(encoding="utf-8"), re.DOTALL
    )
    assert blocks, "docs/own-parsers.md has no '# my_parsers.py' block"
    return blocks[0]


def _readme_command() -> list[str]:
    m = re.search(
        r"^\$ pytest (--parsebridge-spec python:my_parsers:\S+.*)$", README.read_text(), re.MULTILINE
    )
    assert m, "docs/own-parsers.md has no pytest --parsebridge-spec example"
    return m.group(1).split()


def test_the_page_says_which_extra_brings_pytest() -> None:
    """pytest is not a dependency of parsebridge: the page installs the `test` extra first."""
    text = README.read_text(encoding="utf-8")
    before = text[: text.index("$ pytest --parsebridge-spec")]
    assert "$ python3 -m pip install '.[test]'" in before[-400:]
    pyproject = tomllib.loads((README.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(d.startswith("pytest") for d in pyproject["project"]["optional-dependencies"]["test"])
    assert not any(d.startswith("pytest") for d in pyproject["project"]["dependencies"])


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


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        # a typo of a family ran no test at all and said nothing (exit 5, "no tests ran")
        (
            "--parsebridge-family",
            "hermez",
            "ERROR: --parsebridge-family: unknown family 'hermez'. Did you mean",
        ),
        # a missing file was pytest's INTERNALERROR with a FileNotFoundError traceback
        (
            "--parsebridge-transcripts",
            "nope.jsonl",
            "ERROR: --parsebridge-transcripts: nope.jsonl: no such file",
        ),
        # these were INTERNALERROR tracebacks (TranscriptError, UnicodeDecodeError), or for an
        # empty folder no test without a word
        (
            "--parsebridge-transcripts",
            "bad-record.jsonl",
            "ERROR: --parsebridge-transcripts: bad-record.jsonl:1: not a valid transcript: output:",
        ),
        (
            "--parsebridge-transcripts",
            "latin1.txt",
            "ERROR: --parsebridge-transcripts: latin1.txt: not UTF-8 text (byte 0xe9 at offset",
        ),
        (
            "--parsebridge-transcripts",
            "empty-folder",
            "ERROR: --parsebridge-transcripts: empty-folder: no transcript files in this directory",
        ),
        # an empty file ran as one transcript whose output is '' (11 passing tests), where
        # `conformance --transcripts` refuses it
        (
            "--parsebridge-transcripts",
            "empty.txt",
            "ERROR: --parsebridge-transcripts: empty.txt: no transcripts in it (empty file",
        ),
        ("--parsebridge-chunking", "tokn-5", "ERROR: --parsebridge-chunking: unknown chunking 'tokn-5'"),
        # an option given empty read as left out: every family, every default chunking
        ("--parsebridge-family", "", "ERROR: --parsebridge-family names nothing"),
        ("--parsebridge-chunking", " , ", "ERROR: --parsebridge-chunking names nothing"),
    ],
)
def test_a_bad_selection_is_one_clear_line(tmp_path, option, value, says):
    (tmp_path / "my_parsers.py").write_text(_readme_module(), encoding="utf-8")
    (tmp_path / "bad-record.jsonl").write_text('{"output": 5}\n', encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9".encode("latin-1"))
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "empty.txt").write_bytes(b"")
    proc = plain_pytest(tmp_path, "--parsebridge-spec", "python:my_parsers:LineParser", option, value)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out[-3000:]  # pytest's usage error
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    errors = [ln for ln in out.splitlines() if ln.startswith("ERROR:")]
    assert len(errors) == 1 and errors[0].startswith(says), out[-3000:]

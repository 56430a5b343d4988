"""The pytest plugin, run in a subprocess the way a user runs it (`pytest --parsebridge-spec ...`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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

"""The conformance run's worker pools in stages (`parallel`): a light backend's units run in workers
forked before a heavy framework is imported, the heavy one's in workers forked after, and the
report is the one a single process gives."""

from __future__ import annotations

import json
import os

import pytest

from parsebridge.cli import main
from parsebridge.conformance.parallel import _stages
from parsebridge.conformance.runner import Target
from parsebridge.lifecycle.pool import fork_available

TRANSCRIPTS = [
    {
        "id": f"toy-{i}",
        "family": "toycall",
        "output": 'Hi <call>{"name": "f", "arguments": {"a": ' + str(i) + "}}</call>",
        "expected": {"content": "Hi", "tool_calls": [{"name": "f", "arguments": {"a": i}}]},
    }
    for i in range(4)
]


def test_stages_go_lightest_import_first():
    units = [
        (Target.explicit(tool=f"{b}:hermes"), i, False)
        for i, b in enumerate(["vllm", "builtin", "sglang", "builtin"])
    ]
    assert _stages(units) == [[1, 3], [2], [0]]


@pytest.mark.skipif(not fork_available(), reason="worker pools fork")
def test_light_units_run_before_the_heavy_import_and_the_report_does_not_change(
    toy_backends, toy_table, tmp_path, monkeypatch
):
    p = tmp_path / "toy.jsonl"
    p.write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPTS))
    log = tmp_path / "stages.log"
    monkeypatch.setenv("PARSEBRIDGE_TEST_STAGE_LOG", str(log))
    common = (
        "conformance",
        "-q",
        "--transcripts",
        str(p),
        "--backend",
        "toylight,toyheavy",
        "--chunking",
        "oneshot",
    )
    assert main([*common, "--jobs", "2", "--report", str(tmp_path / "two")]) == 0
    seen = [line.split() for line in log.read_text().splitlines()]
    in_workers = [(backend, heavy) for backend, pid, heavy in seen if int(pid) != os.getpid()]
    assert sorted(in_workers) == [("toyheavy", "True")] * 4 + [("toylight", "False")] * 4

    assert main([*common, "--jobs", "1", "--report", str(tmp_path / "one")]) == 0
    rows = lambda d: [  # noqa: E731
        (r["backend"], r["transcript"], r["status"])
        for r in json.loads((tmp_path / d / "report.json").read_text())["results"]
    ]
    assert rows("two") == rows("one") and len(rows("one")) == 8

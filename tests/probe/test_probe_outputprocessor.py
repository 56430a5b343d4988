"""`parsebridge probe` against a server built on `OutputProcessor` (examples/openai_server.py on
127.0.0.1, playing the scripted model), and against a proxy in front of it that injects faults."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("uvicorn", reason="the server extra is not installed: pip install '.[server]'")
pytest.importorskip("starlette", reason="the server extra is not installed: pip install '.[server]'")
pytest.importorskip("httpx", reason="the server extra is not installed: pip install '.[server]'")

from _probe_model import transcripts
from _probe_servers import ROOT, Process, failed_checks, fault_proxy, free_port, run_probe, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    path = tmp_path_factory.mktemp("probe") / "scripted.jsonl"
    path.write_text(
        "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in transcripts()), encoding="utf-8"
    )
    port = free_port()
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "openai_server.py"),
        "--transcripts",
        str(path),
        "--reasoning-parser",
        "builtin:deepseek_v3",
        "--tool-call-parser",
        "builtin:hermes",
        "--forced-format",
        "json",
        "--token-chunks",
        "3",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    with serving(cmd, port) as proc:
        yield proc


def test_a_right_server_passes_every_check(server: Process) -> None:
    code, report, err = run_probe("--base-url", server.origin + "/v1", "--model", "scripted")
    assert failed_checks(report) == set(), err
    assert code == 0
    assert len(report["results"]) == 20
    assert [r["mode"] for r in report["results"]] == ["oneshot"] * 10 + ["stream"] * 10
    assert not any(r["note"] for r in report["results"])


def test_the_proxy_itself_changes_nothing(server: Process) -> None:
    with fault_proxy(server.origin, "none") as proxy:
        code, report, _ = run_probe("--base-url", proxy.origin + "/v1", "--model", "scripted")
    assert (code, failed_checks(report)) == (0, set())


#: fault → the scenario it is shown on and the (mode, check) rows that must fail, exactly.
FAULTS = {
    "missing-index": ("single-call", {("stream", "index")}),
    "args-before-name": ("single-call", {("stream", "name-first")}),
    "leaked-marker": ("no-call", {("oneshot", "markers"), ("stream", "markers")}),
    "stream-differs": ("parallel-calls", {("stream", "same-shape")}),
    "ignored-forced": ("named-choice", {("oneshot", "forced"), ("stream", "forced")}),
    "cumulative-deltas": ("no-call", {("stream", "increments")}),
    "repeated-last": ("no-call", {("stream", "increments")}),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_injected_fault_is_named(server: Process, fault: str) -> None:
    scenario, expected = FAULTS[fault]
    with fault_proxy(server.origin, fault) as proxy:
        code, report, _ = run_probe(
            "--base-url", proxy.origin + "/v1", "--model", "scripted", "--scenario", scenario
        )
    assert code == 1
    assert failed_checks(report) == {(scenario, mode, check) for mode, check in expected}


def test_the_table_names_the_failure(server: Process, capsys: pytest.CaptureFixture[str]) -> None:
    from parsebridge.cli.commands import main

    with fault_proxy(server.origin, "missing-index") as proxy:
        code = main(
            ["probe", "--base-url", proxy.origin + "/v1", "--model", "m", "--scenario", "single-call"]
        )
    out = capsys.readouterr().out
    assert code == 1
    assert "single-call (stream) index: event" in out and "with no index" in out
    assert "1 of 2 answers fail" in out

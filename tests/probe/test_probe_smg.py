"""`parsebridge probe` against smg's gateway (1.13: its Rust chat route, parsers and detokenizer)
serving qwen (hermes format) with qwen3 reasoning over a scripted gRPC worker
(tests/probe/_probe_smg.py), and a fault-injecting proxy in front of it."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("smg", reason="smg is not installed")
pytest.importorskip("smg_grpc_proto", reason="smg-grpc-proto is not installed")
pytest.importorskip("grpc", reason="grpcio is not installed")

from _probe_servers import HERE, Process, failed_checks, fault_proxy, free_port, run_probe, serving

pytestmark = pytest.mark.framework


@pytest.fixture(scope="module")
def gateway() -> Iterator[Process]:
    port = free_port()
    cmd = [sys.executable, str(HERE / "_probe_smg.py"), "--port", str(port)]
    with serving([*cmd, "--tool-parser", "qwen", "--reasoning-parser", "qwen3"], port) as proc:
        yield proc


def test_smg_serving_qwen_passes(gateway: Process) -> None:
    code, report, err = run_probe("--base-url", gateway.origin + "/v1", "--model", "parsebridge")
    assert failed_checks(report) == set(), err
    assert code == 0 and len(report["results"]) == 20
    assert not any(r["note"] for r in report["results"])


@pytest.mark.parametrize(
    ("fault", "scenario", "expected"),
    [
        ("args-before-name", "unicode-arguments", {("stream", "name-first")}),
        ("ignored-forced", "named-choice", {("oneshot", "forced"), ("stream", "forced")}),
    ],
)
def test_faults_in_front_of_smg_are_named(gateway: Process, fault: str, scenario: str, expected: set) -> None:
    with fault_proxy(gateway.origin, fault) as proxy:
        code, report, _ = run_probe(
            "--base-url", proxy.origin + "/v1", "--model", "parsebridge", "--scenario", scenario
        )
    assert code == 1
    assert failed_checks(report) == {(scenario, mode, check) for mode, check in expected}

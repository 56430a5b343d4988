"""`parsebridge probe` against vLLM's chat serving code (`OpenAIServingChat` of the installed release,
0.11 to 0.33, with the server oracle's release shims: its request validation, parsers, `tool_choice`
handling, stream and full generators) behind a small HTTP app,
serving hermes with Qwen3 reasoning over a scripted engine (tests/probe/_probe_vllm.py); and a
fault-injecting proxy in front of it, whose faults the probe names."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed: pip install '.[server]'")

from _probe_servers import HERE, Process, failed_checks, fault_proxy, free_port, run_probe, serving

from parsebridge.adapters.vllm._compat import get_api

pytestmark = pytest.mark.framework


@pytest.fixture(scope="module")
def vllm_server() -> Iterator[Process]:
    port = free_port()
    cmd = [sys.executable, str(HERE / "_probe_vllm.py"), "--port", str(port)]
    with serving([*cmd, "--tool-parser", "hermes", "--reasoning-parser", "qwen3"], port) as proc:
        yield proc


def vllms_own_faults() -> set[tuple[str, str, str]]:
    """What the probe rightly finds wrong in the installed vLLM's own server: before 0.13 a
    non-streamed answer to ``tool_choice: "required"`` ends with finish_reason "stop" (0.11
    counts only "auto" as calling tools; 0.13 answers "tool_calls", as OpenAI does); and 0.11 (the
    oldest env's, the only release before 0.33 checked here) streams a call without arguments with
    no argument text at all, which a client's JSON parser refuses (the arguments check)."""
    version = get_api().version_tuple
    faults = {("required-choice", "oneshot", "finish")} if version < (0, 13) else set()
    return faults | ({("empty-arguments", "stream", "arguments")} if version < (0, 12) else set())


def test_vllm_serving_hermes_passes(vllm_server: Process) -> None:
    code, report, err = run_probe("--base-url", vllm_server.origin + "/v1", "--model", "oracle-model")
    own = vllms_own_faults()
    assert failed_checks(report) == own, err
    assert code == (1 if own else 0) and len(report["results"]) == 20
    assert not any(r["note"] for r in report["results"])


def test_vllm_raw_output_is_reread_by_vllms_own_parsers(vllm_server: Process) -> None:
    """vLLM returns each token's text as logprobs: joined, they are the raw output, and vLLM's
    hermes and qwen3 parsers read it as the server answered."""
    args = [
        "--base-url",
        vllm_server.origin + "/v1",
        "--model",
        "oracle-model",
        "--scenario",
        "reasoning-then-call",
    ]
    args += ["--parser", "vllm:hermes", "--reasoning-parser", "vllm:qwen3", "--backends", "none"]
    code, report, err = run_probe(*args)
    reread = report["reread"]
    assert code == 0, (err, reread)
    assert reread["transcripts"] == 1 and reread["unavailable"] == [] and reread["differences"] == []
    assert reread["agree"] == ["vllm:qwen3 + vllm:hermes"]


@pytest.mark.parametrize(
    ("fault", "scenario", "expected"),
    [
        ("missing-index", "single-call", {("stream", "index")}),
        ("args-before-name", "nested-arguments", {("stream", "name-first")}),
        ("leaked-marker", "single-call", {("oneshot", "markers"), ("stream", "markers")}),
        ("stream-differs", "parallel-calls", {("stream", "same-shape")}),
        ("ignored-forced", "required-choice", {("oneshot", "forced"), ("stream", "forced")}),
        ("cumulative-deltas", "no-call", {("stream", "increments")}),
    ],
)
def test_faults_in_front_of_vllm_are_named(
    vllm_server: Process, fault: str, scenario: str, expected: set
) -> None:
    with fault_proxy(vllm_server.origin, fault) as proxy:
        code, report, _ = run_probe(
            "--base-url", proxy.origin + "/v1", "--model", "oracle-model", "--scenario", scenario
        )
    assert code == 1
    assert failed_checks(report) == {(scenario, mode, check) for mode, check in expected}

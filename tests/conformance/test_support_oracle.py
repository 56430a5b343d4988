"""The support table's "server-equivalent" column comes from the oracle's record beside each report."""

from __future__ import annotations

import json

from parsebridge.conformance.support import ORACLE_RECORD, server_equivalent, support_table


def _report(fw: str, version: str) -> dict:
    return {
        "parsebridge": "0.1.0",
        "backends": {fw: version},
        "api_shapes": {fw: "shape"},
        "parsers": {fw: {"tool": ["a"], "reasoning": ["b"]}},
        "results": [{"backend": fw, "spec": f"{fw}:a", "family": "hermes", "transcript": "t",
                     "chunking": "char", "status": "pass", "classes": []}],
    }  # fmt: skip


def _record(fw: str, version: str, differing: list[str], undriven: list[str] = []) -> dict:  # noqa: B006
    return {
        fw: {
            "framework": fw,
            "version": version,
            "configurations": 10,
            "runs": 360,
            "runs_differing": 4 * len(differing),
            "differing": differing,
            "not_driven": undriven,
        }
    }


def test_column_per_release(tmp_path):
    envs = {
        "vllm-0.33.0": (_report("vllm", "0.33.0"), _record("vllm", "0.33.0", [])),
        "sglang-0.5.23": (_report("sglang", "0.5.23"), _record("sglang", "0.5.23", ["qwen3+qwen25"], ["-+deepseekv4"])),
        "vllm-0.11.0": (_report("vllm", "0.11.0"), None),
    }  # fmt: skip
    for env, (report, record) in envs.items():
        (tmp_path / env).mkdir()
        (tmp_path / env / "report.json").write_text(json.dumps(report))
        if record is not None:
            (tmp_path / env / ORACLE_RECORD).write_text(json.dumps(record))
    md = support_table([tmp_path])
    assert "| server-equivalent |" in md.splitlines()[2]
    row = {
        line.split(" | ")[1]: line for line in md.splitlines() if line.startswith(("| vllm |", "| sglang |"))
    }
    assert row["0.33.0"].endswith("| yes: 10 configurations, 360 runs |")
    assert "no: 1 of 10 configurations differ (4 of 360 runs); not driven: -+deepseekv4 |" in row["0.5.23"]
    assert row["0.11.0"].endswith("| not run |")


def test_verdicts():
    assert server_equivalent(None) == "not run"
    assert server_equivalent({"configurations": 0, "runs": 0}) == "server not driven"
    assert server_equivalent({"undrivable": "TypeError: x"}) == "server not driven: TypeError: x"
    assert server_equivalent(_record("vllm", "1", [])["vllm"]) == "yes: 10 configurations, 360 runs"

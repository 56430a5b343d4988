"""`parsebridge probe` against Dynamo's own OpenAI frontend (1.6.1: its Rust chat route, parsers and
detokenizer) serving hermes with tools declared, over a scripted engine; then `--parser
dynamo:hermes` re-reads the raw outputs the frontend gives as logprobs, and `parsebridge compare`
replays the saved transcripts offline."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dynamo.llm", reason="Dynamo is not installed (ai-dynamo-runtime)")

from _probe_servers import HERE, Process, failed_checks, free_port, run_probe, serving

from parsebridge.adapters._served import model_folder
from parsebridge.adapters._tokenizers import cache_root
from parsebridge.adapters.dynamo._frontend import all_markers

pytestmark = pytest.mark.framework


@pytest.fixture(scope="module")
def folder() -> Path:
    return model_folder(all_markers()).path


@pytest.fixture(scope="module")
def dynamo(tmp_path_factory: pytest.TempPathFactory, folder: Path) -> Iterator[Process]:
    home = tmp_path_factory.mktemp("dynamo-home")  # Dynamo caches model files under $HOME
    port = free_port()
    cmd = [sys.executable, str(HERE / "_probe_dynamo.py"), "--port", str(port)]
    cmd += ["--tool-parser", "hermes", "--reasoning-parser", "qwen3"]
    env = {"HOME": str(home), "PARSEBRIDGE_CACHE": str(cache_root())}
    with serving(cmd, port, env=env, ready_model="probe") as proc:
        yield proc


def test_dynamo_serving_hermes_passes(dynamo: Process) -> None:
    code, report, err = run_probe("--base-url", dynamo.origin + "/v1", "--model", "probe")
    assert report is not None, f"exit {code}, no report: {err}"
    assert failed_checks(report) == set(), err
    assert code == 0 and len(report["results"]) == 20


def test_dynamo_hermes_is_reread_and_compare_replays_it(
    dynamo: Process, folder: Path, tmp_path: Path
) -> None:
    pytest.importorskip(
        "transformers", reason="--tokenizer loads the model folder's tokenizer with transformers"
    )
    saved = tmp_path / "dynamo-hermes.jsonl"
    args = ["--base-url", dynamo.origin + "/v1", "--model", "probe", "--parser", "dynamo:hermes"]
    args += ["--reasoning-parser", "dynamo:qwen3", "--tokenizer", str(folder), "--save", str(saved)]
    code, report, err = run_probe(*args, "--backends", "none")
    assert report is not None, f"exit {code}, no report: {err}"
    reread = report["reread"]
    assert code == 0, (err, reread)
    assert reread["transcripts"] == 10 and reread["unavailable"] == [] and reread["warnings"] == []
    assert reread["differences"] == [] and reread["agree"] == ["dynamo:qwen3 + dynamo:hermes"]
    records = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    by_id = {r["id"]: r for r in records}
    unicode = by_id["probe-unicode-arguments"]
    assert "Grüße aus Köln — 東京で会いましょう 🌸" in unicode["output"] and unicode["family"] == "hermes"
    assert (
        unicode["tokenizer"] == {"path": str(folder)}
        and len(unicode["token_ids"]) > len(unicode["output"]) / 2
    )
    assert by_id["probe-reasoning-then-call"]["output"].startswith("<think>")

    from parsebridge.cli.commands import main

    replay = tmp_path / "replay.jsonl"
    with replay.open("w") as out, pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdout", out)
        assert (
            main(
                [
                    "compare",
                    str(saved),
                    "--tool-parser",
                    "dynamo:hermes",
                    "--reasoning-parser",
                    "dynamo:qwen3",
                    "--format",
                    "json",
                ]
            )
            == 0
        )
    lines = [json.loads(line) for line in replay.read_text().splitlines()]
    comparisons = [x for x in lines if x.get("type") == "transcript"]
    assert len(comparisons) == 10
    for comp in comparisons:
        reading = comp["results"]["dynamo:qwen3 + dynamo:hermes"]["oneshot"]
        served = by_id[comp["transcript"]]["served"]["oneshot"]
        assert [c["name"] for c in reading["tool_calls"]] == [c["name"] for c in served["tool_calls"]]
        assert [c["arguments"] for c in reading["tool_calls"]] == [
            c["arguments"] for c in served["tool_calls"]
        ]

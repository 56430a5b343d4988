"""report.json fields (design §10), report.md, and a self-contained report.html rendered by a real browser."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from _confdata import reasoning_transcript, tool_transcript

from parsebridge.conformance import Runner, Target
from parsebridge.conformance.html import render_html
from parsebridge.conformance.report import build_report, write_report

NASTY = tool_transcript(
    id="nasty</script><!--",
    output='</script><script>alert(1)</script> <call>{"name": "f"}</call>',
    expected=None,
)


def make_report():
    ts = [tool_transcript(), NASTY, reasoning_transcript()]
    runner = Runner(["oneshot", "char", "token-5"])
    results = list(
        runner.run_targets([Target.explicit(tool="python:_confparsers:LosesContentInBigChunks")], ts[:2])
    )
    results += list(runner.run_targets([Target.explicit(reasoning="python:_confparsers:Think")], ts[2:]))
    report = build_report(
        results,
        ts,
        backends={"python": "0.1.0", "vllm": None},
        unavailable={"vllm": "not installed"},
        chunkings=["oneshot", "char", "token-5"],
        timing={"wall_s": 1.0},
    )
    report["roundtrip"] = ROUNDTRIP
    report["consensus"] = CONSENSUS
    return report


#: A consensus section as `consensus.column.consensus_column` writes it.
CONSENSUS = {
    "tool:toycall": {"cases": 3, "consensus": 2, "agrees": 1, "reviewed": 1, "unexplained": []},
    "reasoning:toythink": {
        "cases": 1,
        "consensus": 1,
        "agrees": 0,
        "reviewed": 0,
        "unexplained": ["toy-think"],
    },
}


#: A round-trip section as `roundtrip.run_roundtrip` writes it (one clean family, one diverging).
ROUNDTRIP = {
    "examples": 3,
    "seed": "0",
    "elapsed_s": 0.1,
    "backends": {
        "python": {
            "hermes": {"spec": "python:x", "inputs": 3, "clean": 3, "escaped": 0, "errors": 0, "classes": {}},
            "toycall": {
                "spec": "python:y",
                "inputs": 3,
                "clean": 1,
                "escaped": 0,
                "errors": 0,
                "classes": {"content_lost": 2},
                "examples": {
                    "content_lost": {
                        "output": "<rt-probe>",
                        "expected": {"content": "A", "tool_calls": []},
                        "detail": "[random] lost",
                    }
                },
            },
        }
    },
}


def test_report_json_has_the_contract_fields(tmp_path):
    report = make_report()
    paths = write_report(tmp_path, report)
    data = json.loads(paths["json"].read_text())
    assert isinstance(data["parsebridge"], str)
    assert data["backends"] == {"python": "0.1.0", "vllm": None}
    assert data["unavailable"] == {"vllm": "not installed"}
    assert len(data["results"]) == 9
    for r in data["results"]:
        assert {"backend", "spec", "family", "transcript", "chunking", "status", "classes", "detail"} <= set(
            r
        )
        assert r["status"] in ("pass", "diverge", "fail", "unsupported", "error")
        assert isinstance(r["classes"], list) and isinstance(r["detail"], str)
        assert r["transcript"] in data["transcripts"]
    lost = next(r for r in data["results"] if r["transcript"] == "toy-call" and r["chunking"] == "token-5")
    assert lost["status"] == "diverge" and lost["classes"] == ["content_lost"]
    assert lost["observed"]["mode"] == "stream" and "elapsed_ms" in lost
    assert data["transcripts"]["toy-call"]["expected"]["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]
    assert data["summary"]["by_status"]["diverge"] >= 1
    assert data["summary"]["by_family"]["tool:toycall"]["python"]
    md = paths["md"].read_text()
    assert "| family | python | vllm | consensus (builtin default) |" in md and "content_lost" in md
    assert "| 1/2 (1 reviewed) |" in md and "| 0/1 (1 unexplained) |" in md
    assert data["roundtrip"]["backends"]["python"]["toycall"]["classes"] == {"content_lost": 2}
    assert "## Round trip" in md and "| tool:toycall | 1/3: content_lost 2 |" in md


def test_html_is_self_contained_and_escapes_model_output(tmp_path):
    html = render_html(make_report())
    assert "http://" not in html and "https://" not in html
    # the embedded data cannot close its own <script> element
    body = html.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in body
    assert json.loads(body)["results"]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.timeout(180)
def test_html_renders_in_a_headless_browser(tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (apt-get install chromium); .ci/run installs it")
    paths = write_report(tmp_path, make_report())
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            paths["html"].as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=150,
    )
    dom = proc.stdout
    assert 'data-rendered="true"' in dom, proc.stderr[-2000:]
    matrix = dom.split('id="matrix"', 1)[1].split("</table>", 1)[0]
    assert 'data-family="tool:toycall"' in matrix and 'data-family="reasoning:toythink"' in matrix
    assert 'data-backend="python"' in matrix and "w-diverge" in matrix
    assert "consensus (builtin default)" in matrix and "1/2 (1 reviewed)" in matrix
    assert "0/1 (1 unexplained: toy-think)" in matrix
    # the drill-down shows the not-passing transcript with the output and each chunking side by side
    assert 'data-transcript="toy-call"' in dom
    assert "token-5" in dom
    # model output is shown as text, never parsed as markup
    assert (
        'data-transcript="nasty&lt;/script&gt;&lt;!--"' in dom
        or 'data-transcript="nasty</script><!--"' not in dom
    )
    assert "&lt;script&gt;alert(1)" in dom and "<script>alert(1)" not in dom
    # the round-trip section: a families × backends table of exact read-backs and classes
    rt = dom.split('id="roundtrip"', 1)[1].split("</section>", 1)[0]
    assert "hidden" not in rt.split(">", 1)[0]
    assert "tool:toycall" in rt and "1/3" in rt and "content_lost 2" in rt and "rt-cell" in rt

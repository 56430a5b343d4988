"""The docs' conformance, install and support figures come from data (tools/doc_figures.py), never by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import doc_figures  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def test_readme_figures_and_support_page_are_current() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "doc_figures.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr + "\nrun: python tools/doc_figures.py"


def test_a_hand_edited_figure_is_stale() -> None:
    values = doc_figures.figures()
    pages = doc_figures.render_pages(values)
    for name, text in values.items():
        for page, (current, _) in pages.items():
            if not doc_figures._region(name).search(current):
                continue
            edited = current.replace(text, text.replace("transcripts", "transcripts (edited)") + " 271", 1)
            assert edited != current, (name, page)
            assert doc_figures.render(edited, values, required=False) == current, (name, page)


def test_every_figure_sits_in_a_page_and_the_readme_keeps_command_one() -> None:
    pages = doc_figures.render_pages()
    assert doc_figures.README in pages
    readme = pages[doc_figures.README][0]
    assert doc_figures._region("command1").search(readme) and doc_figures._region("fixtures").search(readme)


def test_fixtures_figure_counts_the_bundled_transcripts() -> None:
    from parsebridge.conformance.transcripts import bundled_transcripts

    assert doc_figures.fixtures_figure().startswith(f"{len(bundled_transcripts()):,} transcripts over ")


def test_bundled_figure_counts_the_bundled_transcripts() -> None:
    """docs/compare.md once said 958 by hand while the package bundled 985: the count is a figure now."""
    from parsebridge.conformance.transcripts import bundled_transcripts

    assert doc_figures.bundled_figure() == f"{len(bundled_transcripts()):,} bundled transcripts"
    compare_md = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    assert doc_figures._region("bundled").search(compare_md)


def test_data_from_a_run_on_other_fixtures_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(doc_figures.CONFORMANCE.read_text(encoding="utf-8"))
    data["transcripts"] -= 1
    (tmp_path / "c.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(doc_figures, "CONFORMANCE", tmp_path / "c.json")
    assert any("re-run the conformance suite" in p for p in doc_figures.stale_data())


def test_support_rows_must_agree_with_the_all_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = json.loads(doc_figures.SUPPORT.read_text(encoding="utf-8"))
    for row in rows:
        if (row["framework"], row["version"]) == ("vllm", "0.33.0"):
            row["status"]["error"] = row["status"].get("error", 0) + 10  # a pre-fix count
    (tmp_path / "s.json").write_text(json.dumps(rows), encoding="utf-8")
    monkeypatch.setattr(doc_figures, "SUPPORT", tmp_path / "s.json")
    problems = doc_figures.stale_data()
    assert any("disagree on vllm 0.33.0" in p for p in problems)
    assert any("docs/support.md is not rendered" in p for p in problems)


def test_the_figures_the_issue_found_stale_are_gone() -> None:
    text = "\n".join(
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    )
    for stale in (
        "271 transcripts",
        "958 bundled",  # docs/compare.md's count, typed by hand (985 when found)
        "886 pass",
        "930 results",
        "vLLM alone",
        "coarse\nchunks",
        "coarse chunks",
        "~75 MB",  # Dynamo's download given as its install size (on disk: +250 MB)
        "~40 MB",  # smg's
        "CPU torch, no GPU) into",  # the install-framework summary before Dynamo and smg (no torch)
    ):
        assert stale not in text, stale


def test_compare_summary_reads_wrong_answers_per_mode(tmp_path: Path) -> None:
    lines = [
        {
            "type": "transcript",
            "against_expected": [{"class": "call_missing", "a": "vllm:hermes/stream:token-5"}],
        },
        {"type": "transcript", "against_expected": [{"class": "extra_call", "a": "vllm:hermes/oneshot"}]},
        {
            "type": "transcript",
            "against_expected": [{"class": "extra_call", "a": "vllm:hermes/stream:token-5"}],
        },
        {
            "type": "summary",
            "backends": {"vllm": "9.9"},
            "modes": {"oneshot": "oneshot", "stream:token-5": "token-5"},
        },
    ]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    data = doc_figures.from_compare(tmp_path / "c.jsonl")
    assert data["classes"]["vllm"] == {"call_missing": ["token-5"], "extra_call": ["oneshot", "token-5"]}
    assert doc_figures.command1_figure(data).endswith(
        "`call_missing` (token-5); `extra_call` (every chunking)"
    )


def test_the_screenshot_shows_the_run_the_figures_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shot.json").write_text(
        json.dumps({"generated": "2026-11-22T21:27:08+00:00"}), encoding="utf-8"
    )
    monkeypatch.setattr(doc_figures, "SCREENSHOT", tmp_path / "shot.json")
    assert any("conformance-report.png shows the run of 2026-11-22" in p for p in doc_figures.stale_data())


def test_compare_data_from_other_hermes_transcripts_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README command 1's figure names vLLM's wrong answers against the transcripts' expected
    readings: when those change (a cut-off call became no call), the data was still current, and
    the figure left out vLLM's `extra_call`."""
    data = json.loads(doc_figures.COMPARE.read_text(encoding="utf-8"))
    assert data["fixtures_sha256"] == doc_figures.hermes_fixtures_digest()
    data["fixtures_sha256"] = "0" * 64
    (tmp_path / "c.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(doc_figures, "COMPARE", tmp_path / "c.json")
    assert any("re-run command 1" in p for p in doc_figures.stale_data())

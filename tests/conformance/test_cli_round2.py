"""`parsebridge conformance` usage errors found on a fresh clone (issue 30, item 5)."""

from __future__ import annotations

import json

from parsebridge.cli import main


def test_a_named_backend_that_is_not_installed_is_a_usage_error(toy_backends, toy_table, tmp_path, capsys):
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({"id": "toy", "family": "toycall", "output": "Hi"}) + "\n")
    code = main(["conformance", "-q", "--transcripts", str(p), "--backend", "toyfw,notinstalled"])
    assert code == 2  # like `compare --backends toyfw,notinstalled`, not a run of "unsupported" rows
    err = capsys.readouterr().err
    assert "backend 'notinstalled' needs" in err and "pip install surely-not-installed" in err


def test_backend_names_are_case_insensitive_and_shown_canonical(toy_backends, toy_table, tmp_path, capsys):
    p = tmp_path / "toy.jsonl"
    p.write_text(json.dumps({"id": "toy", "family": "toycall", "output": "Hi"}) + "\n")
    rep = tmp_path / "rep"
    code = main(["conformance", "-q", "--transcripts", str(p), "--backend", "TOYFW", "--report", str(rep)])
    assert code == 0
    assert "TOYFW" not in capsys.readouterr().out
    data = json.loads((rep / "report.json").read_text())
    assert list(data["backends"]) == ["toyfw"] and {r["backend"] for r in data["results"]} == {"toyfw"}

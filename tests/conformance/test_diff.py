"""Cross-version behaviour diff: results matched per key and classified."""

from __future__ import annotations

import argparse
import json

import pytest

from parsebridge.conformance.diff import classify, diff_reports, load_report, main, to_markdown


def _r(
    transcript, status, classes=(), *, backend="vllm", family="hermes", chunking="char", spec="vllm:hermes"
):
    return {
        "backend": backend,
        "spec": spec,
        "family": family,
        "transcript": transcript,
        "chunking": chunking,
        "status": status,
        "classes": list(classes),
        "detail": "",
    }


OLD = {
    "parsebridge": "0.1.0",
    "backends": {"vllm": "0.15.1", "builtin": "0.1.0"},
    "results": [
        _r("a", "diverge", ["content_lost"]),
        _r("b", "pass"),
        _r("c", "fail", ["arguments_differ"]),
        _r("d", "pass"),
        _r("e", "unsupported", spec="", family="glm45"),
        _r("f", "pass", spec="vllm:old_name", family="old"),
        _r("b", "pass", backend="builtin", spec="builtin:hermes"),
    ],
}
NEW = {
    "parsebridge": "0.1.0",
    "backends": {"vllm": "0.33.0", "builtin": "0.1.0"},
    "results": [
        _r("a", "pass"),
        _r("b", "diverge", ["content_lost"]),
        _r("c", "fail", ["call_missing"]),
        _r("d", "pass"),
        _r("e", "pass", spec="vllm:glm45", family="glm45"),
        _r("f", "unsupported", spec="", family="old"),
        _r("b", "pass", backend="builtin", spec="builtin:hermes"),
    ],
}


def test_each_kind_of_change_is_classified():
    d = diff_reports(OLD, NEW)
    kinds = {c.transcript: c.kind for c in d.changes if c.backend == "vllm"}
    assert kinds == {"a": "fixed", "b": "regressed", "c": "changed", "e": "appeared", "f": "vanished"}
    assert d.compared == 7
    assert d.counts()["hermes"] == {"fixed": 1, "regressed": 1, "changed": 1}
    assert d.parsers_appeared == {"vllm": ["vllm:glm45"]}
    assert d.parsers_vanished == {"vllm": ["vllm:old_name"]}
    # regressions are listed first: they are what blocks an upgrade
    assert d.changes[0].kind == "regressed"


def test_unchanged_and_filtered():
    assert classify(_r("x", "pass"), _r("x", "pass")) is None
    assert classify(_r("x", "fail", ["b", "a"]), _r("x", "fail", ["a", "b"])) is None
    d = diff_reports(OLD, NEW, backends=["builtin"])
    assert d.changes == [] and d.compared == 1


def test_markdown_and_loading_from_a_directory(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(OLD))
    assert load_report(tmp_path)["backends"]["vllm"] == "0.15.1"
    md = to_markdown(diff_reports(OLD, NEW))
    assert "vllm 0.15.1" in md and "vllm 0.33.0" in md
    assert "| hermes | 1 | 1 | 1 |" in md
    assert "| regressed | vllm | b | char | pass | diverge (content_lost) |" in md


def _diff_ns(tmp_path, *args):
    import argparse

    from parsebridge.conformance.diff import configure

    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    (tmp_path / "a" / "report.json").write_text(json.dumps(OLD))
    (tmp_path / "b" / "report.json").write_text(json.dumps(NEW))
    p = argparse.ArgumentParser()
    p.add_argument("report_a")
    p.add_argument("report_b")
    configure(p)
    return p.parse_args([str(tmp_path / "a"), str(tmp_path / "b"), *args])


def test_main_formats_backend_filter_and_strict(tmp_path, capsys):
    from parsebridge.conformance.diff import main

    assert main(_diff_ns(tmp_path, "--format", "json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["hermes"] == {"fixed": 1, "regressed": 1, "changed": 1}
    assert data["a"]["vllm"] == "0.15.1" and data["b"]["vllm"] == "0.33.0"
    assert main(_diff_ns(tmp_path, "--format", "markdown", "--backend", "builtin")) == 0
    assert "1 result compared, 0 changed" in capsys.readouterr().out
    assert main(_diff_ns(tmp_path, "--strict")) == 1  # b regressed
    assert main(_diff_ns(tmp_path, "--strict", "--backend", "builtin")) == 0
    out = tmp_path / "docs" / "diff.md"
    assert main(_diff_ns(tmp_path, "--out", str(out))) == 0
    assert "| regressed | vllm | b |" in out.read_text()


@pytest.mark.parametrize(
    ("backend", "says"), [("vlm", "(did you mean 'vllm'?)"), ("sglang", "they ran builtin, vllm")]
)
def test_a_backend_neither_report_ran_is_refused_not_an_empty_gate(tmp_path, backend, says):
    """`--backend vlm --strict` compared 0 results and exited 0: a typo passed the upgrade gate."""
    from parsebridge.protocol import ParsebridgeError

    with pytest.raises(ParsebridgeError, match=rf"--backend {backend}: neither report ran it") as exc:
        main(_diff_ns(tmp_path, "--strict", "--backend", backend))
    assert says in str(exc.value)


def test_main_tolerates_a_bare_namespace(tmp_path, capsys):
    """The CLI's `diff` subparser may only define the two positionals."""
    ns = _diff_ns(tmp_path)
    assert main(argparse.Namespace(report_a=ns.report_a, report_b=ns.report_b)) == 0
    assert "changed" in capsys.readouterr().out


def test_chunkings_that_moved_alike_share_a_row():
    old = {"backends": {"vllm": "1"}, "results": [_r("a", "pass", chunking=c) for c in ("char", "token")]}
    new = {
        "backends": {"vllm": "2"},
        "results": [_r("a", "fail", ["call_missing"], chunking=c) for c in ("char", "token")],
    }
    md = to_markdown(diff_reports(old, new))
    assert "| regressed | vllm | a | char, token | pass | fail (call_missing) |" in md


def test_results_only_one_report_holds_are_counted_and_said(tmp_path, capsys):
    """A report that ran fewer chunkings (or lost transcripts) diffed as "N compared, 0 changed"
    and --strict passed: what had no match was dropped without a word."""
    before = {**OLD, "results": [*OLD["results"], _r("b", "pass", chunking="token")]}
    after = {**NEW, "results": [*NEW["results"], _r("z", "pass", chunking="token")]}
    d = diff_reports(before, after)
    assert (d.compared, d.only_a, d.only_b) == (7, 1, 1)
    assert d.as_dict()["only_a"] == 1
    assert (
        to_markdown(d)
        .splitlines()[0]
        .endswith("7 results compared, 5 changed; not compared: 1 only in REPORT_A, 1 only in REPORT_B")
    )
    (tmp_path / "a.json").write_text(json.dumps(before))
    (tmp_path / "b.json").write_text(json.dumps(after))
    ns = argparse.Namespace(
        report_a=tmp_path / "a.json", report_b=tmp_path / "b.json", format="json", limit=0
    )
    assert main(ns) == 0
    captured = capsys.readouterr()
    said = f"warning: not compared: 1 only in {tmp_path / 'a.json'}, 1 only in {tmp_path / 'b.json'}"
    assert said in captured.err
    assert json.loads(captured.out)["only_b"] == 1


def test_strict_fails_when_the_after_report_lacks_results_the_before_report_holds(tmp_path, capsys):
    """`diff A B --strict` exited 0 when B held none of thousands of A's results (a run that lost
    chunkings or families passed the upgrade gate). Results only B holds (it ran more) pass."""
    builtin = {"parsebridge": "0.1.0", "backends": {"builtin": "0.1.0"}}
    ran = [_r(t, "pass", backend="builtin", spec="builtin:hermes") for t in "ab"]
    (tmp_path / "full.json").write_text(json.dumps({**builtin, "results": ran}))
    (tmp_path / "less.json").write_text(json.dumps({**builtin, "results": ran[:1]}))

    def strict(a: str, b: str) -> int:
        ns = argparse.Namespace(
            report_a=tmp_path / a, report_b=tmp_path / b, format="json", limit=0, strict=True
        )
        return main(ns)

    assert strict("full.json", "less.json") == 1
    said = f"--strict: {tmp_path / 'less.json'} lacks 1 of the results {tmp_path / 'full.json'} holds"
    assert said in capsys.readouterr().err
    assert strict("less.json", "full.json") == 0
    assert strict("full.json", "full.json") == 0


def test_limit_zero_lists_no_row_and_builtin_alone_is_named(tmp_path, capsys):
    """--limit 0 was read as "not given" (40 rows); a diff of two builtin reports was headed
    `before: ?   after: ?`."""
    (tmp_path / "a.json").write_text(json.dumps(OLD))
    (tmp_path / "b.json").write_text(json.dumps(NEW))
    ns = argparse.Namespace(
        report_a=tmp_path / "a.json", report_b=tmp_path / "b.json", format="markdown", limit=0
    )
    assert main(ns) == 0
    out = capsys.readouterr().out
    assert "5 changed" in out and "| regressed | vllm |" not in out and "| … | | 5 more rows |" in out
    only_builtin = {"backends": {"builtin": "0.1.0"}, "results": [_r("b", "pass", backend="builtin")]}
    assert to_markdown(diff_reports(only_builtin, only_builtin)).startswith(
        "**Before:** builtin 0.1.0 · **after:** builtin 0.1.0 · 1 result compared"
    )


def test_out_that_cannot_be_written_is_refused_before_the_diff(tmp_path):
    """--out naming a folder, or under a file, failed with a bare IsADirectoryError /
    FileExistsError; the page is written whole (the old one stays until the new one is complete)."""
    from parsebridge.conformance.diff import main
    from parsebridge.protocol import ParsebridgeError

    (tmp_path / "afile").write_text("x")
    with pytest.raises(ParsebridgeError, match="is a directory, not a file"):
        main(_diff_ns(tmp_path, "--out", str(tmp_path / "a")))
    with pytest.raises(ParsebridgeError, match="folder is a file, not a folder"):
        main(_diff_ns(tmp_path, "--out", str(tmp_path / "afile" / "diff.md")))
    out = tmp_path / "new" / "deep" / "diff.md"
    assert main(_diff_ns(tmp_path, "--out", str(out), "--format", "json")) == 0
    assert json.loads(out.read_text())["counts"]
    assert not [p for p in out.parent.iterdir() if p.name != "diff.md"]  # no temporary file left


def test_messages_name_the_reports_as_given(tmp_path, capsys, monkeypatch):
    """The headline, the warnings and --strict's message named REPORT_A and REPORT_B (the help's
    placeholders) where the user gave `before` and `after/report.json`."""
    monkeypatch.chdir(tmp_path)
    before = {**OLD, "results": [*OLD["results"], _r("b", "pass", chunking="token")]}
    after = {**NEW, "results": [*NEW["results"], _r("z", "pass", chunking="token")]}
    for folder, report in (("before", before), ("after", after)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "report.json").write_text(json.dumps(report))
    for fmt in ("table", "json"):
        ns = argparse.Namespace(report_a="before", report_b="after/report.json", format=fmt, limit=0)
        assert main(ns) == 0
        captured = capsys.readouterr()
        said = "not compared: 1 only in before, 1 only in after/report.json"
        assert said in (captured.out if fmt == "table" else captured.err)
        assert "REPORT_" not in captured.out + captured.err
    (tmp_path / "sglang.json").write_text(json.dumps({**NEW, "results": [_r("a", "pass", backend="sglang")]}))
    ns = argparse.Namespace(report_a="before", report_b="sglang.json", format="json", limit=0)
    main(ns)
    err = capsys.readouterr().err
    assert "before ran builtin, vllm; sglang.json ran sglang" in err and "REPORT_" not in err

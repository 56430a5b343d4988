"""`parsebridge compare` on the command line: inputs, formats, resume, interruption, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.cli import compare_command, main
from parsebridge.comparison import engine as compare_mod
from parsebridge.comparison.logs import count_lines
from parsebridge.comparison.models import CompareSummary, TranscriptComparison

P = "python:_compare_parsers:"
TAGGED, LOSSY = P + "Tagged", P + "LossyTagged"
TEXT = 'Sure, let me check the weather for you now.<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'
SPECS = ["--tool-parser", TAGGED, "--tool-parser", LOSSY]


def _lines(text: str) -> list[dict]:
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def _log(path: Path, n: int) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"t{i}", "output": TEXT if i % 2 else f"plain answer {i}"}) + "\n")
    return path


def test_bare_text_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--text", TEXT, *SPECS, "--format", "json"]) == 0
    run, *objs = _lines(capsys.readouterr().out)
    assert [o["type"] for o in [run, *objs]] == ["run", "transcript", "summary"]
    assert run["targets"] == [TAGGED, LOSSY] and "stream:token-5" in run["modes"]
    TranscriptComparison.model_validate(objs[0])
    CompareSummary.model_validate(objs[1])
    assert objs[0]["transcript"] == "text"
    # the lossy parser also reads its token groupings differently from one another (split invariance)
    assert {d["class"] for d in objs[0]["differences"]} == {"content_lost", "split_variant"}


def test_table_shows_readings_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--text", TEXT, *SPECS]) == 0
    out = capsys.readouterr().out
    assert "content_lost" in out and "stream:token-5" in out and "agreement per spec pair" in out


def test_stdin_jsonl_and_bare(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = "\n".join(json.dumps({"id": f"s{i}", "text": TEXT}) for i in range(3)) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(log))
    assert main(["compare", "-", *SPECS, "--format", "json"]) == 0
    assert [o.get("transcript") for o in _lines(capsys.readouterr().out)][1:4] == ["s0", "s1", "s2"]
    monkeypatch.setattr("sys.stdin", io.StringIO("just text\nover two lines"))
    assert main(["compare", "-", "--tool-parser", TAGGED, "--format", "json"]) == 0
    first = _lines(capsys.readouterr().out)[1]
    assert first["transcript"] == "stdin"
    assert first["results"][TAGGED]["oneshot"]["content"] == "just text\nover two lines"


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--text", TEXT]) == 2  # a raw output has no family
    assert main(["compare", "--text", TEXT, "--tool-parser", "builtin:hermez"]) == 2
    assert main(["compare", str(tmp_path / "missing.jsonl"), "--tool-parser", TAGGED]) == 2
    assert main(["compare", "--text", TEXT, "--tool-parser", TAGGED, "--resume"]) == 2
    assert "error" in capsys.readouterr().err


def test_fail_on_diff(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--text", TEXT, *SPECS, "--fail-on-diff", "--format", "json"]) == 1
    assert main(["compare", "--text", "no call", *SPECS, "--fail-on-diff", "--format", "json"]) == 0


def test_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--schema"]) == 0
    assert "CompareSummary" in capsys.readouterr().out


def test_html_is_self_contained(tmp_path: Path) -> None:
    out = tmp_path / "cmp.html"
    assert (
        main(
            [
                "compare",
                "--text",
                TEXT,
                "--text",
                "<b>not html</b>",
                *SPECS,
                "--format",
                "html",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "&lt;b&gt;not html&lt;/b&gt;" in page and "content_lost" in page


def test_bundled_builtin_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The quick start's form without frameworks: bundled transcripts, family table, builtin backend."""
    assert (
        main(["compare", "--bundled", "--family", "hermes", "--backends", "builtin", "--format", "json"]) == 0
    )
    run, *objs = _lines(capsys.readouterr().out)
    summary = objs[-1]
    assert run["type"] == "run" and run["conventions"] == "lossless" == summary["conventions"]
    assert summary["type"] == "summary" and summary["transcripts"] == len(objs) - 1 >= 5
    assert all(
        list(o["results"]) in (["builtin:hermes"], ["builtin:qwen3 + builtin:hermes"]) for o in objs[:-1]
    )
    assert summary["specs"][0]["scored"] > 0


def test_resume_after_interruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path / "log.jsonl", 30)
    out = tmp_path / "out.jsonl"
    real = compare_mod.run_comparisons

    def interrupted(*args, **kwargs):
        for i, item in enumerate(real(*args, **kwargs)):
            if i == 12:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(compare_command, "run_comparisons", interrupted)
    args = ["compare", str(log), *SPECS, "--format", "json", "-o", str(out)]
    assert main(args) == 130
    run, *partial = _lines(out.read_text())
    assert run["type"] == "run"  # the settings --resume checks
    assert len(partial) == 12 and all(o["type"] == "transcript" for o in partial)  # no summary yet
    with out.open("a") as fh:
        fh.write('{"type": "transcript", "transcript": "t12", "resu')  # a torn last write
    monkeypatch.setattr(compare_command, "run_comparisons", real)
    assert main([*args, "--resume", "--jobs", "2"]) == 0
    objs = _lines(out.read_text())[1:]
    ids = [o["transcript"] for o in objs[:-1]]
    assert sorted(ids) == sorted(f"t{i}" for i in range(30)) and len(ids) == 30
    summary = objs[-1]
    assert summary["type"] == "summary" and summary["transcripts"] == 30 and summary["skipped"] == 12
    assert summary["pairs"][0]["transcripts"] == 30
    # resuming a finished run redoes nothing and keeps one summary
    assert main([*args, "--resume"]) == 0
    again = _lines(out.read_text())
    assert len(again) == 32 and sum(o["type"] == "summary" for o in again) == 1
    assert [o["type"] for o in again[:2]] == ["run", "transcript"]


def test_separate_summary_file_and_count(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.jsonl", 7)
    assert count_lines(log) == 7
    out, summ = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert (
        main(["compare", str(log), *SPECS, "--format", "json", "-o", str(out), "--summary", str(summ)]) == 0
    )
    assert [o["type"] for o in _lines(out.read_text())] == ["run"] + ["transcript"] * 7
    assert json.loads(summ.read_text())["transcripts"] == 7


AFTER = 'Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> Done.'


def _builtin_content(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str | None, str]:
    assert (
        main(
            ["compare", *args, "--tool-parser", "builtin:hermes", "--chunking", "char-3", "--format", "json"]
        )
        == 0
    )
    transcript, summary = _lines(capsys.readouterr().out)[-2:]
    readings = transcript["results"]["builtin:hermes"]
    assert readings["oneshot"]["content"] == readings["stream"]["content"]
    return readings["oneshot"]["content"], summary["conventions"]


def test_compare_reads_builtin_as_a_user_gets_it_and_lossless_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the default is builtin's own (servers): a comparison with vllm:hermes shows what a user of it gets
    assert _builtin_content(capsys, "--text", AFTER) == ("Let me check.", "servers")
    assert _builtin_content(capsys, "--text", AFTER, "--conventions", "lossless") == (
        "Let me check. Done.",
        "lossless",
    )


def test_compare_bundled_scores_builtin_under_lossless_unless_told(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the bundled transcripts' expected readings keep every character: lossless is what they score
    args = ["compare", "--bundled", "--family", "hermes", "--backends", "builtin", "--format", "json"]
    assert main(args) == 0
    summary = _lines(capsys.readouterr().out)[-1]
    assert summary["conventions"] == "lossless" and summary["wrong"] == 0
    assert main([*args, "--conventions", "servers"]) == 0
    summary = _lines(capsys.readouterr().out)[-1]
    assert summary["conventions"] == "servers" and summary["wrong"] >= 1  # hermes-content-between-after


def test_compare_conventions_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--text", AFTER, "--tool-parser", "builtin:hermes", "--conventions", "loseless"])
    assert exc.value.code == 2 and "invalid choice: 'loseless'" in capsys.readouterr().err
    with pytest.raises(pb.InvalidSpecError, match="unknown conventions='loseless'"):
        pb.compare(AFTER, ["builtin:hermes"], conventions="loseless")


def test_a_difference_from_expected_names_the_expected_value_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The line read 'builtin:hermes vs expected ...: call 0: {"a": 2} vs {"a": 1}' where builtin
    read {"a": 1} and expected said {"a": 2}: the values came in the other order than the names,
    so the reader took the parser's reading for the expected one."""
    record = {
        "id": "e2",
        "family": "hermes",
        "output": 'Hi<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        "expected": {"content": "Hi", "tool_calls": [{"name": "f", "arguments": {"a": 2}}]},
    }
    (tmp_path / "e.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["compare", str(tmp_path / "e.jsonl"), "--tool-parser", "builtin:hermes"]) == 0
    out = capsys.readouterr().out
    assert "arguments_differ expected vs builtin:hermes at oneshot" in out
    assert "call 0: '{\"a\": 2}' vs '{\"a\": 1}'" in out


def test_a_reasoning_family_reads_its_pipeline_records_with_their_tool_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`compare --bundled --family qwen3` read the records whose reasoning family is qwen3 and whose
    calls a tool parser reads (family hermes, qwen3_coder, ...) with builtin:qwen3 alone, and scored
    that against the calls they expect: 13/18 correct, call_missing 5, where every reading is right.
    They are now read with their own pipeline, as `--family hermes` reads them."""
    assert (
        main(["compare", "--bundled", "--family", "qwen3", "--backends", "builtin", "--format", "json"]) == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    records = [r for r in lines if r["type"] == "transcript"]
    assert len(records) == 18
    assert [r["transcript"] for r in records if r["against_expected"]] == []
    assert "builtin:qwen3 + builtin:hermes" in {s for r in records for s in r["specs"]}


@pytest.mark.parametrize(
    ("args", "scored"),
    [
        (["--family", "qwen3", "--reasoning-parser", "builtin:qwen3"], 13),
        (["--family", "hermes", "--tool-parser", "builtin:hermes"], 22),
    ],
)
def test_a_spec_that_reads_one_part_is_not_scored_on_the_other(
    args: list[str], scored: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reasoning parser alone was scored against records that also expect calls (5 of the
    bundled qwen3 records, call_missing), a tool parser alone against records that expect
    reasoning too: readings the spec cannot give counted as its wrong answers."""
    assert main(["compare", "--bundled", *args, "--format", "json"]) == 0
    summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()][-1]
    (spec,) = summary["specs"]
    assert (spec["scored"], spec["correct"]) == (scored, scored)

"""The `parsebridge` command as a new user meets it, round two (issue 30), through the real entry point.

Each test is one thing a fresh clone got wrong: `| head` exiting 1 instead
of 141, model text shown as emoji, usage errors that exited 0, and messages
that said the wrong thing (a resumed run, a diff of different backends).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_new_user import _env, no_traceback, pb

HERMES_CALL = '<tool_call>{"name": "f", "arguments": {"a": ":rocket:"}}</tool_call>'

# ---------------------------------------------------------------- 1: | head exits 141


def _closed_pipe_status(args: tuple[str, ...], cwd: Path) -> tuple[int, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "parsebridge", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first write, as `| head` after its lines
    err = proc.stderr.read().decode()
    return proc.wait(timeout=300), err


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--brief"),
        ("parse", "--tool-parser", "builtin:hermes", "out.txt"),
        ("compare", "--tool-parser", "builtin:hermes", "out.txt"),
        ("conformance", "-q", "--backend", "builtin", "--family", "hermes", "--chunking", "oneshot"),
    ],
    ids=["list", "parse", "compare", "conformance"],
)
def test_every_table_output_exits_141_when_the_pipe_closes(tmp_path: Path, args: tuple[str, ...]) -> None:
    (tmp_path / "out.txt").write_text("Hi " + HERMES_CALL, encoding="utf-8")
    code, err = _closed_pipe_status(args, tmp_path)
    assert code == 141, err
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception ignored" not in err, err


# ---------------------------------------------------------------- 2: model text is data


def test_compare_keeps_emoji_codes_and_markup_as_text(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("Hi :smile: [bold]x[/bold] " + HERMES_CALL, encoding="utf-8")
    p = pb(
        "compare",
        "--tool-parser",
        "builtin:hermes",
        "--tool-parser",
        "builtin:qwen25",
        "out.txt",
        cwd=tmp_path,
    )
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "Hi :smile: [bold]x[/bold]" in p.stdout and '{"a": ":rocket:"}' in p.stdout
    assert "😄" not in p.stdout and "🚀" not in p.stdout


def test_conformance_fail_lines_keep_emoji_codes_and_markup_as_text(tmp_path: Path) -> None:
    line = {
        "id": "emo:smile:[b]x[/b]",
        "family": "hermes",
        "output": "Hi :smile: [red]r " + HERMES_CALL,
        "expected": {"content": "nope"},
    }
    (tmp_path / "t.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    p = pb(
        "conformance", "-q", "--transcripts", "t.jsonl", "--backend", "builtin", "--chunking", "oneshot",
        cwd=tmp_path,
    )  # fmt: skip
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    fail = next(ln for ln in p.stdout.splitlines() if ln.startswith("fail "))
    assert "emo:smile:[b]x[/b]" in fail and "Hi :smile: [red]r" in fail
    assert "😄" not in p.stdout and "🚀" not in p.stdout


def _report(backend: str, transcript: str, status: str) -> dict[str, object]:
    return {
        "backends": {backend: "1.0"},
        "results": [
            {"backend": backend, "family": "hermes", "transcript": transcript, "chunking": "oneshot",
             "status": status, "classes": [], "spec": f"{backend}:hermes"},
        ],
    }  # fmt: skip


def test_conformance_diff_keeps_ids_as_text_and_does_not_wrap_in_a_pipe(tmp_path: Path) -> None:
    long_id = "a-transcript-id-long-enough-to-be-wrapped-at-eighty-columns:smile:-[b]x[/b]-" + "z" * 40
    (tmp_path / "a.json").write_text(json.dumps(_report("builtin", long_id, "pass")), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(_report("builtin", long_id, "fail")), encoding="utf-8")
    p = pb("conformance", "diff", "a.json", "b.json", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert long_id in p.stdout  # on one line: neither wrapped nor turned into an emoji
    assert "1 results compared, 1 changed" in p.stdout and "warning" not in p.stderr


# ---------------------------------------------------------------- 5: usage errors exit 2


def test_compare_of_a_raw_output_file_without_spec_or_family_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("Hi " + HERMES_CALL, encoding="utf-8")
    p = pb("compare", "out.txt", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2
    assert "out.txt is a raw output, which names no family" in p.stderr and "--family NAME" in p.stderr


def test_compare_of_a_raw_output_on_stdin_without_spec_or_family_is_a_usage_error(tmp_path: Path) -> None:
    p = pb("compare", "-", cwd=tmp_path, stdin=("Hi " + HERMES_CALL).encode())
    no_traceback(p)
    assert p.returncode == 2 and "<stdin> is a raw output, which names no family" in p.stderr
    ok = pb(
        "compare", "-", "--tool-parser", "builtin:hermes", cwd=tmp_path, stdin=("Hi " + HERMES_CALL).encode()
    )
    assert ok.returncode == 0 and '{"a": ":rocket:"}' in ok.stdout


@pytest.mark.parametrize("name", ["blank.jsonl", "blank.txt"])
def test_compare_of_a_file_of_blank_lines_is_a_usage_error(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("\n  \n\n", encoding="utf-8")
    p = pb("compare", "--tool-parser", "builtin:hermes", name, cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2
    assert f"{name}: only blank lines" in p.stderr


def test_compare_of_comment_lines_only_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text("// nothing yet\n", encoding="utf-8")
    p = pb("compare", "--tool-parser", "builtin:hermes", "c.jsonl", cwd=tmp_path)
    assert p.returncode == 2 and "no transcripts to compare" in p.stderr


def test_chunk_size_without_stream_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("Hi", encoding="utf-8")
    p = pb("parse", "--tool-parser", "builtin:hermes", "--chunk-size", "3", "out.txt", cwd=tmp_path)
    assert p.returncode == 2 and "--chunk-size is for --stream" in p.stderr
    ok = pb(
        "parse", "--tool-parser", "builtin:hermes", "--stream", "--chunk-size", "3", "out.txt", cwd=tmp_path
    )
    assert ok.returncode == 0 and "Hi" in ok.stdout


def test_backend_names_are_normalised(tmp_path: Path) -> None:
    p = pb(
        "conformance", "-q", "--backend", "BUILTIN", "--family", "hermes", "--chunking", "oneshot",
        "--roundtrip", "0", "--report", "rep", cwd=tmp_path,
    )  # fmt: skip
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "BUILTIN" not in p.stdout and "builtin" in p.stdout
    assert list(json.loads((tmp_path / "rep" / "report.json").read_text())["backends"]) == ["builtin"]


# ---------------------------------------------------------------- 9: messages that say what happened


def test_resume_of_a_finished_run_says_nothing_new_was_written(tmp_path: Path) -> None:
    common = ("compare", "--bundled", "--family", "hermes", "--backends", "builtin", "--chunking", "token")
    first = pb(*common, "--format", "json", "-o", "out.jsonl", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    n = sum(1 for ln in (tmp_path / "out.jsonl").read_text().splitlines() if '"transcript"' in ln)
    assert f"wrote {n} comparisons to out.jsonl" in first.stderr
    again = pb(*common, "--format", "json", "-o", "out.jsonl", "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"nothing new to compare: all {n} transcripts were already in out.jsonl" in again.stderr
    assert "wrote" not in again.stderr


def test_diff_of_reports_from_different_backends_warns(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_report("vllm", "t1", "pass")), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(_report("sglang", "t1", "pass")), encoding="utf-8")
    p = pb("conformance", "diff", "a.json", "b.json", cwd=tmp_path)
    no_traceback(p)
    assert "warning: the reports share no backend" in p.stderr
    assert "REPORT_A ran vllm; REPORT_B ran sglang" in p.stderr


def test_conformance_help_names_the_default_chunkings_and_framework_logs(tmp_path: Path) -> None:
    text = pb("conformance", "--help", cwd=tmp_path, COLUMNS="200").stdout
    assert "(default: default)" not in text and "default: oneshot,char,token" in text
    assert "--framework-logs" in text


def test_conformance_accepts_framework_logs_like_compare_and_parse(tmp_path: Path) -> None:
    args = ("-q", "--backend", "builtin", "--family", "hermes", "--chunking", "oneshot", "--roundtrip", "0")
    for flag in ("--framework-logs", "--verbose"):
        p = pb("conformance", flag, *args, cwd=tmp_path)
        assert p.returncode == 0, (flag, p.stderr)


# ---------------------------------------------------------------- 4: transcript files


@pytest.mark.parametrize(
    "cmd", [("compare", "--tool-parser", "builtin:hermes"), ("conformance", "--transcripts")]
)
def test_a_broken_json_array_is_a_usage_error_naming_the_file(tmp_path: Path, cmd: tuple[str, ...]) -> None:
    (tmp_path / "broken.json").write_text('[{"output": 1}', encoding="utf-8")
    p = pb(*cmd, "broken.json", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2
    assert "error: broken.json: not JSON: Expecting ',' delimiter at line 1, column 15" in p.stderr
    assert "JSONDecodeError" not in p.stderr


def test_a_pretty_printed_transcript_object_is_read(tmp_path: Path) -> None:
    obj = {"id": "pretty", "family": "hermes", "output": "Hi " + HERMES_CALL}
    (tmp_path / "pretty.json").write_text(json.dumps(obj, indent=2), encoding="utf-8")
    p = pb("compare", "--tool-parser", "builtin:hermes", "pretty.json", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    assert "pretty" in p.stdout and '{"a": ":rocket:"}' in p.stdout


def test_compare_and_list_take_backend_names_in_any_case(tmp_path: Path) -> None:
    p = pb("compare", "--bundled", "--family", "hermes", "--backends", "BUILTIN", "--chunking", "token",
           "--format", "json", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout.splitlines()[-1])
    assert list(summary["backends"]) == ["builtin"]
    lst = pb("list", "--backend", "Builtin", "--brief", "--json", cwd=tmp_path)
    assert lst.returncode == 0, lst.stderr
    assert [b["name"] for b in json.loads(lst.stdout)["backends"]] == ["builtin"]

"""compare's records: repeated ids lose nothing on --resume, records without a family fail alike,
and the Python API takes one set of options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.cli import main
from parsebridge.comparison import iter_compare

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_resume_keeps_every_record_when_ids_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(
            json.dumps({"id": "a", "family": "hermes", "output": out}) + "\n" for out in ("x " + CALL, "y")
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    args = ["compare", str(log), "--backends", "builtin", "--format", "json", "-o", str(out)]
    assert main(args) == 0
    assert "transcript id 'a' comes again" in capsys.readouterr().err
    run, *first, summary = _records(out)
    assert [run["type"], summary["type"]] == ["run", "summary"]
    assert [r["type"] for r in first] == ["transcript", "transcript"]
    assert main([*args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert "all 2 transcripts were already in" in err
    assert [r for r in _records(out) if r["type"] == "transcript"] == first
    # interrupted after the first of the two: resume compares the second one, once
    out.write_text(json.dumps(run) + "\n" + json.dumps(first[0]) + "\n", encoding="utf-8")
    assert main([*args, "--resume"]) == 0
    again = [r for r in _records(out) if r["type"] == "transcript"]
    assert len(again) == 2 and again[1]["results"]["builtin:hermes"]["oneshot"]["content"] == "y"


def test_a_record_with_only_a_reasoning_family_is_a_record_without_a_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "r", "reasoning_family": "qwen3", "output": "a</think>b"}) + "\n")
    assert main(["compare", str(log)]) == 2
    assert "names no family" in capsys.readouterr().err


def test_iter_compare_takes_the_options_compare_takes() -> None:
    text = f"Hi {CALL} after"  # builtin's servers reading leaves " after" out of the content
    lossless = next(iter_compare(text, ["builtin:hermes"], conventions="lossless"))
    servers = next(iter_compare(text, ["builtin:hermes"]))
    assert lossless.results["builtin:hermes"]["oneshot"].content == "Hi  after"
    assert servers.results["builtin:hermes"]["oneshot"].content == "Hi "
    assert pb.compare(text, ["builtin:hermes"], conventions="lossless").comparisons[0] == lossless


def test_a_misspelt_option_is_named() -> None:
    with pytest.raises(pb.UnknownOptionError, match=r"no option 'convention'. Did you mean 'conventions'\?"):
        pb.compare("x", ["builtin:hermes"], convention="lossless")
    with pytest.raises(pb.UnknownOptionError, match=r"iter_compare\(\) takes no option 'top'"):
        iter_compare("x", ["builtin:hermes"], top=3)


def test_tool_parsers_and_tools_are_no_options_and_the_error_says_where_they_go() -> None:
    """``tool_parsers=`` was a bare TypeError that asked "did you mean 'reasoning_parsers'?" (the
    tool parsers are `specs`), and ``tools=`` one with no hint (they are each record's)."""
    with pytest.raises(pb.UnknownOptionError, match="second argument, specs") as info:
        pb.compare("x", tool_parsers=["builtin:hermes"])
    assert "reasoning_parsers'?" not in str(info.value)
    with pytest.raises(pb.UnknownOptionError, match='a record its "tools" list'):
        pb.compare("x", ["builtin:hermes"], tools=[{"name": "f"}])


def test_a_family_of_one_kind_gives_the_record_its_kind(tmp_path: Path) -> None:
    from parsebridge.conformance.transcripts import transcript_from

    assert transcript_from({"family": "qwen3", "output": "a</think>b"}, "r3").kind == "reasoning"
    assert transcript_from({"family": "hermes", "output": "x"}, "t").kind == "tool"
    assert transcript_from({"family": "qwen3", "kind": "tool", "output": "x"}, "t").kind == "tool"  # as given
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "r3", "family": "qwen3", "output": "think</think>answer"}) + "\n")
    result = pb.compare(log, backends=["builtin"])
    reading = result.comparisons[0].results["builtin:qwen3"]["oneshot"]
    assert (reading.reasoning, reading.content) == ("think", "answer")


def test_reasoning_started_leaves_a_record_with_its_own_prompt_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--reasoning-started` is for records that do not say; it set `reasoning_started_in_prompt`
    on a record whose prompt turned thinking off too, and that flag wins over the prompt: the answer
    was read as reasoning. A record without a prompt still gets it."""
    off = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    log = tmp_path / "log.jsonl"
    records = [{"id": "off", "output": "Just an answer", "prompt": off}, {"id": "none", "output": "Thinking"}]
    log.write_text("".join(json.dumps({**r, "family": "qwen3"}) + "\n" for r in records), encoding="utf-8")
    args = ["compare", str(log), "--backends", "builtin", "--chunking", "token", "--format", "json"]
    assert main([*args, "--reasoning-started", "--conventions", "lossless", "-q"]) == 0
    read = {
        r["transcript"]: r["results"]["builtin:qwen3"]["oneshot"]
        for r in map(json.loads, capsys.readouterr().out.splitlines())
        if r["type"] == "transcript"
    }
    assert (read["off"]["reasoning"], read["off"]["content"]) == (None, "Just an answer")
    assert (read["none"]["reasoning"], read["none"]["content"]) == ("Thinking", None)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"specs": [None]}, "compare: specs holds None, which is no spec"),
        ({"specs": 5}, "compare: specs is a name or a list of names, not int"),
        ({"specs": {"a": "builtin:hermes"}}, "compare: specs is a name or a list of names, not dict"),
        ({"reasoning_parsers": 5}, "compare: reasoning_parsers is a name or a list of names, not int"),
        ({"family": 5}, "compare: family is a name or a list of names, not int"),
        ({"family": "hermes", "backends": 3}, "compare: backends is a name or a list of names, not int"),
        ({"specs": ["builtin:hermes"], "progress": 5}, "compare: progress is a function"),
    ],
)
def test_options_of_the_wrong_type_are_typed_errors(options: dict, said: str) -> None:
    """Each was a bare TypeError from deep in the plan ('NoneType' is not iterable), or, for a dict of
    specs, its keys read as parser names ("no tool parser named 'a'")."""
    with pytest.raises(pb.InvalidSpecError, match=re.escape(said)):
        pb.compare("hi", **options)


def test_a_parser_spec_object_is_taken_as_its_string() -> None:
    spec = pb.ParserSpec.parse("hermes")
    assert list(pb.compare("hi", spec).comparisons[0].results) == ["builtin:hermes"]
    assert list(pb.compare("hi", [spec]).comparisons[0].results) == ["builtin:hermes"]

"""Issue 40, items 3-7: the same mistake fails the same way, through the real command in a subprocess.

An argument that names no file, records that name no family, a spec that cannot be imported, an
empty standard input: exit 2 with one line that says what to do. And the small things: counts
that agree with their noun, no trailing spaces in a table written to a file, ``--help`` that
exits 0 and lists the exit statuses, white space shown as such.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
from pathlib import Path

import pytest
from _cli_run import one_error_line, run

from parsebridge.cli import main

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
LINE_PARSER = """\
import parsebridge as pb


class LineParser(pb.ToolParserBase):
    backend = "python"

    def parse(self, text):
        return pb.ToolParseResult(content=text.upper())
"""

# ---------------------------------------------------------------- 3: an argument names a file


@pytest.mark.parametrize("arg", ["nope.log", "mine.jsnl", "answer"])
def test_compare_argument_that_names_no_file_is_an_error(tmp_path: Path, arg: str) -> None:
    line = one_error_line(run("compare", arg, "--tool-parser", "builtin:hermes", cwd=tmp_path))
    assert f"no such file: {arg}" in line and "--text" in line


@pytest.mark.parametrize("spec", ["builtin:hermes", "vllm:hermes", "native:hermes", "python:pkg.mod:Cls"])
def test_compare_spec_written_where_the_inputs_go_is_shown_its_option(tmp_path: Path, spec: str) -> None:
    line = one_error_line(run("compare", "--text", CALL, spec, cwd=tmp_path))
    assert (
        line
        == f"error: no such file: {spec} (a parser spec goes with --tool-parser {spec} or --reasoning-parser {spec})"
    )


def test_compare_glob_without_a_match_says_so(tmp_path: Path) -> None:
    line = one_error_line(run("compare", "logs/*.jsonl", "--tool-parser", "builtin:hermes", cwd=tmp_path))
    assert line == "error: no file matches 'logs/*.jsonl'"


def test_compare_literal_text_comes_in_with_text(tmp_path: Path) -> None:
    p = run(
        "compare", "--text", "Hi " + CALL, "--tool-parser", "builtin:hermes", "--format", "json", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    record = json.loads(p.stdout.splitlines()[1])  # after the run's settings
    assert record["transcript"] == "text"
    assert record["results"]["builtin:hermes"]["oneshot"]["tool_calls"][0]["name"] == "f"


# ---------------------------------------------------------------- 4: records that name no family


@pytest.mark.parametrize("extra", [(), ("--fail-on-diff",), ("--format", "json")])
def test_compare_records_without_a_family_and_no_spec_exit_2(tmp_path: Path, extra: tuple[str, ...]) -> None:
    (tmp_path / "mine.jsonl").write_text('{"id": "a", "output": "hi"}\n{"id": "b", "output": "yo"}\n')
    line = one_error_line(run("compare", "mine.jsonl", *extra, cwd=tmp_path))
    assert "mine.jsonl: transcript 'a' names no family" in line and "--family NAME" in line


def test_compare_records_with_a_family_still_run(tmp_path: Path) -> None:
    (tmp_path / "mine.jsonl").write_text(
        json.dumps({"id": "a", "family": "hermes", "output": "Hi " + CALL}) + "\n"
    )
    p = run("compare", "mine.jsonl", "--backends", "builtin", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1])["transcripts"] == 1


# ---------------------------------------------------------------- 5: a spec that cannot build


@pytest.mark.parametrize("spec", ["python:nosuch:LineParser", "builtin:hermez"])
def test_conformance_with_a_spec_that_cannot_build_exits_2_like_compare(tmp_path: Path, spec: str) -> None:
    (tmp_path / "f.jsonl").write_text(json.dumps({"id": "a", "family": "hermes", "output": "hi"}) + "\n")
    conf = one_error_line(
        run("conformance", "-q", "--tool-parser", spec, "--transcripts", "f.jsonl", cwd=tmp_path)
    )
    comp = one_error_line(run("compare", "f.jsonl", "--tool-parser", spec, cwd=tmp_path))
    assert conf == comp


# ---------------------------------------------------------------- 6: python: specs from the current folder


def _console_script() -> list[str]:
    script = Path(sys.executable).parent / "parsebridge"
    if not script.exists():
        found = shutil.which("parsebridge")
        if found is None:
            pytest.skip("no installed `parsebridge` console script next to this Python (pip install .)")
        script = Path(found)
    return [str(script)]


def test_console_script_and_python_m_both_import_specs_from_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "my_parsers.py").write_text(LINE_PARSER)
    (tmp_path / "out.txt").write_text("hi")
    args = ("parse", "--tool-parser", "python:my_parsers:LineParser", "--json", "out.txt")
    module = run(*args, cwd=tmp_path)
    script = run(*args, cwd=tmp_path, command=_console_script())
    assert module.returncode == script.returncode == 0, (module.stderr, script.stderr)
    assert json.loads(module.stdout)["result"]["content"] == "HI"
    assert module.stdout == script.stdout


def test_an_unimportable_spec_names_the_fix_the_same_way_from_both(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("hi")
    args = ("parse", "--tool-parser", "python:my_parserz:LineParser", "out.txt")
    module = one_error_line(run(*args, cwd=tmp_path))
    script = one_error_line(run(*args, cwd=tmp_path, command=_console_script()))
    assert module == script
    assert (
        "No module named 'my_parserz'" in module and "run from the folder that holds my_parserz.py" in module
    )
    assert "PYTHONPATH" in module


# ---------------------------------------------------------------- 7: the small things


def test_conformance_without_report_does_not_point_at_one(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text(
        "".join(
            json.dumps({"id": f"t{i}", "family": "hermes", "output": "x", "expected": {"content": "y"}})
            + "\n"
            for i in range(3)
        )
    )
    args = (
        "conformance",
        "-q",
        "--backend",
        "builtin",
        "--transcripts",
        "f.jsonl",
        "--show",
        "1",
        "--chunking",
        "oneshot",
    )
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "see the report" not in p.stdout and "--report DIR writes them all" in p.stdout
    with_report = run(*args, "--report", "rep", cwd=tmp_path)
    assert "see the report in rep" in with_report.stdout


def test_counts_agree_with_their_noun(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text(json.dumps({"id": "a", "family": "hermes", "output": "hi"}) + "\n")
    p = run(
        "conformance",
        "-q",
        "--backend",
        "builtin",
        "--transcripts",
        "f.jsonl",
        "--chunking",
        "oneshot",
        cwd=tmp_path,
    )
    assert "1 transcript × 1 backend × 1 chunking: 1 result in" in p.stdout, p.stdout
    p = run("compare", "--text", "hi", "--tool-parser", "builtin:hermes", cwd=tmp_path)
    assert "1 transcript:" in p.stdout and "1 transcripts" not in p.stdout


def _report(path: Path, backends: dict[str, str], parsers: dict[str, list[str]]) -> None:
    results = [
        {
            "backend": b,
            "family": "hermes",
            "transcript": "t",
            "chunking": "oneshot",
            "status": "pass",
            "spec": f"{b}:hermes",
        }
        for b in backends
    ]
    parsers_by_kind = {b: {"tool": names, "reasoning": []} for b, names in parsers.items()}
    path.write_text(json.dumps({"backends": backends, "results": results, "parsers": parsers_by_kind}))


def test_conformance_diff_of_different_backends_lists_no_parser_as_vanished(tmp_path: Path) -> None:
    _report(
        tmp_path / "a.json", {"builtin": "1", "vllm": "0.33"}, {"builtin": ["hermes"], "vllm": ["hermes"]}
    )
    _report(tmp_path / "b.json", {"builtin": "1"}, {"builtin": ["hermes"]})
    p = run("conformance", "diff", "a.json", "b.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "vllm not compared" in p.stderr
    assert json.loads(p.stdout)["parsers_vanished"] == {}


@pytest.mark.parametrize("blob", [b"\x95 not text", b'{"output": "a"}\n\xff\n'])
def test_binary_stdin_to_compare_is_refused_as_a_binary_file_is(tmp_path: Path, blob: bytes) -> None:
    """It was read as a lone surrogate: 'stdin: output: a lone surrogate U+DC95 is not text', or
    for a bad line of JSON Lines '<stdin>:2: not JSON'; a file names the byte."""
    (tmp_path / "bin.dat").write_bytes(blob)
    from_file = one_error_line(run("compare", "bin.dat", "--tool-parser", "builtin:hermes", cwd=tmp_path))
    from_stdin = one_error_line(
        run("compare", "-", "--tool-parser", "builtin:hermes", cwd=tmp_path, stdin=blob)
    )
    assert from_file.replace("bin.dat", "<stdin>") == from_stdin
    assert from_stdin.startswith("error: <stdin>: not UTF-8 text (byte 0x")
    assert " at offset " in from_stdin  # the file is read again for the place, a stream counted
    # a pipe named by path (read once, as standard input is) names the same place
    from_pipe = one_error_line(
        run("compare", "/dev/stdin", "--tool-parser", "builtin:hermes", cwd=tmp_path, stdin=blob)
    )
    assert from_pipe.replace("/dev/stdin", "<stdin>") == from_stdin


def test_empty_stdin_is_refused_as_an_empty_file_is(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    from_file = one_error_line(run("compare", "empty.txt", "--tool-parser", "builtin:hermes", cwd=tmp_path))
    from_stdin = one_error_line(
        run("compare", "-", "--tool-parser", "builtin:hermes", cwd=tmp_path, stdin=b"")
    )
    assert from_file == "error: empty.txt: empty file (expected transcripts or one raw output)"
    assert from_stdin == "error: <stdin>: empty (expected transcripts or one raw output)"
    blank = one_error_line(
        run("compare", "-", "--tool-parser", "builtin:hermes", cwd=tmp_path, stdin=b"\n \n")
    )
    assert "<stdin>: only blank lines" in blank
    # leading blank lines of a real output are kept
    p = run(
        "compare",
        "-",
        "--tool-parser",
        "builtin:hermes",
        "--format",
        "json",
        cwd=tmp_path,
        stdin=b"\n\nhello",
    )
    assert (
        json.loads(p.stdout.splitlines()[1])["results"]["builtin:hermes"]["oneshot"]["content"] == "\n\nhello"
    )


def test_a_table_written_to_a_file_has_no_trailing_spaces(tmp_path: Path) -> None:
    p = run("compare", "--text", "Hi " + CALL, "--tool-parser", "builtin:hermes", "-o", "t.txt", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "t.txt").read_text()
    assert text.startswith("text\n")
    assert [line for line in text.splitlines() if line != line.rstrip()] == []


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "parsebridge.plugins", "--help"],
        [sys.executable, "-m", "parsebridge", "conformance", "diff", "--help"],
        [sys.executable, "-m", "parsebridge", "conformance", "support", "--help"],
    ],
    ids=["plugins", "diff", "support"],
)
def test_help_exits_0_and_lists_the_exit_statuses(tmp_path: Path, command: list[str]) -> None:
    p = run(cwd=tmp_path, command=command)
    assert p.returncode == 0, p.stderr
    assert "exit status:" in p.stdout and "  2    usage error" in p.stdout


def test_plugins_module_usage_error_exits_2(tmp_path: Path) -> None:
    p = run("sglang", cwd=tmp_path, command=[sys.executable, "-m", "parsebridge.plugins"])
    assert p.returncode == 2 and "usage: python -m parsebridge.plugins vllm" in p.stderr


def test_support_without_reports_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{}")
    assert "give report.json files" in one_error_line(run("conformance", "support", cwd=tmp_path))
    assert "is not a parsebridge conformance report" in one_error_line(
        run("conformance", "diff", "bad.json", "bad.json", cwd=tmp_path)
    )


def test_white_space_only_content_is_shown_as_such(tmp_path: Path) -> None:
    (tmp_path / "ws.txt").write_text("   ")
    p = run("parse", "--tool-parser", "builtin:hermes", "ws.txt", cwd=tmp_path)
    assert "'   ' (white space only)" in p.stdout
    p = run("parse", "--tool-parser", "builtin:hermes", "--stream", "ws.txt", cwd=tmp_path)
    assert "'   ' (white space only)" in p.stdout and "1 non-empty delta streamed" in p.stdout
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "w", "output": "\n\n"}) + "\n")
    p = run("compare", "t.jsonl", "--tool-parser", "builtin:hermes", cwd=tmp_path)
    assert "'\\n\\n' (white space only)" in p.stdout


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_lone_surrogate_is_refused_where_it_is_read(tmp_path: Path, fmt: str) -> None:
    """JSON's ``\\ud83d`` without its other half reads as a lone surrogate, which no output can encode:
    it used to crash the table (UnicodeEncodeError) and the json (PydanticSerializationError), exit 1."""
    (tmp_path / "surr.jsonl").write_text(
        '{"id": "ok", "family": "hermes", "output": "a pair \\ud83d\\ude00 is fine"}\n'
        '{"id": "s1", "family": "hermes", "output": "lone \\ud83d here"}\n',
        encoding="utf-8",
    )
    p = run("compare", "surr.jsonl", "--backends", "builtin", "--format", fmt, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [  # one line; json has printed line 1's record by then
        "error: surr.jsonl:2: output: a lone surrogate U+D83D is not text (half of a UTF-16 pair: an escape "
        "such as \\ud83d without its other half, or a byte that is not UTF-8)"
    ]


# ---------------------------------------------------------------- parse: an option given twice


@pytest.mark.parametrize(
    ("option", "first", "second"),
    [
        ("--tool-parser", "builtin:hermes", "builtin:mistral"),
        ("--reasoning-parser", "builtin:qwen3", "builtin:deepseek_r1"),
        ("--chunk-size", "3", "5"),
        ("--on-error", "fallback", "raise"),
        ("--conventions", "servers", "lossless"),
    ],
)
def test_parse_refuses_an_option_given_twice_with_two_values(
    tmp_path: Path, option: str, first: str, second: str
) -> None:
    """The last one was taken, silently: ``--tool-parser a --tool-parser b`` parsed with b alone."""
    (tmp_path / "out.txt").write_text(f"Hi {CALL}", encoding="utf-8")
    base = ["parse", "--tool-parser", "builtin:hermes", "--stream", "out.txt"]
    p = run(*base, option, first, option, second, cwd=tmp_path)
    assert p.returncode == 2, p.stdout
    assert (
        f"{option} is given twice ({first!r}, then {second!r})".replace("'3'", "3").replace("'5'", "5")
        in p.stderr
    )
    assert run(*base, option, first, option, first, cwd=tmp_path).returncode == 0  # the same twice: fine


def test_parse_refuses_reasoning_started_and_its_negation_together(tmp_path: Path) -> None:
    """``--reasoning-started --no-reasoning-started``: the last won, silently."""
    (tmp_path / "out.txt").write_text("why</think>so", encoding="utf-8")
    both = ["--reasoning-started", "--no-reasoning-started"]
    p = run("parse", "--reasoning-parser", "builtin:qwen3", *both, "out.txt", cwd=tmp_path)
    assert p.returncode == 2 and "are both given" in p.stderr, p.stderr


def test_parse_refuses_tools_and_output_both_from_standard_input(tmp_path: Path) -> None:
    """`--tools -` read standard input to its end, and the output, `-` too, was then empty: parsed
    as nothing, exit 0."""
    tools = b'[{"name": "f"}]'
    line = one_error_line(
        run("parse", "--tool-parser", "builtin:hermes", "--tools", "-", "-", cwd=tmp_path, stdin=tools)
    )
    assert "--tools - and the output - both read standard input" in line


def test_list_brief_json_says_the_parsers_were_not_listed(tmp_path: Path) -> None:
    """The table says "(not listed with --brief)"; the JSON said ``"tool_parsers": []``, which a
    script reads as a backend with no parsers. Not looked up is null."""
    p = run("list", "--brief", "--json", "--backend", "builtin", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (builtin,) = json.loads(p.stdout)["backends"]
    assert builtin["tool_parsers"] is None and builtin["reasoning_parsers"] is None
    p = run("list", "--json", "--backend", "builtin", cwd=tmp_path)
    assert "hermes" in json.loads(p.stdout)["backends"][0]["tool_parsers"]


def test_list_takes_backends_comma_separated_and_by_alias_as_conformance_does(tmp_path: Path) -> None:
    """`list --backend builtin,python` was "unknown parser backend 'builtin,python'", and
    `--backend native` (Dynamo's seed-design name, read everywhere else) was unknown too."""
    p = run("list", "--brief", "--json", "--backend", "builtin,python", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [b["name"] for b in json.loads(p.stdout)["backends"]] == ["builtin", "python"]
    p = run("list", "--brief", "--json", "--backend", "native", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [b["name"] for b in json.loads(p.stdout)["backends"]] == ["dynamo"]


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "--bundled", "--family", "hermes", "--top", "-1"),
        ("compare", "--bundled", "--family", "hermes", "--show", "-2"),
        ("conformance", "--family", "hermes", "--show", "-1"),
        ("conformance", "--family", "hermes", "--roundtrip", "-3"),
    ],
)
def test_a_negative_count_is_a_usage_error(tmp_path: Path, args: tuple[str, ...]) -> None:
    """compare --top -1 failed at the end of the run (exit 1, `IndexError: list index out of
    range`); the other counts were read as Python slices or ignored without a word."""
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 2 and "must be 0 or more, not -" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------- a list option given empty


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "--text", CALL, "--tool-parser", "builtin:hermes", "--backends", ""],
        ["compare", "--text", CALL, "--tool-parser", "builtin:hermes", "--chunking", " , "],
        ["compare", "--bundled", "--family", ""],
        ["conformance", "--backend", "", "--family", "hermes"],
        ["conformance", "--backend", "builtin", "--family", ""],
        ["conformance", "--backend", "builtin", "--family", "hermes", "--chunking", ""],
        ["conformance", "--backend", "builtin", "--transcript", ","],
        ["list", "--brief", "--backend", ""],  # "unknown parser backend ''"
    ],
)
def test_a_list_option_that_names_nothing_is_refused(tmp_path: Path, args: list[str]) -> None:
    """``--backends ''`` read as the option left out: every backend, family or chunking ran."""
    option = next(a for a, b in itertools.pairwise(args) if not b.strip(" ,"))
    line = one_error_line(run(*args, cwd=tmp_path))
    assert line == f"error: {option} names nothing (give a comma-separated list, or leave it out)"


@pytest.mark.parametrize("flag", ["--reasoning-started", "--no-reasoning-started"])
def test_parse_reasoning_started_without_a_reasoning_parser_is_a_usage_error(
    tmp_path: Path, flag: str, capsys
) -> None:
    """It was silently unused (no reasoning parser to tell), as --tools without a tool parser was."""
    out = tmp_path / "out.txt"
    out.write_text("<think>a</think>" + CALL, encoding="utf-8")
    assert main(["parse", "--tool-parser", "builtin:hermes", flag, str(out)]) == 2
    assert (
        f"{flag} says where a reasoning parser starts: give --reasoning-parser SPEC too"
        in capsys.readouterr().err
    )
    assert main(["parse", "--tool-parser", "hermes", "--reasoning-parser", "qwen3", flag, str(out)]) == 0


def test_parse_an_empty_spec_is_named(tmp_path: Path, capsys) -> None:
    """``--tool-parser ''`` said "give --tool-parser SPEC and/or --reasoning-parser SPEC", as if no
    flag had been given."""
    out = tmp_path / "out.txt"
    out.write_text(CALL, encoding="utf-8")
    assert main(["parse", "--tool-parser", "", str(out)]) == 2
    assert "--tool-parser '' names no parser: give a spec such as builtin:hermes" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", [[], ["--jobs", "1"]], ids=["no-jobs", "jobs-1"])
def test_compare_unordered_without_workers_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], jobs: list[str]
) -> None:
    """--unordered only changes anything with worker processes or Ray; alone it was silently ignored."""
    argv = ["compare", "--text", CALL, "--tool-parser", "builtin:hermes", "--unordered", *jobs]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--unordered" in err and "--jobs N" in err and "--executor ray" in err


def test_roundtrip_and_written_counts_agree_with_their_noun(tmp_path: Path) -> None:
    """`conformance --roundtrip`'s line said "1 families, 1 examples"; compare -o "wrote 1 comparisons"."""
    from parsebridge.conformance.roundtrip import summary_lines

    one = {"backends": {"builtin": {"hermes": {"inputs": 1, "clean": 1, "classes": {}}}}}
    assert summary_lines(one) == ["builtin: 1 family, 1 example, 1 read back exactly; divergences: none"]
    p = run(
        "compare",
        "--text",
        "hi",
        "--tool-parser",
        "builtin:hermes",
        "--format",
        "json",
        "-o",
        "o.jsonl",
        cwd=tmp_path,
    )
    assert "wrote 1 comparison to" in p.stderr, p.stderr


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "bad.json: empty file, not a conformance report"),
        (b'{"results": [1]}\xe9', "bad.json: not UTF-8 text (byte 0xe9 at offset 16, line 1)"),
        (b'{"results": [}', "bad.json: not a JSON conformance report (Expecting value at line 1, column 14)"),
        (b'{"results": 5}', "bad.json is not a parsebridge conformance report ('results' is not a list"),
        (
            b'{"results": [1, null]}',
            "bad.json is not a parsebridge conformance report ('results' is not a list",
        ),
    ],
)
def test_a_report_that_is_not_one_is_a_usage_error_naming_it(
    tmp_path: Path, content: bytes, said: str
) -> None:
    """A report that is not UTF-8 gave the codec's own message; one whose results are not objects
    ended in exit 1 with "TypeError: 'int' object is not iterable"."""
    (tmp_path / "bad.json").write_bytes(content)
    (tmp_path / "good.json").write_text(json.dumps({"results": []}))
    for args in (
        ["diff", "good.json", "bad.json"],
        ["support", "bad.json"],
    ):
        assert said in one_error_line(run("conformance", *args, cwd=tmp_path))


@pytest.mark.parametrize(
    "args",
    [
        ["parse", "--tool-parser", "builtin:hermes", "-"],
        ["compare", "--tool-parser", "builtin:hermes", "-"],
        ["conformance", "--backend", "builtin", "--transcripts", "-"],
    ],
    ids=["parse", "compare", "conformance"],
)
def test_reading_a_closed_standard_input_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    """``-`` in a process started with standard input closed (``<&-``) ended in exit 1 with
    "AttributeError: 'NoneType' object has no attribute 'buffer'"."""
    closed = ["sh", "-c", '"$0" -m parsebridge "$@" <&-', sys.executable]
    line = one_error_line(run(*args, cwd=tmp_path, command=closed))
    assert line == "error: <stdin>: standard input is closed: give a file, or pipe the input in"


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--brief"],
        ["parse", "--tool-parser", "builtin:hermes", "--json", "out.txt"],
        ["compare", "--text", "hi", "--tool-parser", "builtin:hermes", "--format", "json"],
    ],
    ids=["list", "parse", "compare"],
)
def test_printing_to_a_closed_standard_output_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    """A command started with standard output closed (``>&-``) ended in exit 1 with
    "AttributeError: 'NoneType' object has no attribute 'flush'"; an output file still works."""
    (tmp_path / "out.txt").write_text("hi")
    closed = ["sh", "-c", '"$0" -m parsebridge "$@" >&-', sys.executable]
    line = one_error_line(run(*args, cwd=tmp_path, command=closed))
    assert line.startswith("error: standard output is closed: redirect it (> FILE)")
    to_file = [
        "compare",
        "--text",
        "hi",
        "--tool-parser",
        "builtin:hermes",
        "--format",
        "html",
        "-o",
        "p.html",
    ]
    p = run(*to_file, cwd=tmp_path, command=closed)
    assert p.returncode == 0 and (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>"), p.stderr

"""Transcript loading: lenient for logs, strict for fixtures, streamed for JSONL."""

from __future__ import annotations

import gzip
import io
import json
import types

import pytest

from parsebridge.comparison.inputs import stdin_transcripts as _stdin_transcripts
from parsebridge.conformance import (
    TranscriptError,
    bundled_transcripts,
    fixtures_dir,
    iter_transcripts,
    load_transcripts,
    select,
    transcript_from,
    validate_transcripts,
)
from parsebridge.conformance.log_files import iter_log


def test_full_record_round_trips_and_keeps_extra_keys():
    t = transcript_from(
        {
            "id": "a",
            "family": "hermes",
            "output": "x",
            "expected": {"content": "x", "tool_calls": [{"name": "f", "invalid_arguments": "{"}]},
            "known_divergences": [{"backend": "vllm", "classes": ["content_lost"], "reason": "old bug"}],
            "model": "my-model",
        }
    )
    assert t.kind == "tool" and t.tools == [] and t.reasoning_started_in_prompt is False
    assert t.model_extra == {"model": "my-model"}
    assert t.expected is not None
    assert t.expected.normalized()["tool_calls"] == [{"name": "f", "invalid_arguments": "{"}]
    assert t.expected_for("vllm") is t.expected


def test_expected_is_strict_about_typos():
    with pytest.raises(TranscriptError):
        transcript_from({"output": "x", "expected": {"contnet": "x"}})
    with pytest.raises(TranscriptError):
        transcript_from(
            {
                "output": "x",
                "expected": {"tool_calls": [{"name": "f", "arguments": {}, "invalid_arguments": "{"}]},
            }
        )


def test_openai_ish_log_lines_are_accepted():
    assert transcript_from({"output": "o"}, "log:1").id == "log:1"
    assert transcript_from({"id": 7, "text": "t"}).output == "t"
    t = transcript_from(
        {
            "choices": [{"message": {"content": "m"}}],
            "request": {"tools": [{"type": "function", "function": {"name": "f"}}]},
        }
    )
    assert t.output == "m" and t.tools == [{"type": "function", "function": {"name": "f"}}]
    assert transcript_from("bare string", "s").output == "bare string"
    with pytest.raises(TranscriptError):
        transcript_from({"id": "no-output"})


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            {"content": "Sure.", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]},
            "tool_calls",
        ),
        (
            {"content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]},
            "tool_calls",
        ),
        ({"content": "Hi", "reasoning_content": "hmm"}, "reasoning_content"),
        ({"content": "Hi", "reasoning": "hmm"}, "reasoning"),
    ],
)
def test_a_message_the_servers_parsers_split_is_not_read_as_raw_output(tmp_path, message, said):
    """A logged chat completion whose message has tool_calls (or reasoning) was read as the raw
    output 'Sure.': compare then showed every parser reading no call, where the model made one.
    Its content is what the server's parsers left, so the record is refused, saying why."""
    p = tmp_path / "served.jsonl"
    p.write_text(json.dumps({"id": "r1", "choices": [{"index": 0, "message": message}]}) + "\n")
    with pytest.raises(
        TranscriptError, match=rf"served.jsonl:1: .*choices\[0\].message has {said}.* not the raw"
    ):
        list(iter_transcripts(p))
    plain = {"id": "r2", "choices": [{"message": {"content": "raw <tool_call>", "tool_calls": []}}]}
    assert transcript_from(plain).output == "raw <tool_call>"  # (an empty list: no parser split it)


def test_jsonl_is_a_stream_with_line_ids(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text(json.dumps({"output": "one"}) + "\n\n" + json.dumps({"id": "b", "output": "two"}) + "\n")
    it = iter_transcripts(p)
    assert isinstance(it, types.GeneratorType)
    first = next(it)
    assert (first.id, first.output) == ("log:1", "one")
    assert [t.id for t in it] == ["b"]


def test_jsonl_bad_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"output": "ok"}\n{not json}\n')
    with pytest.raises(TranscriptError, match=r"bad.jsonl:2"):
        list(iter_transcripts(p))


def test_a_lone_surrogate_names_file_line_and_field(tmp_path):
    p = tmp_path / "surr.jsonl"
    p.write_text(
        '{"output": "pair \\ud83d\\ude00"}\n'
        '{"output": "ok", "tools": [{"function": {"name": "f\\udc80"}}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        TranscriptError, match=r"surr.jsonl:2: tools\[0\]\.function\.name: a lone surrogate U\+DC80"
    ):
        [t.output for t in iter_transcripts(p)]
    with pytest.raises(TranscriptError, match=r"^text: output: a lone surrogate U\+D83D"):
        transcript_from({"output": "lone \ud83d"}, "text")
    assert transcript_from(json.loads(r'{"output": "pair \ud83d\ude00"}')).output == "pair \U0001f600"


def test_yaml_and_bare_text_and_json_list(tmp_path):
    y = tmp_path / "hand.yaml"
    y.write_text("- id: y1\n  family: hermes\n  output: |\n    hello\n- output: two\n")
    txt = tmp_path / "one-output.txt"
    txt.write_text("<tool_call>raw</tool_call>")
    j = tmp_path / "list.json"
    j.write_text(json.dumps([{"output": "a"}, {"output": "b"}]))
    ts = load_transcripts([y, txt, j])
    assert [t.id for t in ts] == ["y1", "hand:2", "one-output", "list:1", "list:2"]
    assert ts[0].output == "hello\n"
    assert ts[2].output == "<tool_call>raw</tool_call>"


def test_validation_finds_duplicates_unknown_families_and_bad_classes():
    ts = [
        transcript_from({"id": "a", "family": "hermes", "output": "x"}),
        transcript_from({"id": "a", "family": "hermes", "output": "x"}),
        transcript_from({"id": "b", "family": "no_such_family", "output": "x"}),
        transcript_from({"id": "c", "family": "qwen3", "kind": "reasoning", "output": "x"}),
        transcript_from({"id": "d", "family": "hermes", "reasoning_family": "nope", "output": "x"}),
        transcript_from(
            {
                "id": "e",
                "family": "hermes",
                "output": "x",
                "known_divergences": [{"backend": "vllm", "classes": ["not_a_class"], "reason": "r"}],
            }
        ),
        transcript_from({"id": "f", "family": "hermes", "output": "ab", "token_texts": ["a", "c"]}),
    ]
    problems = validate_transcripts(ts, strict=False)
    text = "\n".join(problems)
    assert "a: duplicate id" in text
    assert "no_such_family" in text
    assert "reasoning family 'nope'" in text
    assert "not_a_class" in text
    assert "token_texts" in text
    assert not any(p.startswith("c:") for p in problems)
    with pytest.raises(TranscriptError):
        validate_transcripts(ts)


def test_family_aliases_resolve():
    t = transcript_from({"family": "qwen25", "output": "x"})
    assert t.family_name == "hermes"
    assert [x.id for x in select([t], families=["hermes"])] == [t.id]
    assert list(select([t], families=["mistral"])) == []
    assert list(select([t], kinds=["reasoning"])) == []


def test_bundled_fixtures_are_valid_when_present():
    if not fixtures_dir().is_dir():
        pytest.skip("no bundled fixtures in this tree yet")
    ts = bundled_transcripts()
    assert ts, "fixtures directory is empty"
    assert validate_transcripts(ts, strict=False) == []
    hermes = bundled_transcripts(["qwen25"], ["tool"])
    assert hermes and all(t.family_name == "hermes" for t in hermes)


# ---------------------------------------------------------------- files as users write them
# Every error names its place once, in one line.


def _error(path) -> str:
    with pytest.raises(TranscriptError) as info:
        list(iter_transcripts(path))
    return str(info.value)


def test_a_broken_array_names_the_file_and_position(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('[{"output": 1}')
    assert _error(p) == f"{p}: not JSON: Expecting ',' delimiter at line 1, column 15"


@pytest.mark.parametrize("lead", ["\n", "  \n\t", "\ufeff"])
def test_an_array_after_white_space_or_a_bom_is_an_array(tmp_path, lead):
    p = tmp_path / "ws_arr.json"
    p.write_text(lead + json.dumps([{"output": "a"}, {"output": "b", "kind": "bogus"}]), encoding="utf-8")
    assert _error(p) == f"{p}: item 2: not a valid transcript: kind: Input should be 'tool' or 'reasoning'"
    p.write_text(lead + json.dumps([{"output": "a"}, {"output": "b"}]), encoding="utf-8")
    assert [t.id for t in iter_transcripts(p)] == ["ws_arr:1", "ws_arr:2"]


def test_a_pretty_printed_object_is_one_transcript(tmp_path):
    p = tmp_path / "one.json"
    p.write_text(json.dumps({"family": "hermes", "output": "Hi", "tags": ["x"]}, indent=2))
    (t,) = iter_transcripts(p)
    assert (t.id, t.family, t.output, t.tags) == ("one", "hermes", "Hi", ["x"])


def test_json_lines_in_a_json_file_stay_json_lines(tmp_path):
    p = tmp_path / "log.json"
    p.write_text('// a log\n{"output": "a"}\n\n{"output": "b"}\n')
    assert [t.id for t in iter_transcripts(p)] == ["log:2", "log:4"]


def test_a_missing_output_is_one_line_without_the_validation_dump(tmp_path):
    p = tmp_path / "missing.jsonl"
    p.write_text('{"family": "hermes"}\n')
    msg = _error(p)
    assert msg.startswith(f"{p}:1: not a valid transcript: no model output")
    assert "\n" not in msg and "pydantic" not in msg and "input_value" not in msg


def test_malformed_tools_are_the_record_s_fault(tmp_path):
    """Refused where the record is read, naming file, line and tool, not as a backend error per spec."""
    p = tmp_path / "tools.jsonl"
    p.write_text('{"output": "hi"}\n{"output": "x", "tools": [{"type": "function"}]}\n')
    assert _error(p).startswith(f'{p}:2: not a valid transcript: tools: tool 0 has no "function" object (')
    p.write_text(json.dumps({"output": "x", "request": {"tools": [{"name": ""}]}}) + "\n")
    assert _error(p).startswith(f'{p}:1: not a valid transcript: tools: tool 0 has no "name" string')
    # request.tools that are no list were left out, the record then read as declaring no tools
    p.write_text(json.dumps({"output": "x", "request": {"tools": {"name": "f"}}}) + "\n")
    assert _error(p) == f"{p}:1: not a valid transcript: tools: Input should be a valid list"


def test_both_tool_forms_load(tmp_path):
    p = tmp_path / "forms.jsonl"
    flat = {"name": "f", "parameters": {"type": "object"}}
    openai = {"type": "function", "function": {"name": "g"}}
    p.write_text(json.dumps({"output": "x", "tools": [flat, openai]}) + "\n")
    (t,) = iter_transcripts(p)
    assert t.tools == [flat, openai]


def test_an_unknown_expected_key_is_named(tmp_path):
    p = tmp_path / "typo.yaml"
    p.write_text("- output: x\n  expected: {contnet: x}\n")
    assert _error(p) == f"{p}: item 1: not a valid transcript: expected.contnet: unknown key"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a: [1, 2\n", "expected ',' or ']', but got '<stream end>' at line 2, column 1"),
        ("a: b: c\n", "mapping values are not allowed here at line 1, column 5"),
    ],
)
def test_a_file_that_is_not_yaml_is_one_line_naming_where(tmp_path, text, says):
    """PyYAML's message spans lines (context, a quoted copy of the text, a caret), so the CLI's
    one-line error was seven lines."""
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    assert _error(p) == f"{p}: not YAML: {says}"


def test_gzip_and_stdin_name_the_place_once(tmp_path):
    gz = tmp_path / "log.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"output": "a"}\n[1]\n'))
    with pytest.raises(TranscriptError) as info:
        list(iter_log(gz))
    assert str(info.value) == f"{gz}:2: a transcript is a JSON object, not an array"
    with pytest.raises(TranscriptError) as info:
        list(_stdin_transcripts(io.StringIO('{"output": "a"}\n{"family": "x"}\n')))
    assert str(info.value).startswith("<stdin>:2: not a valid transcript: no model output")


def test_stdin_after_a_byte_order_mark_is_read_as_a_file_is():
    """A BOM before stdin's first `{` made its JSON Lines one raw output (the whole log as the text of
    one transcript), and a raw output kept the BOM; a file's BOM is dropped."""
    (t,) = _stdin_transcripts(io.StringIO('\ufeff{"id": "a", "output": "x"}\n'))
    assert (t.id, t.output) == ("a", "x")
    (raw,) = _stdin_transcripts(io.StringIO("\ufeffHello"))
    assert raw.output == "Hello"


def test_a_directory_is_read_as_compare_reads_one(tmp_path):
    """`load_transcripts` (the library, the pytest plugin) reads a directory by compare's rule:
    subfolders, .ndjson and .jsonl.gz too; notes beside the logs are left out."""
    line = '{"id": "%s", "family": "hermes", "output": "x"}\n'
    (tmp_path / "a.jsonl").write_text(line % "a", encoding="utf-8")
    (tmp_path / "b.ndjson").write_text(line % "b", encoding="utf-8")
    (tmp_path / "day").mkdir()
    (tmp_path / "day" / "c.jsonl.gz").write_bytes(gzip.compress((line % "c").encode()))
    (tmp_path / "README.md").write_text("notes", encoding="utf-8")
    assert [t.id for t in load_transcripts([tmp_path])] == ["a", "b", "c"]


def test_a_record_family_with_a_typo_names_the_nearest_family():
    """It said only "tool family 'hermse' is not in the table", where --family names the nearest."""
    from parsebridge.conformance.subject import target_for

    target = target_for(transcript_from({"output": "x", "family": "hermse"}), "builtin")
    assert target.unsupported == "tool family 'hermse' is not in the table (did you mean 'hermes'?)"

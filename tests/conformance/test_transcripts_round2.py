"""Transcript files as users write them (issue 30, item 4): every error names its place once, in one line."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from parsebridge.compare.inputs import stdin_transcripts as _stdin_transcripts
from parsebridge.compare.logs import iter_log
from parsebridge.conformance.transcripts import TranscriptError, iter_transcripts


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


def test_an_unknown_expected_key_is_named(tmp_path):
    p = tmp_path / "typo.yaml"
    p.write_text("- output: x\n  expected: {contnet: x}\n")
    assert _error(p) == f"{p}: item 1: not a valid transcript: expected.contnet: unknown key"


def test_gzip_and_stdin_name_the_place_once(tmp_path):
    gz = tmp_path / "log.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"output": "a"}\n[1]\n'))
    with pytest.raises(TranscriptError) as info:
        list(iter_log(gz))
    assert str(info.value) == f"{gz}:2: a transcript is a JSON object, not an array"
    with pytest.raises(TranscriptError) as info:
        list(_stdin_transcripts(io.StringIO('{"output": "a"}\n{"family": "x"}\n')))
    assert str(info.value).startswith("<stdin>:2: not a valid transcript: no model output")

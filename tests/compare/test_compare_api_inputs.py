"""`parsebridge.compare` reads paths as the command line does, and takes one spec given alone.

Before: a `str` first argument was always model text, so ``pb.compare("log.jsonl", ...)``
compared the file's *name* as an output (and a typo in it went unnoticed), a directory given
as a `Path` failed, and a single spec string was read as a list of its characters
(``InvalidSpecError: invalid backend '' in spec ':'``).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.cli import main
from parsebridge.comparison.engine import CompareResult

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def _log(path: Path, *ids: str) -> Path:
    path.write_text("".join(json.dumps({"id": i, "output": CALL}) + "\n" for i in ids), encoding="utf-8")
    return path


def _ids(result: CompareResult) -> list[str]:
    return [c.transcript for c in result.comparisons]


class _PathLike(os.PathLike[str]):
    def __init__(self, path: Path) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return str(self.path)


def test_an_existing_path_given_as_a_str_or_a_pathlike_is_read_as_transcripts(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.jsonl", "r1", "r2")
    for given in (str(log), log, _PathLike(log)):
        result = pb.compare(given, ["builtin:hermes"])
        assert _ids(result) == ["r1", "r2"], given
        assert result.comparisons[0].results["builtin:hermes"]["oneshot"].tool_calls[0].name == "f"


def test_a_raw_output_file_named_by_a_str_is_one_output(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("Sure." + CALL, encoding="utf-8")
    result = pb.compare(str(out), "builtin:hermes")
    (comparison,) = result.comparisons
    assert comparison.results["builtin:hermes"]["oneshot"].content == "Sure."


def test_a_directory_and_a_glob_read_as_on_the_command_line(tmp_path: Path) -> None:
    _log(tmp_path / "a.jsonl", "a")
    _log(tmp_path / "b.jsonl", "b")
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.warns(UserWarning, match="skipped 1 file of another suffix"):
        assert _ids(pb.compare(tmp_path, "builtin:hermes")) == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _ids(pb.compare(str(tmp_path / "*.jsonl"), "builtin:hermes")) == ["a", "b"]


@pytest.mark.parametrize("name", ["missing.jsonl", "logs/chat-01.jsonl.gz", "run.yaml", "x.json"])
def test_a_missing_transcript_file_is_an_error_not_text(tmp_path: Path, name: str) -> None:
    given = str(tmp_path / name)
    with pytest.raises(FileNotFoundError) as info:
        pb.compare(given, ["builtin:hermes"])
    assert isinstance(info.value, pb.ParsebridgeError)
    assert given in str(info.value) and '{"output": text}' in str(info.value)
    with pytest.raises(FileNotFoundError):
        pb.compare(Path(given), ["builtin:hermes"])
    with pytest.raises(FileNotFoundError, match="no file matches"):
        pb.compare(str(tmp_path / "*.jsonl"), ["builtin:hermes"])


def test_text_stays_text_beside_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a list beside a path, model output is text: several lines, or one line that names no
    file and is not one word with a transcript suffix; a dict's output is text whatever it looks like."""
    monkeypatch.chdir(tmp_path)
    log = _log(tmp_path / "log.jsonl", "r1")
    texts = ["Sure." + CALL, "hermes", f"See the file.\n{CALL}\nsaved to out.jsonl", "Saved to out.json"]
    result = pb.compare([texts[0], str(log), *texts[1:], {"output": "missing.jsonl"}], ["builtin:hermes"])
    assert _ids(result) == ["text", "r1", "text-3", "text-4", "text-5", "transcript-6"]
    assert result.comparisons[-1].results["builtin:hermes"]["oneshot"].content == "missing.jsonl"


def test_one_spec_string_is_one_spec() -> None:
    result = pb.compare(CALL, "builtin:hermes")
    assert list(result.comparisons[0].results) == ["builtin:hermes"]
    pipeline = pb.compare("<think>a</think>" + CALL, "builtin:qwen3 + builtin:hermes")
    assert list(pipeline.comparisons[0].results) == ["builtin:qwen3 + builtin:hermes"]
    alone = pb.compare(CALL, "builtin:hermes", reasoning_parsers="builtin:qwen3", chunkings="token")
    assert list(alone.comparisons[0].results) == ["builtin:qwen3 + builtin:hermes"]
    assert set(alone.comparisons[0].results["builtin:qwen3 + builtin:hermes"]) == {"oneshot", "stream"}
    by_family = pb.compare(CALL, family="hermes", backends="builtin")
    assert list(by_family.comparisons[0].results) == ["builtin:hermes"]


@pytest.mark.parametrize("specs", ["builtin:hermes builtin:json", "builtin:hermes,builtin:pythonic"])
def test_several_specs_in_one_string_say_to_give_a_list(specs: str) -> None:
    with pytest.raises(pb.InvalidSpecError, match="holds 2 specs") as info:
        pb.compare(CALL, specs)
    assert "['builtin:hermes', " in str(info.value)
    with pytest.raises(pb.InvalidSpecError, match="holds 2 specs"):
        pb.compare(CALL, [specs])


def test_the_command_line_says_the_same_for_several_specs_in_one_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", "--text", CALL, "--tool-parser", "builtin:hermes builtin:pythonic"]) == 2
    assert "holds 2 specs" in capsys.readouterr().err


@pytest.mark.parametrize("given", [b"Hi", bytearray(b"Hi"), [b"Hi"], 5, None, [None], ["Hi", 5], ["Hi", 2.5]])
def test_what_is_no_text_path_or_record_is_refused_by_name(given: object) -> None:
    """Bytes were iterated as numbers (``transcript-1: a transcript is a JSON object, not a
    number``), and a number or None gave Python's ``'int' object is not iterable``."""
    with pytest.raises(
        pb.InvalidInputError, match=r"compare\(\) takes .* as str, not (bytes|bytearray|int|float|NoneType)"
    ):
        pb.compare(given, "builtin:hermes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [
        {"jobs": -1},
        {"jobs": "2"},
        {"jobs": 2.5},
        {"jobs": True},
        {"ordered": "no"},
        {"top": -1},
        {"top": "3"},
    ],
)
def test_run_options_of_the_wrong_kind_are_refused_before_any_work(options: dict[str, object]) -> None:
    """jobs="2" and 2.5 failed in the executor with Python's TypeError, jobs=-1 ran as jobs=0, and
    top=-1 listed all but one of the most different."""
    name = next(iter(options))
    with pytest.raises(pb.InvalidSpecError, match=f"compare: {name} must be"):
        pb.compare(CALL, "builtin:hermes", **options)  # type: ignore[arg-type]

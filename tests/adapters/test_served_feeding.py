"""What a served backend's engine is fed: token ids of the model folder's tokenizer, and the prompt.

No server runs here: the model folders, the prompt a request brings and the engine steps of a
one-shot request (the servers' side is in test_dynamo_http_reference.py and
test_smg_gateway_oracle.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from parsebridge.adapters._served.model_folder import EOS, model_folder, prompt_text, tokenizer_folder
from parsebridge.adapters._served.parsers import ParserPair
from parsebridge.adapters.dynamo.parsers import DynamoEngine


def test_the_byte_folder_splits_a_character_across_tokens_as_a_detokenizer_shows_it() -> None:
    folder = model_folder(["</think>"])
    text = "é😀 ok</think>x"
    chunks = folder.chunks(text)
    assert [c.text for c in chunks[:6]] == ["", "é", "", "", "", "😀"]
    assert "".join(c.text for c in chunks) == text
    assert [i for c in chunks for i in c.token_ids] == folder.encode(text)
    assert ("</think>", (folder.marker_ids["</think>"],)) in [(c.text, c.token_ids) for c in chunks]
    assert folder.decode(folder.encode(text)) == text
    two = folder.chunks(text, 2)
    assert "".join(c.text for c in two) == text and len(two) == (len(chunks) + 1) // 2


def test_the_prompt_follows_the_key_on_its_own_line() -> None:
    assert prompt_text("k-1", None) == "k-1"
    assert prompt_text("k-1", "<|im_start|>assistant\n<think>\n") == "k-1\n<|im_start|>assistant\n<think>\n"


def test_an_engine_brings_the_prompt_a_template_writes_and_steps_one_token_at_a_time() -> None:
    engine = DynamoEngine(ParserPair("qwen3", None), None, {})
    assert engine.prompt(True) == "<think>"
    assert engine.prompt(False) == "<think></think>"
    assert engine.prompt(None, "x<think>\n") == "x<think>\n"
    assert engine.prompt(True, "ignored: the flag wins") == "<think>"
    assert engine.prompt(None) is None
    ids = engine.encode("a</think>é")
    assert engine.steps("a</think>é") == [[i] for i in ids] and len(ids) == 4
    assert engine.steps("", [1, 2, 3]) == [[1], [2], [3]]
    assert DynamoEngine(ParserPair("qwen3", None), None, {"oneshot_step": 0}).steps("abc") == [[97, 98, 99]]
    assert DynamoEngine(ParserPair("qwen3", None), None, {"oneshot_step": 2}).steps("abc") == [[97, 98], [99]]
    with pytest.raises(ValueError, match="oneshot_step"):
        DynamoEngine(ParserPair("qwen3", None), None, {"oneshot_step": -1})
    assert DynamoEngine(ParserPair(None, "hermes"), None, {}).prompt(True) is None  # a tool parser alone


def _tiny_tokenizer_json(path: Path) -> Path:
    """A byte-level BPE with one merge and ``<think>`` as an added (not special) token."""
    from parsebridge.adapters._tokenizers import _bytes_to_unicode

    b2u = _bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)} | {"ab": 256}
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    think = {"id": 257, "content": "<think>", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}  # fmt: skip
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [think], "normalizer": None,
        "pre_tokenizer": level, "post_processor": None, "decoder": level,
        "model": {"type": "BPE", "vocab": vocab, "merges": [["a", "b"]], "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
                  "byte_fallback": False, "ignore_merges": False},
    }  # fmt: skip
    out = path / "tokenizer.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_a_real_tokenizer_becomes_a_model_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tokenizers", reason="a real vocabulary's folder needs the tokenizers library")
    monkeypatch.setenv("PARSEBRIDGE_CACHE", str(tmp_path / "cache"))
    source = _tiny_tokenizer_json(tmp_path)
    folder = tokenizer_folder(source)
    assert tokenizer_folder(tmp_path) is folder and tokenizer_folder(folder) is folder
    written = json.loads((folder.path / "tokenizer.json").read_text(encoding="utf-8"))
    assert {"id": folder.eos_id, "content": EOS}.items() <= written["added_tokens"][-1].items()
    assert folder.eos_id == 258 and folder.vocab_size == 259
    config = json.loads((folder.path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["eos_token"] == EOS and "chat_template" in config
    text = "ab é<think>"
    ids = folder.encode(text)
    assert ids[0] == 256 and 257 in ids and folder.decode(ids) == text
    chunks = folder.chunks(text)
    assert "".join(c.text for c in chunks) == text and [i for c in chunks for i in c.token_ids] == ids
    assert "" in [c.text for c in chunks]  # é's two bytes are two tokens: the first shows nothing
    with pytest.raises(FileNotFoundError):
        tokenizer_folder(tmp_path / "missing")
    with pytest.raises(TypeError, match=r"tokenizer\.json"):
        tokenizer_folder(object())


def test_a_real_tokenizer_folder_written_before_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later process finds the folder in the cache: it reads it (same ids, same end-of-sequence
    token) without building it again; with a damaged one it builds from the source as the first time."""
    pytest.importorskip("tokenizers", reason="a real vocabulary's folder needs the tokenizers library")
    monkeypatch.setenv("PARSEBRIDGE_CACHE", str(tmp_path / "cache"))
    source = _tiny_tokenizer_json(tmp_path)
    module = sys.modules[tokenizer_folder.__module__]  # (the package's name `model_folder` is the function)
    monkeypatch.setattr(module, "_built", {})  # nothing built in this process yet
    first = tokenizer_folder(source)
    written = (first.path / "tokenizer.json").stat().st_mtime_ns
    monkeypatch.setattr(module, "_built", {})  # as in a new process
    files = module._files
    monkeypatch.setattr(module, "_files", lambda *_: pytest.fail("the folder was built again"))
    again = tokenizer_folder(source)
    assert again is not first and (again.path, again.eos_id) == (first.path, first.eos_id)
    assert again.encode("ab é<think>") == first.encode("ab é<think>")
    assert (again.path / "tokenizer.json").stat().st_mtime_ns == written
    (first.path / "config.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(module, "_built", {})
    monkeypatch.setattr(module, "_files", files)
    assert tokenizer_folder(source).eos_id == first.eos_id

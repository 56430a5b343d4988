"""`_tokenizers.build_tokenizer` keeps each (vocabulary, markers) build as a tokenizer.json in
parsebridge's cache and loads it from there: transformers deep-copies a tokenizer object it is
given, which for a real vocabulary costs twice what loading the file does. A damaged file is
built again; a cache that cannot be written costs only the speed."""

from __future__ import annotations

import pytest

pytest.importorskip("tokenizers", reason="tokenizers (parsebridge[vocabularies])")
pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")

from parsebridge.adapters import _tokenizers

SPECIALS = ["<tool_call>", "</tool_call>", "<think>"]
TEXT = '<think>plan</think><tool_call>{"a": "é"}</tool_call>'


def _build():
    _tokenizers._build_cached.cache_clear()
    return _tokenizers.build_tokenizer(SPECIALS)


def _reading(tok):
    return tok.encode(TEXT, add_special_tokens=False), tok.eos_token, tok.parsebridge_specials


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PARSEBRIDGE_CACHE", str(tmp_path / "cache"))
    yield tmp_path / "cache" / "tokenizers"
    _tokenizers._build_cached.cache_clear()


def test_the_second_build_is_the_file_and_reads_alike(cache, monkeypatch):
    first = _reading(_build())
    built = sorted(cache.glob("built-*.json"))
    assert len(built) == 1
    monkeypatch.setattr(_tokenizers, "_with_specials", lambda *a: pytest.fail("built again, not loaded"))
    assert _reading(_build()) == first
    assert "<tool_call>" in first[2] and first[1] == "<|endoftext|>"


def test_a_damaged_file_is_built_again(cache):
    first = _reading(_build())
    (built,) = cache.glob("built-*.json")
    built.write_text("{not json")
    assert _reading(_build()) == first
    assert built.read_text().startswith("{") and _reading(_build()) == first


def test_a_cache_that_cannot_be_written_still_builds(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PARSEBRIDGE_CACHE", str(blocker))  # its "tokenizers" folder cannot be made
    try:
        tok = _build()
        assert tok.encode("<tool_call>", add_special_tokens=False) == [
            tok.convert_tokens_to_ids("<tool_call>")
        ]
    finally:
        _tokenizers._build_cached.cache_clear()

"""Tokenizers for vLLM parsers without a model hub (the shared code lives in `.._tokenizers`).

vLLM parsers look their special tokens up in the tokenizer's vocabulary when
they are constructed, and streaming calls take token ids, so every parser
needs a tokenizer whose vocabulary holds its markers atomically. The
framework-neutral building blocks (real vocabularies from PyPI, the synthetic
BPE, token chunking) are shared with the SGLang adapter in
`parsebridge.adapters._tokenizers`; this module keeps the names the vLLM
adapter has always imported, so nothing that uses them changes.
"""

from __future__ import annotations

from typing import Any

from .. import _tokenizers as _shared

# The old names, bound to the shared objects (caches and locks stay one per process).
_CORPUS = _shared._CORPUS
_MARKERISH = _shared._MARKERISH
ProbeTokenizer = _shared.ProbeTokenizer
TokenChunk = _shared.TokenChunk
_base_json = _shared._base_json
_bpe_from_ranks = _shared._bpe_from_ranks
_build_cached = _shared._build_cached
_bytes_to_unicode = _shared._bytes_to_unicode
_cache_dir = _shared._cache_dir
_chunks_by_decoding = _shared._chunks_by_decoding
_deepseek_base_json = _shared._deepseek_base_json
_qwen_base_json = _shared._qwen_base_json
_RecordingVocab = _shared._RecordingVocab
_synthetic_base_json = _shared._synthetic_base_json
available_families = _shared.available_families
build_tokenizer = _shared.build_tokenizer
encode_ids = _shared.encode_ids
family_of = _shared.family_of
is_marker = _shared.is_marker
is_vocab_internal = _shared.is_vocab_internal
load_tokenizer = _shared.load_tokenizer
token_chunks = _shared.token_chunks

__all__ = [
    "TokenChunk",
    "build_tokenizer",
    "family_of",
    "load_tokenizer",
    "token_chunks",
]


def marker_strings(obj: Any) -> set[str]:
    """Marker-looking string constants on a vLLM class and its vLLM bases."""
    return _shared.marker_strings(obj, "vllm")

"""Text cut where an engine cuts it: token chunks of a tokenizer (split out of `_tokenizers`).

An engine streams its output a few tokens a step, and each step's text is what those tokens
decode to; a token that ends inside a multi-byte character waits for the one that completes it.
`token_chunks` cuts text that way, `encode_ids` gives a text's token ids without BOS/EOS, and
`EngineTokens` is the tokenizer and chunks a vLLM or SGLang parser offers (its engine's). Which
tokenizer is used is `_tokenizers`' part; nothing here imports a framework or transformers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol


@dataclass(frozen=True)
class TokenChunk:
    """A piece of output as an engine would stream it: the text and the ids it decodes from."""

    text: str
    token_ids: tuple[int, ...]


def encode_ids(tokenizer: Any, text: str) -> list[int]:
    """Token ids of `text` without BOS/EOS.

    A transformers fast tokenizer is asked through its `tokenizers` backend: the same ids as its
    ``encode(text, add_special_tokens=False)`` (which calls that backend after checking its
    arguments and resetting truncation and padding, about four times the backend's own cost on a
    short text), taken only when the backend has no truncation, padding or special-token
    splitting set, so nothing it would reset matters.
    """
    if not text:
        return []
    backend = _plain_backend(tokenizer)
    if backend is not None:
        return backend.encode(text, add_special_tokens=False).ids  # type: ignore[no-any-return]
    try:
        return list(tokenizer.encode(text, add_special_tokens=False))
    except TypeError:
        return list(tokenizer.encode(text))


def _plain_backend(tokenizer: Any) -> Any:
    """A fast tokenizer's `tokenizers.Tokenizer` when encoding through it gives what `encode` gives."""
    if not _encodes_through_backend(type(tokenizer)):
        return None
    backend = tokenizer._tokenizer
    if getattr(tokenizer, "split_special_tokens", False) or backend.encode_special_tokens:
        return None
    if backend.truncation is not None or backend.padding is not None:
        return None
    return backend


@lru_cache(maxsize=64)
def _encodes_through_backend(cls: type) -> bool:
    """Whether `cls` is a transformers fast tokenizer that keeps transformers' own `encode`."""
    # A transformers tokenizer means transformers is imported: anything else is not asked for it.
    transformers = sys.modules.get("transformers")
    if transformers is None:
        return False
    fast, base = transformers.PreTrainedTokenizerFast, transformers.PreTrainedTokenizerBase
    return issubclass(cls, fast) and cls.encode is base.encode


def token_chunks(tokenizer: Any, text: str, per: int = 1) -> list[TokenChunk]:
    """Split `text` the way an engine streams it: `per` tokens a chunk, text from offsets.

    Tokens that end inside a multi-byte character carry their id with empty
    text, as an incremental detokenizer holds such bytes back.
    """
    if per < 1:
        raise ValueError("per must be >= 1")
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is None or not hasattr(backend, "encode"):
        ids = encode_ids(tokenizer, text)
        return _chunks_by_decoding(tokenizer, ids, per)
    enc = backend.encode(text, add_special_tokens=False)
    ids = list(enc.ids)
    offsets = list(enc.offsets)
    # A token whose successor starts before it ends shares a character with it: it ends inside
    # that character, and its text waits (all of it, as an incremental detokenizer holds back
    # ``" \xf0\x9f"`` whole, not only its half character) for the token that completes it.
    ends = [
        None if i + 1 < len(offsets) and offsets[i + 1][0] < end else end
        for i, (_start, end) in enumerate(offsets)
    ]
    chunks: list[TokenChunk] = []
    pos = 0
    for i in range(0, len(ids), per):
        group = ids[i : i + per]
        end = max([pos, *(e for e in ends[i : i + per] if e is not None)])
        if i + per >= len(ids):
            end = len(text)
        chunks.append(TokenChunk(text[pos:end], tuple(group)))
        pos = end
    return chunks


def _chunks_by_decoding(tokenizer: Any, ids: Sequence[int], per: int) -> list[TokenChunk]:
    chunks: list[TokenChunk] = []
    prev = ""
    for i in range(0, len(ids), per):
        now = tokenizer.decode(list(ids[: i + per]))
        if now.endswith("\ufffd") and i + per < len(ids):
            chunks.append(TokenChunk("", tuple(ids[i : i + per])))
            continue
        chunks.append(TokenChunk(now[len(prev) :], tuple(ids[i : i + per])))
        prev = now
    return chunks


class TokenEngine(Protocol):
    """What `EngineTokens` reads of a framework adapter's engine (vLLM's, SGLang's)."""

    @property
    def tokenizer(self) -> Any: ...

    def chunks(self, text: str, per: int = 1) -> list[TokenChunk]: ...


class EngineTokens:
    """The tokenizer and token chunks a vLLM or SGLang parser offers: its engine's (one per parser)."""

    engine: TokenEngine

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def chunks(self, text: str, per: int = 1) -> list[TokenChunk]:
        return self.engine.chunks(text, per)

"""Which special tokens a framework's parsers look up, found by asking them (split out of `_tokenizers`).

vLLM's parsers look their markers up in the tokenizer's vocabulary while they are built:
`ProbeTokenizer` answers every lookup and records what was asked. SGLang's detectors keep their
markers as class constants: `marker_strings` reads them. `is_marker` / `is_vocab_internal` say
which of the strings found may become tokens of their own. `_tokenizers.build_tokenizer` then
adds them to the vocabulary.
"""

from __future__ import annotations

import re
from typing import Any

#: Marker-looking strings (used to keep only plausible special tokens from `encode` probes).
_MARKERISH = re.compile(r"^(<[^\s<>]{1,80}>|<\|[^\s]{1,80}\|>|\[[A-Z_]{2,40}\]|<｜[^\n]{1,80}｜>)$")


class _RecordingVocab(dict):  # type: ignore[type-arg]
    """A vocab that answers every lookup (with a fresh id) and remembers the keys asked for."""

    def __init__(self, base: dict[str, int], seen: set[str]) -> None:
        super().__init__(base)
        self._seen = seen
        self._next = max(base.values(), default=0) + 1000

    def _fake(self, key: str) -> int:
        self._seen.add(key)
        if not dict.__contains__(self, key):
            dict.__setitem__(self, key, self._next)
            self._next += 1
        return dict.__getitem__(self, key)

    def __getitem__(self, key: str) -> int:
        return self._fake(key) if isinstance(key, str) else dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._fake(key) if isinstance(key, str) else default

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self._fake(key)
            return True
        return False


class ProbeTokenizer:
    """Wraps a tokenizer and records the special tokens a parser looks up while it is built."""

    def __init__(self, base: Any, seen: set[str]) -> None:
        self._base = base
        self._seen = seen
        self._vocab = _RecordingVocab(base.get_vocab(), seen)

    def get_vocab(self) -> dict[str, int]:
        return self._vocab

    @property
    def vocab(self) -> dict[str, int]:
        return self._vocab

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self._vocab[tokens]
        return [self._vocab[t] for t in tokens]

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        if isinstance(text, str) and _MARKERISH.match(text.strip()):
            self._seen.add(text.strip())
            return [self._vocab[text.strip()]]
        return self._base.encode(text, *args, **kwargs)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._base, item)

    def __len__(self) -> int:
        return len(self._vocab)


def is_marker(text: str) -> bool:
    """Whether a string looks like a special token (and so may be made atomic)."""
    return bool(_MARKERISH.match(text)) and any(ch.isalpha() for ch in text)


def is_vocab_internal(text: str) -> bool:
    """A token name a parser expects as one plain token: 'Ġ</', '▁', '<0x0A>', or a word like 'think'.

    Byte-level and sentencepiece names never occur literally in text, so
    adding them gives them an id without changing how any text tokenizes; a
    plain word the parser looks up becomes one (non-special) token, as it is
    in the model's own vocabulary.
    """
    return len(text) > 1 and (
        text[0] in "Ġ▁Ċ" or bool(re.fullmatch(r"<0x[0-9A-Fa-f]{2}>|[A-Za-z][A-Za-z_]{1,23}", text))
    )


def marker_strings(obj: Any, package: str) -> set[str]:
    """Marker-looking string constants on a class and its bases from `package` (e.g. ``"vllm"``).

    Only classes of the framework's own package are read, so constants of
    unrelated base classes (pydantic, abc) never become special tokens.
    """
    found: set[str] = set()
    for klass in getattr(obj, "__mro__", (type(obj),)):
        if klass.__module__.split(".")[0] != package:
            continue
        for value in vars(klass).values():
            if isinstance(value, str) and _MARKERISH.match(value):
                found.add(value)
    return found

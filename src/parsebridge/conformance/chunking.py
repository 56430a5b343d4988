"""Named, reproducible ways to cut an output into stream chunks.

A chunking name fully determines the chunks for a given output and parser,
so a divergence found at ``random-3`` is reproduced by running ``random-3``
again. Names:

* ``oneshot`` — no stream: the one-shot `parse` (the reference);
* ``whole`` — a stream fed the whole output as one chunk;
* ``char`` — one character a chunk (``char-K``: K characters);
* ``random-SEED`` — seeded random sizes 1..8 characters (``random`` = ``random-0``);
* ``token`` / ``token-K`` — K tokens a chunk (``token`` = ``token-1``).

Token chunkings use the parser's own tokenizer when the parser object
offers ``chunks(text, per)`` (vLLM parser objects do; items have ``.text``
and ``.token_ids``), so the chunks and their token ids are what that
engine would stream. Otherwise, when the transcript recorded the engine's
``token_texts``, those are used. Otherwise an approximate tokenizer splits
the text deterministically into: marker-like tokens (``<|…|>``, ``<｜…｜>``,
``<tag>``/``</tag>``/``<tag=``, ``[UPPER_CASE]``), words with at most one
leading space (as BPE vocabularies have them), and single other characters
(punctuation, whitespace). It is not any model's tokenizer; it exists so that
multi-character markers arrive whole, as special tokens do, and words arrive
in one piece, as they do from real engines.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ..protocol import InvalidSpecError

ChunkingMode = Literal["oneshot", "stream"]

#: The default set (1 char, 1 token, k tokens, seeded random; `whole`/`token-2` on request).
DEFAULT_CHUNKINGS: tuple[str, ...] = ("oneshot", "char", "token", "token-5", "token-20", "random-0")
#: Every chunking we know servers to use, for a thorough run (`--chunking all`).
ALL_CHUNKINGS: tuple[str, ...] = (
    "oneshot",
    "whole",
    "char",
    "token",
    "token-2",
    "token-5",
    "token-20",
    "random-0",
    "random-1",
    "random-2",
)


class Chunk(NamedTuple):
    """One piece of output fed to a stream; `token_ids` when the chunk came from a real tokenizer."""

    text: str
    token_ids: tuple[int, ...] | None = None


_APPROX_TOKEN = re.compile(
    r"<\|[^|<>\s]{0,40}\|>"  # <|python_tag|>, <|im_end|>
    r"|<｜[^｜\n]{0,40}｜>"  # <｜tool▁calls▁begin｜> (DeepSeek's full-width bars)
    r"|</?[A-Za-z_][\w:.\-]{0,40}(?:>|=)"  # <tool_call>, </think>, <function=, <minimax:tool_call>
    r"|\[/?[A-Z_]{2,40}\]"  # [TOOL_CALLS], [THINK]
    r"|[◁][^▷\n]{0,20}[▷]"  # ◁think▷ (Kimi)
    r"| ?[^\W_]+"  # a word with at most one leading space
    r"|.",  # anything else: one character
    re.DOTALL,
)


def approximate_tokens(text: str) -> list[str]:
    """The approximate tokenizer's split of `text` (see module doc); joins back to `text`."""
    return _APPROX_TOKEN.findall(text)


def _by_size(text: str, sizes: Callable[[], int]) -> list[Chunk]:
    out: list[Chunk] = []
    i = 0
    while i < len(text):
        n = sizes()
        out.append(Chunk(text[i : i + n]))
        i += n
    return out


def _group(pieces: Sequence[str], per: int, ids: Sequence[Sequence[int]] | None = None) -> list[Chunk]:
    out: list[Chunk] = []
    for i in range(0, len(pieces), per):
        text = "".join(pieces[i : i + per])
        tids = tuple(t for group in ids[i : i + per] for t in group) if ids is not None else None
        out.append(Chunk(text, tids))
    return out


def find_chunker(parser: Any) -> Callable[[str, int], Sequence[Any]] | None:
    """The parser's own ``chunks(text, per)``, looking through pipelines and guards."""
    for obj in (
        parser,
        getattr(parser, "engine", None),
        getattr(parser, "tools", None),
        getattr(parser, "reasoning", None),
    ):
        if obj is None:
            continue
        try:
            fn = getattr(obj, "chunks", None)
        except Exception:  # a guard forwarding to a parser that cannot answer
            fn = None
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    return None


@dataclass(frozen=True)
class Chunking:
    """A parsed chunking name. `split` is deterministic for a given (text, parser, token_texts)."""

    name: str
    mode: ChunkingMode
    unit: Literal["none", "whole", "char", "random", "token"] = "none"
    size: int = 1

    @property
    def streamed(self) -> bool:
        return self.mode == "stream"

    def split(self, text: str, parser: Any = None, token_texts: Sequence[str] | None = None) -> list[Chunk]:
        """The chunks to feed. An empty output is fed as no chunk at all."""
        if self.unit == "none":
            return [Chunk(text)]
        if not text:
            return []
        if self.unit == "whole":
            return [Chunk(text)]
        if self.unit == "char":
            return _by_size(text, lambda: self.size)
        if self.unit == "random":
            rng = random.Random(self.size)
            # getrandbits is stable across Python versions (randint's algorithm is not promised)
            return _by_size(text, lambda: 1 + rng.getrandbits(3))
        fn = find_chunker(parser) if parser is not None else None
        if fn is not None:
            return [Chunk(c.text, tuple(c.token_ids)) for c in fn(text, self.size)]
        if token_texts is not None and "".join(token_texts) == text:
            return _group(token_texts, self.size)
        return _group(approximate_tokens(text), self.size)


_NAME = re.compile(r"^(oneshot|whole|char|token|random)(?:-(\d+))?$")


def parse_chunking(name: str) -> Chunking:
    """A chunking from its name; unknown names raise `InvalidSpecError` listing the forms."""
    key = name.strip().lower()
    m = _NAME.match(key)
    if m is None:
        raise InvalidSpecError(
            f"unknown chunking {name!r}: use oneshot, whole, char[-K], token[-K] or random[-SEED]"
        )
    unit, num = m.group(1), m.group(2)
    if unit in ("oneshot", "whole"):
        if num is not None:
            raise InvalidSpecError(f"chunking {unit!r} takes no number")
        if unit == "whole":
            return Chunking("whole", "stream", "whole")
        return Chunking("oneshot", "oneshot", "none")
    if unit == "random":
        seed = int(num) if num is not None else 0
        return Chunking(f"random-{seed}", "stream", "random", seed)
    size = int(num) if num is not None else 1
    if size < 1:
        raise InvalidSpecError(f"chunking {name!r}: the size must be at least 1")
    canonical = unit if size == 1 else f"{unit}-{size}"
    return Chunking(canonical, "stream", "char" if unit == "char" else "token", size)


def parse_chunkings(names: Sequence[str] | None) -> list[Chunking]:
    """Several names (comma-separated allowed; ``default`` and ``all`` expand), deduplicated, in order."""
    expanded: list[str] = []
    for item in names or ["default"]:
        for part in item.split(","):
            part = part.strip()
            if part == "default":
                expanded.extend(DEFAULT_CHUNKINGS)
            elif part == "all":
                expanded.extend(ALL_CHUNKINGS)
            elif part:
                expanded.append(part)
    out: dict[str, Chunking] = {}
    for n in expanded:
        c = parse_chunking(n)
        out.setdefault(c.name, c)
    return list(out.values())

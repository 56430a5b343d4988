"""Named, reproducible ways to cut an output into stream chunks.

A chunking name fully determines the chunks for a given output and token
source, so a divergence found at ``token-random-3`` is reproduced by running
``token-random-3`` again. Names:

* ``oneshot`` — no stream: the one-shot `parse` (the reference);
* ``whole`` — a stream fed the whole output as one chunk;
* ``char`` — one character a chunk (``char-K``: K characters);
* ``random-SEED`` — seeded random sizes 1..8 characters (``random`` = ``random-0``);
* ``token`` / ``token-K`` — K tokens a chunk (``token`` = ``token-1``);
* ``special`` — one chunk per special token and one per run of other tokens
  between them (how a server that batches until a special token streams);
* ``token-random-SEED`` — seeded random groups of 1..8 tokens a chunk (what
  speculative decoding, multi-token prediction and stream intervals deliver).

The token-based chunkings group the output's tokens (`token_pieces`: the
transcript's own ids, its recorded token texts, the parser's tokenizer, the
family's real vocabulary, or the approximate tokenizer, first that applies)
and never split a token. A byte-level token may end inside a multi-byte
character: its chunk then shows no text for it (the detokenizer holds the
bytes back) but carries its id, and engines that take ids are given it so.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ..protocol import InvalidSpecError
from ..protocol.errors import closest, did_you_mean
from .token_pieces import Piece, approximate_pieces, approximate_tokens, pieces_from_chunks, pieces_from_texts

__all__ = [
    "ALL_CHUNKINGS",
    "DEFAULT_CHUNKINGS",
    "TOKEN_RANDOM_SEEDS",
    "Chunk",
    "Chunking",
    "approximate_tokens",
    "find_chunker",
    "group_pieces",
    "parse_chunking",
    "parse_chunkings",
]

ChunkingMode = Literal["oneshot", "stream"]

#: Seeds of the random token groupings in the default set.
TOKEN_RANDOM_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)
#: The default set: seeded random characters, then the token-boundary groupings (1 token, per
#: special token, k tokens, seeded random 1..8 tokens): what deployments deliver, plus cuts anywhere.
#: `char` (one character a chunk) is on request and in `all`: it cost the three-backend run a third
#: of its engine time, and what it alone found came from cuts inside tokens, which no deployment
#: makes (`token` cuts at every token boundary too). docs/tokens.md has the figures.
DEFAULT_CHUNKINGS: tuple[str, ...] = (
    "oneshot",
    "random-0",
    "token",
    "special",
    "token-5",
    "token-20",
    *(f"token-random-{s}" for s in TOKEN_RANDOM_SEEDS),
)
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
    "special",
    *(f"token-random-{s}" for s in (*TOKEN_RANDOM_SEEDS, 5, 6, 7)),
)


class Chunk(NamedTuple):
    """One piece of output fed to a stream; `token_ids` when the chunk came from a real tokenizer."""

    text: str
    token_ids: tuple[int, ...] | None = None


def _spans(length: int, sizes: Callable[[], int]) -> Iterator[tuple[int, int]]:
    """Consecutive ``(start, end)`` spans over `length` items, each `sizes()` long (the last may be
    shorter): the one cut that characters and tokens share."""
    i = 0
    while i < length:
        n = sizes()
        yield i, i + n
        i += n


def _by_size(text: str, sizes: Callable[[], int]) -> list[Chunk]:
    return [Chunk(text[i:j]) for i, j in _spans(len(text), sizes)]


def _chunk_of(pieces: Sequence[Piece]) -> Chunk:
    ids = tuple(p.token_id for p in pieces if p.token_id is not None)
    return Chunk("".join(p.text for p in pieces), ids if len(ids) == len(pieces) else None)


def group_pieces(pieces: Sequence[Piece], sizes: Callable[[], int]) -> list[Chunk]:
    """Consecutive pieces in groups of `sizes()` tokens (never splitting a token)."""
    return [_chunk_of(pieces[i:j]) for i, j in _spans(len(pieces), sizes)]


def special_groups(pieces: Sequence[Piece]) -> list[Chunk]:
    """One chunk per special token and one per run of other tokens between them."""
    out: list[Chunk] = []
    run: list[Piece] = []
    for p in pieces:
        if p.special:
            if run:
                out.append(_chunk_of(run))
                run = []
            out.append(_chunk_of([p]))
        else:
            run.append(p)
    if run:
        out.append(_chunk_of(run))
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
    """A parsed chunking name. `split` is deterministic for a given (text, token source)."""

    name: str
    mode: ChunkingMode
    unit: Literal["none", "whole", "char", "random", "token", "special", "token_random"] = "none"
    size: int = 1

    @property
    def streamed(self) -> bool:
        return self.mode == "stream"

    @property
    def by_token(self) -> bool:
        """Whether the chunks are groups of tokens (the token-boundary chunkings)."""
        return self.unit in ("token", "special", "token_random")

    def split(
        self,
        text: str,
        parser: Any = None,
        token_texts: Sequence[str] | None = None,
        pieces: Sequence[Piece] | None = None,
    ) -> list[Chunk]:
        """The chunks to feed. An empty output is fed as no chunk at all.

        Token chunkings group `pieces` when given (`token_pieces.TokenSource`),
        else the parser's own per-token chunks, else recorded `token_texts`,
        else the approximate tokenizer's; the others `cut` the text.
        """
        if self.by_token and pieces is None and text:
            pieces = default_pieces(text, parser, token_texts)
        return self.to_feed(text, pieces or ())

    def to_feed(self, text: str, pieces: Sequence[Piece] = ()) -> list[Chunk]:
        """What a stream is fed: a token chunking's groups of the output's `pieces`
        (`token_pieces.source_for`), any other chunking's cut of the text."""
        if not self.by_token:
            return self.cut(text)
        return self.group(pieces) if text else []

    def cut(self, text: str) -> list[Chunk]:
        """A chunking that is not by token: the text cut by characters (none at all when empty)."""
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
        raise ValueError(f"{self.name} is a token chunking: it groups pieces (`group`)")

    def group(self, pieces: Sequence[Piece]) -> list[Chunk]:
        """A token chunking's chunks of `pieces`."""
        if self.unit == "special":
            return special_groups(pieces)
        if self.unit == "token_random":
            rng = random.Random(self.size)
            return group_pieces(pieces, lambda: 1 + rng.getrandbits(3))
        return group_pieces(pieces, lambda: self.size)


def default_pieces(text: str, parser: Any = None, token_texts: Sequence[str] | None = None) -> list[Piece]:
    """Per-token pieces without a transcript's ids: the parser's tokenizer, recorded texts, approximate."""
    fn = find_chunker(parser) if parser is not None else None
    if fn is not None:
        return pieces_from_chunks(fn(text, 1))
    if token_texts is not None and "".join(token_texts) == text:
        return pieces_from_texts(token_texts)
    return approximate_pieces(text)


_NAME = re.compile(r"^(oneshot|whole|char|token-random|token|random|special)(?:-(\d+))?$")
#: Every chunking name's form (K: a size, SEED: a seed), as an unknown name's error lists them.
FORMS: tuple[str, ...] = (
    "oneshot",
    "whole",
    "char[-K]",
    "token[-K]",
    "special",
    "random[-SEED]",
    "token-random[-SEED]",
)
_UNITS: tuple[str, ...] = ("oneshot", "whole", "char", "token", "special", "random", "token-random")
_NUMBERED = frozenset({"char", "token", "random", "token-random"})
#: The names of sets `parse_chunkings` expands (what a typo of them is near).
_SETS: tuple[str, ...] = ("default", "all")
#: A name that ends in a number: ``tokn-5``, ``token5``, ``token_random-3``.
_WITH_NUMBER = re.compile(r"(.+?)[-_ ]?(\d+)")


def _near_chunkings(name: str) -> list[str]:
    """Chunking names that look like `name` (a typo's "did you mean"), its number kept:
    ``tokn-5`` → ``token-5``; ``randm`` → ``random``; ``defualt`` → ``default``."""
    key = name.strip().lower()
    m = _WITH_NUMBER.fullmatch(key)
    base, number = (m.group(1), m.group(2)) if m else (key, None)
    out: list[str] = []
    for near in closest(base, (*_UNITS, *_SETS)):
        shown = f"{near}-{number}" if number is not None and near in _NUMBERED else near
        if shown not in out and shown != key:
            out.append(shown)
    return out


def _unknown_chunking(name: str) -> InvalidSpecError:
    """The error for a name no chunking has: the near names, every form, and where each is described."""
    return InvalidSpecError(
        f"unknown chunking {name!r}.{did_you_mean(_near_chunkings(name))} Chunkings: {', '.join(FORMS)}, and the sets 'default' and "
        "'all' (`parsebridge conformance --help` describes each)."
    )


def parse_chunking(name: str) -> Chunking:
    """A chunking from its name; an unknown name raises `InvalidSpecError` with the near names
    and every form (`_unknown_chunking`)."""
    key = name.strip().lower()
    m = _NAME.match(key)
    if m is None:
        raise _unknown_chunking(name)
    unit, num = m.group(1), m.group(2)
    if unit in ("oneshot", "whole", "special"):
        if num is not None:
            raise InvalidSpecError(f"chunking {unit!r} takes no number")
        if unit == "whole":
            return Chunking("whole", "stream", "whole")
        if unit == "special":
            return Chunking("special", "stream", "special")
        return Chunking("oneshot", "oneshot", "none")
    if unit in ("random", "token-random"):
        seed = int(num) if num is not None else 0
        return Chunking(f"{unit}-{seed}", "stream", unit.replace("-", "_"), seed)  # type: ignore[arg-type]
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


def chunkings_of(given: Any, default: Sequence[str] | None = None) -> list[Chunking]:
    """The chunkings a Python caller gives (`Runner`, `run_conformance`, `compare`): a name, comma-
    separated names (``default`` and ``all`` expand) or `Chunking` objects, one or a list; in order,
    deduplicated. None or an empty list is the `default` names (None: the suite's default set).

    Each list item used to be read as one chunking: ``["default"]`` ran only the first of the set,
    ``["token,special"]`` only ``token``, and a string was taken character by character. Given but
    naming nothing (``""``, ``","``), or something that names no chunking, is `InvalidSpecError`.
    """
    if given is None:
        return parse_chunkings(default)
    if not isinstance(given, (str, Chunking, Iterable)):
        raise InvalidSpecError(f"chunkings: a chunking name, or a list of names, not {given!r}")
    items = [given] if isinstance(given, (str, Chunking)) else list(given)
    if not items:
        return parse_chunkings(default)
    out: dict[str, Chunking] = {}
    for item in items:
        if not isinstance(item, (str, Chunking)):
            raise InvalidSpecError(f"chunkings: {item!r} is not a chunking name")
        for c in [item] if isinstance(item, Chunking) else parse_chunkings([item]):
            out.setdefault(c.name, c)
    if not out:
        raise InvalidSpecError(
            f"chunkings {given!r} names nothing (give names such as 'token,token-5', or None for the default)"
        )
    return list(out.values())

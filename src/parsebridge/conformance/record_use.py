"""What a run reads of a record's generation prompt and recorded tokens, and what it leaves out.

A record may say the same thing twice: ``prompt`` and ``prompt_token_ids``, ``output`` and
``token_texts``. The text wins (as ``output`` wins over ``token_ids``, `token_pieces`): the
ids and the per-token texts are read only where they agree with it, checked where a tokenizer
that reads them is here (the record's own, else its family's vocabulary). What is left out is
never left out silently: `record_warnings` names the record, the field and why, and `compare`
and ``conformance --transcripts`` print it (`RecordWarnings`); docs/transcripts.md states the rule.

`read_prompt` is the one reading of a record's prompt: `observe.request_start` hands it to each
parser, so every backend reads the same prompt and a difference between two of them is the
parsers', never the harness's.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..adapters._tokenizers import vocabulary_problem
from .record import TokenizerRef, Transcript, first_difference, token_texts_problem, unused_token_texts
from .token_pieces import ids_decoder, ids_judged_wrong, ids_out_of_range, transcript_ids


@dataclass(frozen=True)
class PromptRead:
    """A record's generation prompt as the run reads it.

    `text`: what parsers that read text get (the record's ``prompt``, or its ids decoded);
    `ids`: the ids, for a parser built with the tokenizer `ids_of` (vLLM's) only, None when no
    parser gets them; `problem`: what of ``prompt_token_ids`` is left out and why ("" when nothing).
    """

    text: str | None = None
    ids: list[int] | None = None
    ids_of: TokenizerRef | None = None
    problem: str = ""


def _read_by_vllm_only(ref: TokenizerRef) -> bool:
    """A ``pypi:mistral-common`` tokenizer vLLM builds its own Mistral tokenizer of (`Runner._built`):
    whether ids are read is vLLM's to say (a Tekken file it does not read: no one reads them)."""
    return ref.pypi == "mistral-common" and not vocabulary_problem(ref)


def _decoded(tokenizer: Any, ids: list[int], label: str) -> tuple[str | None, str]:
    """(the ids' text, "") or (None, why they cannot be read with `tokenizer`)."""
    why = ids_out_of_range(tokenizer, ids, label)
    if why:
        return None, why
    try:
        return str(tokenizer.decode(ids)), ""
    except Exception as exc:  # a tokenizer that refuses them: said, not raised
        return None, f"{label} cannot decode them ({type(exc).__name__}: {exc})"


#: What a run reads instead of prompt ids it leaves out.
_TEXT_READ, _NO_PROMPT = "the prompt text is read", "the record is read as if it gave no prompt"


def read_prompt(t: Transcript) -> PromptRead:
    """How the run reads `t`'s prompt (see the module doc): `prompt` wins; `prompt_token_ids` are
    read where a tokenizer here holds every id and decodes them to `prompt` (when given)."""
    ids, text = t.prompt_token_ids, t.prompt
    if not ids:
        return PromptRead(text)
    tokenizer, label, why = ids_decoder(t)  # the record's tokenizer, else its family's
    if tokenizer is None:
        if text is not None:  # nothing to check them with: the text stands, and it is the prompt
            return PromptRead(text)
        if t.tokenizer is not None and _read_by_vllm_only(t.tokenizer):
            # vLLM builds its own Mistral tokenizer of it (`Runner._built`) and reads the ids
            said = f"read by vLLM only ({why}); other backends read the record as if it gave no prompt"
            return PromptRead(None, list(ids), t.tokenizer, said)
        return PromptRead(problem=f"not read: {why}; {_NO_PROMPT}")
    decoded, why = _decoded(tokenizer, list(ids), label)
    if decoded is None:
        return PromptRead(text, problem=f"not read: {why}; {_TEXT_READ if text is not None else _NO_PROMPT}")
    if text is not None and decoded != text:
        where = first_difference(decoded, text)
        return PromptRead(
            text,
            problem=f"not read: with {label} they decode to other text than prompt, {where}; {_TEXT_READ}",
        )
    return PromptRead(decoded, list(ids) if t.tokenizer is not None else None, t.tokenizer)


def prompt_warning(t: Transcript) -> str:
    """The warning for a record whose `prompt_token_ids` are left out, wholly or in part ("": none)."""
    problem = read_prompt(t).problem
    return f"{t.id}: prompt_token_ids {problem}" if problem else ""


def unused_token_ids(t: Transcript) -> str:
    """The warning for a record whose `token_ids` no reading uses ("" when they are used, or when
    that is each parser's to decide: a record that names no tokenizer has its ids read with the
    parser's, and vLLM builds its own of ``pypi:mistral-common``). Each reading's tokenizer says
    it too; this says it where a table shows no tokenizer."""
    if t.token_ids is None:
        return ""
    if t.token_ids and (t.tokenizer is None or _read_by_vllm_only(t.tokenizer)):
        return ""
    why = transcript_ids(t, None)
    if not isinstance(why, str) or not why:
        return ""
    if t.token_texts is not None and not token_texts_problem(t) and not ids_judged_wrong(why):
        return ""  # the recorded texts carry them (nothing here reads them to say otherwise)
    return f"{t.id}: token_ids not used (the token chunkings cut the output with another tokenizer, named in each reading): {why}"


def misspelt_keys(t: Transcript) -> str:
    """The warning for a record key that is no field but close to one (``expectd``): unknown keys
    are kept as a log line's own metadata, so a typo of ``expected`` left the record unscored and
    every reading of it "pass", unsaid. ("" when no key looks like a field.)"""
    fields = list(Transcript.model_fields)
    said = [
        f"{key!r} (did you mean {near[0]!r}?)"
        for key in (t.model_extra or {})
        if len(key) > 3 and (near := difflib.get_close_matches(key, fields, n=1, cutoff=0.8))
    ]
    if not said:
        return ""
    return f"{t.id}: key {', '.join(said)} not read: a key that is no field is kept as metadata"


#: Every check `record_warnings` makes: one a field.
RECORD_CHECKS: tuple[Callable[[Transcript], str], ...] = (
    misspelt_keys,
    unused_token_texts,
    unused_token_ids,
    prompt_warning,
)


def record_warnings(
    t: Transcript, checks: Sequence[Callable[[Transcript], str]] = RECORD_CHECKS
) -> list[str]:
    """What of `t` a run leaves out, one warning a field, each naming the record and the field."""
    return [w for w in (check(t) for check in checks) if w]


class RecordWarnings:
    """Says `record_warnings` (of `checks`) through `warn`, the first `shown` of them, then how many
    in all, so a log with a million such records warns in a few lines."""

    def __init__(
        self,
        warn: Callable[[str], None],
        shown: int = 20,
        checks: Sequence[Callable[[Transcript], str]] = RECORD_CHECKS,
    ) -> None:
        self.warn, self.shown, self.checks, self.found = warn, shown, checks, 0

    def see(self, t: Transcript) -> None:
        for message in record_warnings(t, self.checks):
            self.found += 1
            if self.found <= self.shown:
                self.warn(message)

    def close(self) -> None:
        if self.found > self.shown:
            self.warn(f"{self.found} record fields not read in all (the first {self.shown} shown)")


def warned(transcripts: Iterable[Transcript], warn: Callable[[str], None]) -> Iterator[Transcript]:
    """`transcripts`, lazily, each one's `record_warnings` said (`RecordWarnings`) as it passes."""
    said = RecordWarnings(warn)
    for t in transcripts:
        said.see(t)
        yield t
    said.close()

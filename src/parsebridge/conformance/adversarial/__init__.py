"""Adversarial outputs: the corpus, the family grammars behind it, and the probe that judges a parser on them.

On a server one bad model output must not take down a request stream, let
alone the process. This module builds the outputs that try to (documented
case by case in ``fixtures/adversarial.md``) and checks what parsers do with
them. Everything is generated deterministically, never stored: the large
cases are megabytes.

* `GRAMMARS` / `grammar(kind, family)` (`grammars`) — how each family in the family table
  writes calls (or reasoning), plus its markers, taken from
  `parsebridge.formats`; shared by the corpus, the fuzz tests
  (hypothesis strategies over `fuzz_pieces`) and the benchmark.
* `CASES`, `build_case(kind, family, case, size)` — one case at a chosen size
  (the benchmark's time-vs-length series); `adversarial_transcripts(families,
  scale)` yields every case of every family as `Transcript`s at nominal size ×
  `scale` (1 MB outputs, 10k calls, 500-deep arguments at ``scale=1``).
  ``expected`` is set only where the reading is unambiguous.
* `random_output(rng, grammar)` — a random output from the family's grammar
  plus noise, for fuzzing without hypothesis (the benchmark uses it).
* `probe(subject, text, chunkings)` — one output through one parser, one-shot
  and streamed at each chunking. Never raises: it returns the exceptions that
  escaped untyped (must be none), the typed errors, the differences between
  stream and one-shot (conformance `DivergenceClass`es) and, with
  ``account=True`` (builtin), text that was lost or duplicated.

Modules: `grammars` (families, tools, text), `cases` (the corpus), `fuzz`
(random outputs and chunkings), `probe` (the judge and the CPU budget).
"""

from __future__ import annotations

from .cases import CASES, Case, adversarial_transcripts, build_case, size_for
from .fuzz import fuzz_pieces, noise_word, random_chunks, random_output, token_chunks
from .grammars import (
    CONTROLS,
    FOREIGN_FRAGMENTS,
    GRAMMARS,
    SENTINELS,
    SURROGATES,
    TOOLS,
    Grammar,
    all_markers,
    grammar,
    prose,
)
from .probe import (
    OverBudget,
    ProbeResult,
    account,
    cpu_budget,
    families_for,
    kept_text,
    probe,
    subject_for,
)

__all__ = [
    "CASES",
    "CONTROLS",
    "FOREIGN_FRAGMENTS",
    "GRAMMARS",
    "SENTINELS",
    "SURROGATES",
    "TOOLS",
    "Case",
    "Grammar",
    "OverBudget",
    "ProbeResult",
    "account",
    "adversarial_transcripts",
    "all_markers",
    "build_case",
    "cpu_budget",
    "families_for",
    "fuzz_pieces",
    "grammar",
    "kept_text",
    "noise_word",
    "probe",
    "prose",
    "random_chunks",
    "random_output",
    "size_for",
    "subject_for",
    "token_chunks",
]

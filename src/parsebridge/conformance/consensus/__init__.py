"""The consensus check: wherever vLLM and SGLang agree on a reading, builtin must give it too.

* `consensus_corpus(families)` (`corpus`) — per family with a builtin, a vLLM
  and an SGLang parser in the family table: the bundled fixtures plus
  outputs generated from the family's format (text around and between calls,
  missing, doubled and stray markers, end-of-sequence tokens, typed
  parameters, truncation at every marker).
* `run_consensus(transcripts)` (`check`) — each one-shot through the three
  backends; an `Outcome` per transcript says whether the frameworks agree
  and whether builtin agrees with them.
* `check(outcomes, load_reviewed())` — the disagreements the reviewed list
  (``consensus.yaml``: exceptions with reasons, and today's baseline grouped
  by reason) does not name, and named cases that agree now.

* `add_voices(outcomes, corpus)` (`voices`) — the same cases read by Dynamo
  and smg too, a third and a fourth voice beside the consensus (they judge
  nothing; docs/consensus.md says where they agree, differ, or side with builtin).

``python -m parsebridge.conformance.consensus`` runs it and prints counts per
family (``--write-baseline`` records today's disagreements, keeping reviewed
reasons; ``--json`` prints every outcome).
"""

from __future__ import annotations

from .check import (
    BACKENDS,
    Entry,
    Outcome,
    Reviewed,
    Verdict,
    check,
    differences,
    frameworks_missing,
    load_reviewed,
    run_consensus,
    summary,
    variant_of,
)
from .corpus import (
    EOS_TOKENS,
    FRAMEWORKS,
    TOOLS,
    consensus_corpus,
    consensus_families,
    fixture_cases,
    reasoning_variants,
    tool_variants,
)

__all__ = [
    "BACKENDS",
    "EOS_TOKENS",
    "FRAMEWORKS",
    "TOOLS",
    "Entry",
    "Outcome",
    "Reviewed",
    "Verdict",
    "check",
    "consensus_corpus",
    "consensus_families",
    "differences",
    "fixture_cases",
    "frameworks_missing",
    "load_reviewed",
    "reasoning_variants",
    "run_consensus",
    "summary",
    "tool_variants",
    "variant_of",
]

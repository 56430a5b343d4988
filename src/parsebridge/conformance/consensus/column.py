"""The conformance report's "consensus" column: builtin's default against what vLLM and SGLang agree on.

A conformance run reads builtin under ``conventions="lossless"`` (the fixtures'
expected readings keep every character), so its own rows cannot say how the
default reads. When the run has builtin, vLLM and SGLang, each transcript it
read is read once more, one-shot, by the three as the consensus check reads
it (builtin under ``"servers"``). vLLM's and SGLang's one-shot readings are the
run's own when it has them (a one-shot chunking, the family table's parsers):
only builtin, whose run read ``"lossless"``, is read again. Per family the report gets how many
transcripts have a consensus, how many builtin agrees with, how many of the
rest the reviewed list (``consensus.yaml``) names, and the ids of any it does
not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..chunking import parse_chunking
from ..runner import Result
from ..transcripts import Transcript
from .check import BACKENDS, Known, Outcome, load_reviewed, run_consensus
from .corpus import FRAMEWORKS, as_case


def applies(backends: Sequence[str]) -> bool:
    """Whether a run with these (available) backends can fill the column."""
    return all(b in backends for b in BACKENDS)


def family_rows(outcomes: Iterable[Outcome]) -> dict[str, dict[str, Any]]:
    """``kind:family`` → cases, consensus, agrees, reviewed, unexplained (ids) for the report."""
    reviewed = load_reviewed()
    rows: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        row = rows.setdefault(
            o.family, {"cases": 0, "consensus": 0, "agrees": 0, "reviewed": 0, "unexplained": []}
        )
        row["cases"] += 1
        row["consensus"] += o.consensus
        row["agrees"] += o.consensus and o.agrees
        if o.disagrees:
            if reviewed.entry_for(o.id) is not None:
                row["reviewed"] += 1
            else:
                row["unexplained"].append(o.id.split("/", 1)[1])
    return dict(sorted(rows.items()))


def known_readings(results: Iterable[Result]) -> Known:
    """The run's one-shot vLLM and SGLang results, keyed as `run_consensus` looks them up.

    Builtin's are left out: the run reads it under ``"lossless"``, the column under ``"servers"``
    (conventions reach builtin only, so the frameworks' readings are the same either way).
    """
    streamed: dict[str, bool] = {}
    known: dict[tuple[str, str, str, str | None], Result] = {}
    for r in results:
        if r.backend not in FRAMEWORKS:
            continue
        if r.chunking not in streamed:
            streamed[r.chunking] = parse_chunking(r.chunking).streamed
        if not streamed[r.chunking]:
            known.setdefault((f"{r.kind}:{r.family}/{r.transcript}", r.backend, r.spec, r.reasoning_spec), r)
    return known


def consensus_column(
    transcripts: Sequence[Transcript], results: Iterable[Result] = ()
) -> dict[str, dict[str, Any]]:
    """The column's data for the transcripts of a run (see the module doc); `results`: the run's."""
    return family_rows(run_consensus((as_case(t) for t in transcripts), known=known_readings(results)))

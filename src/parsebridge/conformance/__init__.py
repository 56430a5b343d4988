"""The conformance suite: shared transcripts → every backend → a report.

Dependencies run one way: conformance → adapters → protocol. Nothing here
imports a framework; backends do that lazily when a spec names them.

The API, bottom up (what `compare` and the pytest plugin build on):

Transcripts (`transcripts`)
    `Transcript` (pydantic; the documented transcript fields; extra keys kept), `Expected`,
    `ExpectedCall`, `KnownDivergence`. `iter_transcripts(path)` streams a
    JSONL/YAML/bare-text file (generator, constant memory for JSONL; lenient:
    ``{"output": ...}`` alone is enough, OpenAI-ish keys are accepted);
    `load_transcripts(paths)` loads a list; `bundled_transcripts(families,
    kinds)` gives the validated fixtures shipped in ``conformance/fixtures``;
    `select(...)` filters lazily; `validate_transcripts` is the strict check.

Chunkings (`chunking`)
    `parse_chunking("token-5") -> Chunking`; `Chunking.split(text, parser,
    token_texts) -> list[Chunk(text, token_ids)]`; `DEFAULT_CHUNKINGS`,
    `ALL_CHUNKINGS`. ``oneshot`` means no stream (the reference).

Running (`runner`)
    `Target(backend, tool_spec, reasoning_spec)`; `target_for(transcript,
    backend)` resolves a family to a backend's specs through the family
    table (or gives an `unsupported` target); `Target.explicit(tool=...,
    reasoning=...)` wraps given specs; `plan_explicit(transcripts, tool=,
    reasoning=)` pairs given specs with the transcripts they can read;
    `spec_family(kind, spec)` finds the family a spec implements.
    `Runner(chunkings)` caches parsers per (specs, tools) and runs:
    `run(backends, transcripts)`, `run_targets(targets, transcripts)` and
    `run_pairs(pairs)` yield `Result`s (`Result.to_dict()` is one
    report.json row); `run_transcript(target, transcript)` gives one
    transcript's rows (one-shot parsed once, reused by every chunking).
    Lower level, for `compare`: `Runner.subject(target, tools)` is the built
    parser(s) (raises what construction raised); `observe_oneshot(subject,
    t)` / `observe_stream(subject, t, chunking)` give raw `Observation`s
    (reading, anomalies, joined argument fragments, error text, elapsed)
    without judging them; they never raise.

Checks (`checks`)
    `DivergenceClass` (str enum, `.description`), `Difference(cls, detail,
    source, known, reason)`. `compare_observations(a, b, markers=...)` and
    `compare_readings(ref, got, exact=...)` name the differences between two
    readings; `check_expected(obs, expected)`; `check_invariants(obs)`;
    `evaluate(transcript, obs, oneshot, backend=...) -> Verdict(status,
    differences)`; `status_of(differences)`. Statuses: `STATUSES`.

Reports (`report`, `html`)
    `build_report(results, transcripts, backends=...)` → the report.json dict
    (fields in `report`'s docstring; the documented contract plus more);
    `write_report(dir, report)` writes report.json, report.md and a
    self-contained report.html; `summarize(rows)` counts statuses.

Also: `parallel.run_units` (forked workers, results in sequential order),
`pytest_plugin` (and the suite it loads, `pytest_suite`)
(``pytest --parsebridge-spec SPEC``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol._lazy import lazy_exports
from .checks import (
    KNOWN_MARKERS,
    STATUSES,
    Difference,
    Status,
    Verdict,
    check_expected,
    check_invariants,
    compare_calls,
    compare_observations,
    compare_readings,
    compare_text,
    evaluate,
    family_markers,
    mark_known,
    markers_for,
    same_json,
    status_of,
)
from .chunking import (
    ALL_CHUNKINGS,
    DEFAULT_CHUNKINGS,
    Chunk,
    Chunking,
    approximate_tokens,
    find_chunker,
    parse_chunking,
    parse_chunkings,
)
from .classes import DESCRIPTIONS, DivergenceClass
from .log_files import load_transcripts
from .observation import Observation, normalize_call
from .observe import observe_oneshot, observe_stream
from .runner import Result, Runner, plan_explicit, run_conformance, spec_family
from .subject import Subject, Target, parser_markers, target_for
from .transcripts import (
    Expected,
    ExpectedCall,
    KnownDivergence,
    TokenizerRef,
    Transcript,
    TranscriptError,
    bundled_transcripts,
    fixtures_dir,
    iter_transcripts,
    select,
    transcript_from,
    validate_transcripts,
)

if TYPE_CHECKING:
    from .report import build_report as build_report
    from .report import summarize as summarize
    from .report import write_report as write_report

#: Names loaded on first use: `report` brings the round-trip and adversarial machinery and the HTML
#: renderer (about 60 ms of imports), which `compare`, a user of the runner alone, never touches.
_LAZY = {"build_report": "report", "summarize": "report", "write_report": "report"}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

__all__ = [
    "ALL_CHUNKINGS",
    "DEFAULT_CHUNKINGS",
    "DESCRIPTIONS",
    "KNOWN_MARKERS",
    "STATUSES",
    "Chunk",
    "Chunking",
    "Difference",
    "DivergenceClass",
    "Expected",
    "ExpectedCall",
    "KnownDivergence",
    "Observation",
    "Result",
    "Runner",
    "Status",
    "Subject",
    "Target",
    "TokenizerRef",
    "Transcript",
    "TranscriptError",
    "Verdict",
    "approximate_tokens",
    "build_report",
    "bundled_transcripts",
    "check_expected",
    "check_invariants",
    "compare_calls",
    "compare_observations",
    "compare_readings",
    "compare_text",
    "evaluate",
    "family_markers",
    "find_chunker",
    "fixtures_dir",
    "iter_transcripts",
    "load_transcripts",
    "mark_known",
    "markers_for",
    "normalize_call",
    "observe_oneshot",
    "observe_stream",
    "parse_chunking",
    "parse_chunkings",
    "parser_markers",
    "plan_explicit",
    "run_conformance",
    "same_json",
    "select",
    "spec_family",
    "status_of",
    "summarize",
    "target_for",
    "transcript_from",
    "validate_transcripts",
    "write_report",
]

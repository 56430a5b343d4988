"""Backends side by side on the same transcripts: from one pasted output to a production log.

`compare` answers "if I switch this model from one backend's parser to
another, does what my clients see change?". For each transcript every spec
(a reasoning and/or tool parser, possibly from different backends) reads the
output one-shot and streamed at several chunkings; readings are compared
with the conformance suite's own classifier (`checks.compare_observations`),
within a spec (one-shot vs each stream: streaming bugs) and across specs at
each mode (what a client of either backend gets). Transcripts that carry
`expected` are also scored against it.

Nothing here runs a parser by itself: the conformance `Runner` builds and
caches parsers and produces the observations, exactly as the suite does, so
`compare` and `parsebridge conformance` can never disagree about what a
backend did.

Scale (a production log of 10⁵–10⁶ responses):

* input is consumed lazily and at most ``jobs × INFLIGHT`` batches are in
  flight, so memory does not grow with the log;
* workers are processes (parsing is CPU-bound Python), local (``jobs``) or
  Ray actors (``executor="ray"``, a local runtime or a cluster), each with
  its own `Runner` whose parser cache is bounded (`_BoundedRunner`);
* a comparison is one typed record (`TranscriptComparison`) from the
  `Comparer` to the summary and the output; workers send theirs back as
  JSON lines, read back on arrival; the parent writes and aggregates, and
  keeps a bounded top-N of the most different transcripts for display.

The Python API (`compare`, `iter_compare`, both taking `CompareOptions`' fields)
returns the same structures as ``parsebridge compare --format json`` (see
`parsebridge.comparison.models`); `compare` is `iter_compare` with the summary.

Modules: `plan` (what runs), `comparer` (one transcript), `summary` (the
aggregate), `executors` / `ray_executor` (where the comparisons run); this
module is the Python API and re-exports their public names.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel, Field

from ..conformance.record_use import warned
from ..conformance.runner import Target
from ..conformance.transcripts import Transcript, transcript_from
from ..protocol.errors import InvalidInputError, InvalidSpecError, UnknownOptionError
from .batches import BATCH, INFLIGHT
from .comparer import SUBJECT_CACHE, Comparer
from .executors import run_comparisons
from .inputs import names_a_path, path_sources
from .models import CompareRun, CompareSummary, TranscriptComparison, dump_line
from .plan import (
    ComparePlan,
    SpecLike,
    available_backends,
    family_targets,
    mode_names,
    resolve_families,
    targets_from,
)
from .resume import run_settings
from .summary import SummaryBuilder, backend_group

__all__ = [
    "BATCH",
    "INFLIGHT",
    "SUBJECT_CACHE",
    "CompareOptions",
    "ComparePlan",
    "CompareResult",
    "Comparer",
    "SpecLike",
    "SummaryBuilder",
    "Target",
    "as_transcripts",
    "available_backends",
    "backend_group",
    "compare",
    "family_targets",
    "iter_compare",
    "mode_names",
    "resolve_families",
    "run_comparisons",
    "targets_from",
]


# ---------------------------------------------------------------- the Python API


class CompareResult(BaseModel):
    """What `compare` returns: the same objects `--format json` prints: the run's settings, one
    comparison per transcript, and the summary."""

    run: CompareRun | None = None
    comparisons: list[TranscriptComparison] = Field(default_factory=list)
    summary: CompareSummary = Field(default_factory=CompareSummary)

    def to_jsonl(self) -> str:
        """Exactly what ``parsebridge compare --format json`` would print."""
        head = [self.run] if self.run is not None else []
        return "".join(dump_line(c) + "\n" for c in [*head, *self.comparisons, self.summary])


TranscriptsLike = (
    str
    | os.PathLike[str]
    | Transcript
    | dict[str, Any]
    | Iterable[str | os.PathLike[str] | Transcript | dict[str, Any]]
)

#: How a `str` that reads as a path is compared as text instead (the message of a missing one).
_AS_TEXT = 'pass {"output": text}'


#: The package's folder: a warning names the first line outside it, the caller's.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _warn(message: str) -> None:
    """A `UserWarning` that points at the caller's line (the first frame outside parsebridge).

    How deep that is from here varies: a record's warning is raised while an executor pulls the
    next transcript through two generators, so the fixed ``stacklevel=4`` this had named a line
    of executors.py. The frames are walked, as 3.12's ``skip_file_prefixes`` would, on 3.11 too.
    """
    frame, level = sys._getframe(1), 2  # level 2: the frame that called `_warn`
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, stacklevel=level)


def as_transcripts(source: TranscriptsLike) -> Iterator[Transcript]:
    """Lazily, each item: a path (`os.PathLike`, or a `str` that `names_a_path`) read as the command
    line reads one (a transcript file, a directory of them, a glob; a missing one raises
    `MissingInputError`, a `FileNotFoundError`), any other `str` one raw output, a dict a
    transcript object (``{"output": text}``: text, whatever it looks like)."""
    single = isinstance(source, (str, os.PathLike, Transcript, dict))
    if not single and (
        isinstance(source, (bytes, bytearray, memoryview)) or not isinstance(source, Iterable)
    ):
        raise InvalidInputError("compare", source)  # bytes iterate as numbers: "not a number" misled
    items: Iterable[Any] = [source] if single else source
    for n, item in enumerate(items, 1):
        # in a list too: None or a number was "a transcript is a JSON object, not null"
        if item is None or isinstance(item, (bytes, bytearray, memoryview, int, float)):
            raise InvalidInputError("compare", item)
        if isinstance(item, Transcript):
            yield item
        elif isinstance(item, os.PathLike) or (isinstance(item, str) and names_a_path(item)):
            for src in path_sources(os.fsdecode(item), text_hint=_AS_TEXT, warn=_warn):
                yield from src.items
        elif isinstance(item, str):
            yield transcript_from({"output": item}, "text" if n == 1 else f"text-{n}")
        else:
            yield transcript_from(item, f"transcript-{n}")


#: Keywords a caller tries for the tool parsers, which `compare` takes as `specs`.
_TOOL_PARSERS_GUESSES = ("tool_parser", "tool_parsers", "tool_parser_specs", "parsers")
_TOOL_PARSERS_NOTE = (
    "the tool parsers (and pipelines) are compare's second argument, specs: "
    "compare(text, ['builtin:hermes', 'vllm:hermes'])"
)
_TOOLS_NOTE = (
    'compare reads each transcript\'s own tools: give a record its "tools" list, '
    'e.g. {"output": text, "tools": [...]}'
)


@dataclass(frozen=True)
class CompareOptions:
    """What `compare` and `iter_compare` run, and where: one set of options for both.

    `specs`: tool specs (``"vllm:hermes"``), pipelines (``"builtin:qwen3 + vllm:hermes"``)
    or `Target`s, one alone or a list; `reasoning_parsers` pair with them (see
    `targets_from`). Without specs, `family` (e.g. ``"hermes"``) picks each backend's parser
    from the family table, and without that each transcript's own family is used; `backends`
    limits which backends (default: all installed; one string: comma-separated). `chunkings`: streamed chunkings (default ``token, token-5,
    token-20``; ``oneshot`` is always added). `conventions`: builtin parsers'
    ``conventions=`` (default ``"servers"``, what they give a user; ``"lossless"`` is what
    the bundled fixtures' `expected` is written for).

    `executor`: ``"local"`` (this process, or `jobs` forked processes, 0: one per CPU) or
    ``"ray"`` (`jobs` Ray actors, 0: one per CPU, on the cluster at `address`, or on a
    local runtime started for the call; needs ``pip install '.[ray]'`` in the clone, else
    `RayUnavailableError`). `ordered`: comparisons in input order (False: as they finish).
    """

    specs: SpecLike | Sequence[SpecLike] | None = None
    reasoning_parsers: str | Sequence[str] | None = None
    family: str | Sequence[str] | None = None
    backends: str | Sequence[str] | None = None
    chunkings: str | Sequence[str] | None = None
    conventions: str | None = None
    jobs: int = 1
    ordered: bool = True
    executor: str = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        """`jobs` and `ordered` checked as the command line checks ``--jobs`` (``jobs="2"`` failed
        deep in the executor with ``'<=' not supported``, ``jobs=-1`` ran as 0 unsaid)."""
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 0:
            raise InvalidSpecError(
                f"compare: jobs must be a whole number, 0 (one per CPU) or more, not {self.jobs!r}"
            )
        if not isinstance(self.ordered, bool):
            raise InvalidSpecError(f"compare: ordered must be True or False, not {self.ordered!r}")

    @classmethod
    def of(
        cls,
        specs: SpecLike | Sequence[SpecLike] | None,
        options: dict[str, Any],
        call: str = "compare()",
        also: Sequence[str] = ("top", "progress"),
    ) -> CompareOptions:
        """The options from keyword arguments; a misspelt one is `UnknownOptionError` (a `TypeError`
        and a `ParsebridgeError`, as for a parser's options) naming it and the nearest; the tool
        parsers and the tools, which are no option here, say where they go instead. `call` and the
        keywords it `also` takes beside these fields name the function that was called."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            notes = {name: _TOOL_PARSERS_NOTE for name in _TOOL_PARSERS_GUESSES}
            notes["tools"] = _TOOLS_NOTE
            raise UnknownOptionError(call, unknown, [*known, *also], notes=notes)
        return cls(specs=specs, **options)

    def plan(self) -> ComparePlan:
        """What runs on each transcript, checked now (a bad spec raises before any work)."""
        return ComparePlan.build(
            self.specs,
            reasoning_parsers=self.reasoning_parsers,
            family=self.family,
            backends=self.backends,
            chunkings=self.chunkings,
            conventions=self.conventions,
        )

    def comparisons(self, transcripts: TranscriptsLike, plan: ComparePlan) -> Iterator[TranscriptComparison]:
        """The comparisons of `transcripts` under `plan`, where these options say; a record field
        no reading will use is a `UserWarning` naming the record (`record_use.record_warnings`)."""
        return run_comparisons(
            warned(as_transcripts(transcripts), _warn),
            plan,
            jobs=self.jobs,
            ordered=self.ordered,
            executor=self.executor,
            address=self.address,
        )


def iter_compare(
    transcripts: TranscriptsLike, specs: SpecLike | Sequence[SpecLike] | None = None, **options: Any
) -> Iterator[TranscriptComparison]:
    """One `TranscriptComparison` per transcript, lazily (for logs too large to hold).

    `options` are `CompareOptions`' fields (as `compare` takes them); a bad spec raises
    `InvalidSpecError` here, before any transcript is read.
    """
    opts = CompareOptions.of(specs, options, "iter_compare()", ())
    return opts.comparisons(transcripts, opts.plan())


def compare(
    transcripts: TranscriptsLike,
    specs: SpecLike | Sequence[SpecLike] | None = None,
    *,
    top: int = 10,
    progress: Callable[[int], None] | None = None,
    **options: Any,
) -> CompareResult:
    """Compare parsers on transcripts; the same structures as ``parsebridge compare --format json``.

    `transcripts`: a path (`os.PathLike`, or a ``str`` naming a file or directory that exists,
    or one line ending in a transcript suffix: ``.jsonl``, ``.ndjson``, ``.json``, ``.yaml``,
    ``.yml``, ``.gz``) read as the command line reads one, a missing one raising
    `FileNotFoundError` (`MissingInputError`); any other ``str``: one raw output; a dict
    (``{"output": text}``: text, whatever it looks like) or `Transcript`; or an iterable of
    those. `specs`: one spec string (one parser, or one pipeline ``"R + T"``, as one
    ``--tool-parser``) or a list of them. `options`: `CompareOptions`' other fields
    (reasoning_parsers, family, backends, chunkings, conventions, jobs, ordered, executor,
    address). The result is
    every comparison `iter_compare` yields, and their summary (`top`: how many
    most-different transcripts it lists; `progress(1)` after each).
    Exceptions from parsers never escape: they are readings with ``status:
    "error"`` and ``backend_error`` differences. Bad specs raise
    `InvalidSpecError` before any work. The comparisons and the summary are
    the same whichever executor ran them.

        >>> r = pb.compare(text, ["builtin:hermes", "vllm:hermes"])
        >>> r.summary.pairs[0].rate, r.comparisons[0].differences
        >>> pb.compare("responses.jsonl", "builtin:hermes")  # a transcript file, one spec
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InvalidSpecError(f"compare: top must be a whole number, 0 or more, not {top!r}")
    if progress is not None and not callable(progress):
        raise InvalidSpecError(
            f"compare: progress is a function called with 1 per transcript, not {progress!r}"
        )
    opts = CompareOptions.of(specs, options)
    plan = opts.plan()
    start = time.perf_counter()
    builder = SummaryBuilder(plan.modes, top=top, conventions=plan.conventions)
    out: list[TranscriptComparison] = []
    for rec in opts.comparisons(transcripts, plan):
        builder.add(rec)
        out.append(rec)
        if progress is not None:
            progress(1)
    summary = builder.summary(elapsed=time.perf_counter() - start)
    return CompareResult(run=run_settings(plan), comparisons=out, summary=summary)

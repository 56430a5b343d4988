"""Run transcripts through parsers, one-shot and streamed, and judge each result.

The unit of work is (target × transcript × chunking). A `Target` is what to
run: a backend and the reasoning and/or tool spec, either resolved from a
transcript's family through the family table (`target_for`) or given
explicitly (`Target.explicit`, what `compare` and the pytest plugin use);
it and the built parsers (`Subject`) live in `subject` (importable from here
too), the observing in `observe`, the judging in `checks`.

Parser objects are built through the registry once per (specs, tools,
reasoning-started) and reused; only streams are per request. Nothing a
backend raises escapes: construction problems become `unsupported` (no
parser for the family, framework not installed, parser module absent) or
`error`; a raise while parsing becomes an `error` result carrying a
`BackendError` message that names backend, parser and transcript.
"""

from __future__ import annotations

import functools
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..adapters import get_backend, resolve
from ..adapters._tokenizers import vocabulary_problem
from ..protocol import (
    ParserSpec,
    family_table,
)
from ..protocol.families import FamilyTable
from .checks import Status, Verdict, evaluate, markers_for
from .chunking import Chunking, chunkings_of
from .observation import Observation
from .observe import ONESHOT_IDS_BACKENDS, failed, observe
from .request_checks import request_checks
from .subject import Subject, Target, target_for, unsupported_reason
from .token_pieces import source_for, transcript_tokenizer
from .transcripts import TokenizerRef, Transcript


@dataclass
class Result:
    """One row of the report: a target, a transcript, a chunking, and the verdict."""

    backend: str
    spec: str
    reasoning_spec: str | None
    family: str
    kind: str
    transcript: str
    chunking: str
    status: Status
    verdict: Verdict = field(default_factory=lambda: Verdict("pass"))
    observation: Observation | None = None
    reason: str | None = None  # why unsupported / what errored at construction
    #: The markers the reading was checked for: the parser's own and its families' (none unread).
    markers: tuple[str, ...] = ()

    @property
    def classes(self) -> list[str]:
        return self.verdict.classes

    @property
    def known(self) -> bool:
        return self.verdict.known

    @property
    def detail(self) -> str:
        return self.verdict.detail or (self.reason or "")

    @classmethod
    def row_of(cls, target: Target, transcript: Transcript) -> Row:
        """``row(chunking, status, **fields)``: a result of `target` on `transcript`."""
        t = transcript
        return functools.partial(
            cls, target.backend, target.spec, target.reasoning_spec, t.family_name, t.kind, t.id
        )

    def to_dict(self) -> dict[str, Any]:
        """The documented result fields plus differences, observation and timing."""
        out: dict[str, Any] = {
            "backend": self.backend,
            "spec": self.spec,
            "reasoning_spec": self.reasoning_spec,
            "family": self.family,
            "kind": self.kind,
            "transcript": self.transcript,
            "chunking": self.chunking,
            "status": self.status,
            "classes": self.classes,
            "detail": self.detail,
            "known": self.known,
        }
        if self.known:
            out["known_reason"] = self.verdict.reason
        if self.verdict.differences:
            out["differences"] = [d.to_dict() for d in self.verdict.differences]
        if self.observation is not None:
            out["observed"] = self.observation.to_dict()
            out["elapsed_ms"] = round(self.observation.elapsed * 1000, 3)
        return out


#: A `Result` for one chunking of a fixed (target, transcript): ``row(chunking, status, **fields)``.
Row = Callable[..., Result]


# ---------------------------------------------------------------- the runner

#: Backends whose parsers take a tokenizer (a transcript's own is passed to them).
TOKENIZER_BACKENDS = frozenset({"vllm", "sglang", "dynamo", "smg"})


def _tools_key(tools: Sequence[dict[str, Any]]) -> str:
    return json.dumps(tools, sort_keys=True, default=str)


class BoundedCache(OrderedDict[tuple[Any, ...], Any]):
    """A parser cache that keeps the `limit` most recently used entries (an LRU)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        return default

    def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
        super().__setitem__(key, value)
        if len(self) > self.limit:
            self.popitem(last=False)


Progress = Callable[[int], None]


class Runner:
    """Runs targets × transcripts × chunkings; caches parsers and backend availability.

    One runner per process run; not thread-safe (parsers are, but the caches
    are filled without locks).
    """

    def __init__(
        self,
        chunkings: str | Sequence[str | Chunking] | None = None,
        *,
        table: FamilyTable | None = None,
        parser_options: dict[str, Any] | None = None,
        conventions: str | None = "lossless",
        cache: MutableMapping[tuple[Any, ...], Subject | BaseException] | None = None,
    ) -> None:
        self.chunkings: list[Chunking] = chunkings_of(chunkings)
        self.table = table or family_table()
        self.parser_options = dict(parser_options or {})
        #: The builtin parsers' `conventions=` (None: their default, "servers"). The bundled
        #: fixtures' expected readings were written for "lossless" (every character of an
        #: output accounted for in the content or a call), so that is what the suite runs;
        #: the consensus check runs "servers" against vLLM and SGLang.
        self.conventions = conventions
        #: Built parsers (or what building them raised) by (specs, tools): every one the run
        #: needs by default; `compare` passes a `BoundedCache`, so a log with many tools lists stays flat.
        self._subjects = cache if cache is not None else {}
        #: Parsers built with a transcript's own tokenizer (`_built`).
        self._tokenized: dict[tuple[Any, ...], Subject | BaseException] = {}
        self._unavailable: dict[str, str | None] = {}
        #: Seconds spent building parsers, per backend (where framework imports land).
        self.setup_seconds: dict[str, float] = {}

    # -- backends

    def unavailable_reason(self, backend: str) -> str | None:
        """Why a backend cannot run here (cached), or None when it can."""
        if backend not in self._unavailable:
            try:
                self._unavailable[backend] = get_backend(backend).unavailable_reason()
            except Exception as exc:
                self._unavailable[backend] = str(exc)
        return self._unavailable[backend]

    # -- parsers

    def subject(self, target: Target, tools: Sequence[dict[str, Any]]) -> Subject:
        """The cached parser(s) for a target and tools list; raises what construction raised."""
        built = self._built(target, tools)
        if isinstance(built, BaseException):
            raise built
        return built

    def _built(
        self, target: Target, tools: Sequence[dict[str, Any]], ref: TokenizerRef | None = None
    ) -> Subject | BaseException:
        """The cached parser(s) for a target and tools list, or what building them raised. With a
        transcript's tokenizer `ref`, a backend that takes token ids (vLLM, SGLang, ...) gets its own,
        built with that tokenizer; where that cannot be had here, the shared one (the report says so)."""
        shared = (target.reasoning_spec, target.tool_spec, _tools_key(tools))
        key, cache = shared, self._subjects
        if ref is not None and target.backend in TOKENIZER_BACKENDS:
            key, cache = (*shared, ref.model_dump_json()), self._tokenized
        cached = cache.get(key)
        if cached is not None:
            return cached
        options, own = self.options_for(target), cache is self._tokenized
        if own and ref is not None:
            if target.backend == "vllm" and ref.pypi == "mistral-common":  # vLLM's own Mistral tokenizer
                if vocabulary_problem(ref):  # a Tekken file it does not read: the shared parser
                    own = False
                else:
                    options = {**options, "tokenizer": ref}
            else:
                loaded, _ = transcript_tokenizer(ref)
                if loaded is None:  # not here: the shared parser, and the report says why
                    own = False
                else:
                    options = {**options, "tokenizer": ref if target.backend == "vllm" else loaded}
        cached = None if own else self._subjects.get(shared)
        if cached is None:
            t0 = time.perf_counter()
            try:
                cached = Subject(target, tools, **options)
            except Exception as exc:
                cached = exc
            spent = time.perf_counter() - t0
            self.setup_seconds[target.backend] = self.setup_seconds.get(target.backend, 0.0) + spent
        if not own:
            self._subjects[shared] = cached
        elif isinstance(cached, Subject):
            cached.tokenizer_ref = ref
        cache[key] = cached
        return cached

    def options_for(self, target: Target) -> dict[str, Any]:
        """The options `target`'s parsers are built with (`conventions` goes to builtin only)."""
        if self.conventions is None or target.backend != "builtin":
            return self.parser_options
        return {**self.parser_options, "conventions": self.conventions}

    # -- running

    def run_transcript(
        self,
        target: Target,
        transcript: Transcript,
        chunkings: Sequence[Chunking] | None = None,
        *,
        explicit: bool = False,
    ) -> list[Result]:
        """Every chunking of one transcript through one target, down the rooms once: the parser
        built (`subject`), the output's token pieces (`token_pieces`), what the parser made of it
        (`observe`: one-shot parsed once, reused), the request's checks, then the verdicts (`checks`)."""
        chunkings = list(chunkings or self.chunkings)
        row = Result.row_of(target, transcript)
        skipped = self._skip_reason(target, explicit)
        if skipped is not None:
            return [row(c.name, "unsupported", reason=skipped) for c in chunkings]
        subject = self._built(target, transcript.tools, transcript.tokenizer)
        broken = isinstance(subject, BaseException)
        why = unsupported_reason(subject) if broken and not explicit else None
        if why is not None:
            return [row(c.name, "unsupported", reason=why) for c in chunkings]
        if not broken:
            by_token = any(c.by_token for c in chunkings)
            ids_oneshot = transcript.token_ids and target.backend in ONESHOT_IDS_BACKENDS
            source = source_for(transcript, subject) if by_token or ids_oneshot else None
            pieces = source.pieces if source is not None else ()
            feeds = [c.to_feed(transcript.output, pieces) for c in chunkings]
            label = source.label if source is not None else None
            oneshot, observed = observe(subject, transcript, chunkings, feeds, label, source)
        else:  # every chunking saw the construction error; there is no one-shot reading to compare with
            oneshot, observed = None, failed(subject, target, transcript, chunkings)
        # split invariance: every token grouping against the 1-token reading (the first grouping run)
        reference = next((o for c, o in zip(chunkings, observed, strict=True) if c.by_token), None)
        more = [
            request_checks(transcript, seen, reference if c.by_token else None)
            for c, seen in zip(chunkings, observed, strict=True)
        ]
        markers = markers_for(transcript, () if broken else subject.markers, self.table)
        results: list[Result] = []
        for c, seen, extra in zip(chunkings, observed, more, strict=True):
            verdict = evaluate(
                transcript,
                seen,
                None if seen is oneshot else oneshot,
                backend=target.backend,
                spec=None if broken else target.spec,
                markers=markers,
                more=extra,
            )
            status = "error" if broken else verdict.status
            reason = seen.error if broken else None
            results.append(
                row(c.name, status, verdict=verdict, observation=seen, reason=reason, markers=markers)
            )
        return results

    def _skip_reason(self, target: Target, explicit: bool) -> str | None:
        """Why a target does not run: no such parser, or (unless named explicitly) no backend here."""
        if target.unsupported:
            return target.unsupported
        reason = None if explicit else self.unavailable_reason(target.backend)
        return None if reason is None else f"backend {target.backend!r} unavailable: {reason}"

    def run(
        self,
        backends: Sequence[str],
        transcripts: Iterable[Transcript],
        *,
        progress: Progress | None = None,
    ) -> Iterator[Result]:
        """Every backend (by family table) × transcript × chunking; `progress(n)` after each transcript."""
        units = ((target_for(t, b, self.table), t, False) for t in transcripts for b in backends)
        return self._run(units, progress)

    def run_targets(
        self,
        targets: Sequence[Target],
        transcripts: Iterable[Transcript],
        *,
        progress: Progress | None = None,
    ) -> Iterator[Result]:
        """Explicit targets (specs given, family ignored) × transcripts × chunkings.

        Construction errors of an explicit spec are `error`, not `unsupported`:
        the user asked for that parser.
        """
        return self._run(((target, t, True) for t in transcripts for target in targets), progress)

    def run_pairs(
        self, pairs: Iterable[tuple[Target, Transcript]], *, progress: Progress | None = None
    ) -> Iterator[Result]:
        """Explicit (target, transcript) pairs, e.g. from `plan_explicit`."""
        return self._run(((target, t, True) for target, t in pairs), progress)

    def _run(
        self, units: Iterable[tuple[Target, Transcript, bool]], progress: Progress | None
    ) -> Iterator[Result]:
        """Each (target, transcript, explicit) unit's rows, lazily; `progress(n)` after each unit."""
        for target, t, explicit in units:
            rows = self.run_transcript(target, t, explicit=explicit)
            if progress is not None:
                progress(len(rows))
            yield from rows


# ---------------------------------------------------------------- explicit specs


def spec_family(kind: str, spec: str, table: FamilyTable | None = None) -> str | None:
    """The family a (non-python) spec's parser implements, or None (python specs, unknown parsers).

    Resolving may import the spec's framework; errors mean "no family known".
    """
    parsed = ParserSpec.parse(spec)
    if parsed.backend == "python":
        return None
    table = table or family_table()
    try:
        backend, name = resolve(kind, parsed)  # type: ignore[arg-type]
    except Exception:
        fam = table.get(kind, parsed.name)  # type: ignore[arg-type]
        return fam.name if fam else None
    fam = table.for_parser(kind, backend.name, name)  # type: ignore[arg-type]
    return fam.name if fam else None


def plan_explicit(
    transcripts: Iterable[Transcript], *, tool: str | None = None, reasoning: str | None = None
) -> Iterator[tuple[Target, Transcript]]:
    """Pair given specs with the transcripts they can read.

    A tool spec alone reads tool transcripts without a reasoning family; a
    reasoning spec alone reads reasoning transcripts; both together also read
    tool transcripts that start with reasoning (as a pipeline).
    """
    if tool is None and reasoning is None:
        raise ValueError("give a tool spec, a reasoning spec, or both")
    for t in transcripts:
        if t.kind == "reasoning":
            if reasoning is not None:
                yield Target.explicit(reasoning=reasoning), t
        elif t.reasoning_family:
            if tool is not None and reasoning is not None:
                yield Target.explicit(tool=tool, reasoning=reasoning), t
        elif tool is not None:
            yield Target.explicit(tool=tool), t


def run_conformance(
    backends: Sequence[str],
    transcripts: Iterable[Transcript],
    chunkings: str | Sequence[str | Chunking] | None = None,
) -> list[Result]:
    """One call: the suite's results for these backends (a convenience over `Runner.run`);
    `chunkings` as `chunkings_of` reads them (None: the suite's default set)."""
    return list(Runner(chunkings).run(backends, transcripts))

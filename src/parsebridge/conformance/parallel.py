"""Run the suite's (target, transcript) units in worker processes.

Framework parsers are CPU-bound Python and several re-parse the whole
output at every chunk (quadratic in its length), so a full run is
dominated by a few long transcripts on a few backends. Worker processes
spread that over the machine's cores.

Workers are forked after the parent has imported the frameworks and
built one parser per backend and vocabulary (`warm`), so they inherit
imported modules, tokenizers and per-process caches instead of paying
for them again. That happens in stages, lightest framework import first
(`Backend.import_weight`): builtin's units start in the first stage's
workers while the parent is still importing SGLang, and SGLang's while it
imports vLLM (over ten seconds), so fewer cores wait on the imports.
Within a stage, units are handed out longest output first, so the slowest
ones do not start last.
If a worker dies (a framework crashing the interpreter), the units it
left undone run in the parent, sequentially: the report is complete
either way. Results come back in the sequential order, so reports do not
depend on the number of jobs.

Ctrl-C is the parent's (`lifecycle.pool`, as for compare's workers): workers
ignore SIGINT, and the parent, interrupted, cancels what has not started and
terminates the workers; each stops the servers it started before it ends.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ..adapters._vocabularies import family_of
from ..adapters.registry import get_backend
from ..lifecycle.pool import fork_available, worker_pool
from ..protocol import ParserSpec
from .runner import TOKENIZER_BACKENDS, Result, Runner, Target
from .token_pieces import warm_family_tokenizers
from .transcripts import Transcript

Unit = tuple[Target, int, bool]  # target, transcript index, explicit
R = TypeVar("R")

_STATE: dict[str, object] = {}


def default_jobs() -> int:
    """Cores this process may use, at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


@contextlib.contextmanager
def _forked_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of `jobs` forked workers (`lifecycle.pool`: Ctrl-C stops it at once). A dead worker
    (`BrokenProcessPool`) ends the block quietly: what it left undone runs in this process."""
    try:
        with worker_pool(jobs) as pool:
            yield pool
    except BrokenProcessPool:
        pass  # the rest runs in this process
    finally:
        _STATE.clear()


def _work(batch: list[int]) -> list[tuple[int, list[Result]]]:
    runner: Runner = _STATE["runner"]  # type: ignore[assignment]
    units: list[Unit] = _STATE["units"]  # type: ignore[assignment]
    transcripts: Sequence[Transcript] = _STATE["transcripts"]  # type: ignore[assignment]
    out = []
    for index in batch:
        target, ti, explicit = units[index]
        out.append((index, runner.run_transcript(target, transcripts[ti], explicit=explicit)))
    return out


def warm(runner: Runner, units: Sequence[Unit], transcripts: Sequence[Transcript]) -> None:
    """Build one parser per backend and vocabulary in the parent, and the vocabularies token chunkings
    cut text-only parsers with, so forked workers inherit imports and tokenizers: a real vocabulary
    costs seconds to build, which each worker would otherwise pay again."""
    seen: set[tuple[str, str | None]] = set()
    for target, ti, explicit in units:
        key = (target.backend, parser_vocabulary(target))
        if key in seen or target.unsupported:
            continue
        seen.add(key)
        if not explicit and runner.unavailable_reason(target.backend) is not None:
            continue
        if groups_units(target.backend):
            continue  # its parsers start servers (smg: a gRPC worker), which must not run before a fork
        with contextlib.suppress(Exception):  # reported per result by the workers
            runner.subject(target, transcripts[ti].tools)
    # Text-only parsers' token groupings cut with the family's vocabulary (`token_pieces.source_for`).
    if any(c.by_token for c in runner.chunkings):
        text_only = (transcripts[ti] for t, ti, _ in units if t.backend not in TOKENIZER_BACKENDS)
        warm_family_tokenizers({t.id: t for t in text_only}.values())


def parser_vocabulary(target: Target) -> str | None:
    """The real vocabulary a framework parser of `target` is built on by default (None: synthetic)."""
    spec = target.tool_spec or target.reasoning_spec
    return family_of(ParserSpec.parse(spec).name) if spec else None


def run_units(
    runner: Runner,
    units: Sequence[Unit],
    transcripts: Sequence[Transcript],
    *,
    jobs: int,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Result]:
    """Every unit's results, in unit order; `jobs` > 1 uses forked worker processes."""
    done: dict[int, list[Result]] = {}
    if jobs > 1 and len(units) > 1 and fork_available():
        _STATE.update(runner=runner, units=list(units), transcripts=transcripts)
        with contextlib.ExitStack() as pools:
            futures = []
            for stage in _stages(units):
                # This stage's frameworks imported and parsers built, then its own workers forked:
                # the earlier stages' workers run meanwhile.
                warm(runner, [units[i] for i in stage], transcripts)
                pool = pools.enter_context(_forked_pool(jobs))
                futures += [pool.submit(_work, batch) for batch in _batches(stage, units, transcripts)]
            # as_completed waits on all futures at once; a wait(FIRST_COMPLETED) loop re-arms every
            # pending future per wake-up (quadratic: ~3,000 units kept the parent busy on a core).
            for f in as_completed(futures):
                try:
                    finished = f.result()
                except BrokenProcessPool:
                    continue
                for i, rows in finished:
                    done[i] = rows
                    if progress is not None:
                        progress(len(rows))
    for i, (target, ti, explicit) in enumerate(units):
        got = done.get(i)
        if got is None:
            got = runner.run_transcript(target, transcripts[ti], explicit=explicit)
            if progress is not None:
                progress(len(got))
        yield from got


def _declared(backend: str, attribute: str, default: Any) -> Any:
    """What `backend`'s class declares as `attribute`, or `default` for an unknown backend (its
    results, from the workers, say why)."""
    try:
        return getattr(get_backend(backend), attribute)
    except Exception:
        return default


def groups_units(backend: str) -> bool:
    """Whether `backend` asks for its units in one batch per target (`Backend.groups_units`)."""
    return bool(_declared(backend, "groups_units", False))


def import_weight(backend: str) -> int:
    """How heavy `backend`'s framework import is (`Backend.import_weight`; unknown: 0)."""
    return int(_declared(backend, "import_weight", 0))


def _stages(units: Sequence[Unit]) -> list[list[int]]:
    """The units' indexes by their backend's import weight, lightest first: one worker pool each."""
    by_weight: dict[int, list[int]] = {}
    weights = {target.backend: import_weight(target.backend) for target, _, _ in units}
    for i, (target, _, _) in enumerate(units):
        by_weight.setdefault(weights[target.backend], []).append(i)
    return [by_weight[w] for w in sorted(by_weight)]


def _batches(
    stage: Sequence[int], units: Sequence[Unit], transcripts: Sequence[Transcript]
) -> list[list[int]]:
    """What each worker task of a stage runs: one unit, longest output first; a `groups_units`
    backend's units one batch per target (each configuration is a server process of the worker's
    own: handing its units to every worker would start it in each), biggest batches first."""
    singles: list[int] = []
    by_target: dict[str, list[int]] = {}
    for i in stage:
        target = units[i][0]
        if groups_units(target.backend) and not target.unsupported:
            by_target.setdefault(f"{target.backend}|{target.label}", []).append(i)
        else:
            singles.append(i)
    size = lambda i: len(transcripts[units[i][1]].output)  # noqa: E731
    singles.sort(key=lambda i: -size(i))
    groups = sorted(by_target.values(), key=lambda b: -sum(size(i) for i in b))
    return groups + [[i] for i in singles]


def _call(index: int) -> tuple[int, Any]:
    fn: Callable[[Any], Any] = _STATE["fn"]  # type: ignore[assignment]
    items: Sequence[Any] = _STATE["items"]  # type: ignore[assignment]
    return index, fn(items[index])


def map_forked(fn: Callable[[Any], R], items: Sequence[Any], *, jobs: int) -> list[R]:
    """``[fn(x) for x in items]`` over forked worker processes, in item order.

    For independent, deterministic work (each item seeded by itself, e.g. a
    round-trip family): the result does not depend on `jobs`. Items a dead
    worker left undone run in this process.
    """
    done: dict[int, R] = {}
    if jobs > 1 and len(items) > 1 and fork_available():
        _STATE.update(fn=fn, items=list(items))
        with _forked_pool(jobs) as pool:
            for f in [pool.submit(_call, i) for i in range(len(items))]:
                try:
                    i, got = f.result()
                except BrokenProcessPool:
                    continue
                done[i] = got
    return [done[i] if i in done else fn(x) for i, x in enumerate(items)]

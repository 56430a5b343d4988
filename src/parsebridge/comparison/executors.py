"""Executors: where the per-transcript comparisons run.

``local`` (the default) runs in this process (``jobs=1``) or in a pool of
forked worker processes (``jobs>1``); ``ray`` runs them in Ray actors on a
local runtime or an existing cluster (`ray_executor`, imported only when
asked for). Every executor takes a lazy stream of transcripts, sends it in
blocks of `BATCH` with at most ``workers × INFLIGHT`` blocks in flight (so
the driver never holds the log) and yields a `TranscriptComparison` per
transcript, built by the same `Comparer`: the records and the summary are
the same whichever executor ran them (a worker's records cross back as JSON lines).
A local pool's Ctrl-C is the parent's, as for conformance's (`lifecycle.pool`): workers ignore
it, the parent cancels and terminates them, and the command says how far it got.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from itertools import islice

from ..adapters import parser_names
from ..conformance.transcripts import Transcript
from ..lifecycle.pool import fork_available, worker_pool
from ..protocol import ParsebridgeError
from . import ray_executor
from .batches import BATCH, INFLIGHT, batched, received, sent
from .comparer import Comparer
from .models import TranscriptComparison
from .plan import ComparePlan

#: The executors `run_comparisons` knows.
EXECUTORS = ("local", "ray")

_WORKER: Comparer | None = None


def _init_worker(plan: ComparePlan) -> None:
    global _WORKER
    _WORKER = Comparer(plan)


def _work(batch: list[Transcript]) -> list[str]:
    assert _WORKER is not None
    return sent(_WORKER.compare(t) for t in batch)


def _warm(plan: ComparePlan) -> None:
    """Import each framework's parser registry in the parent, so forked workers share one import
    (vLLM/SGLang take seconds of CPU each) instead of paying it once per worker."""

    backends = {t.backend for t in plan.targets} | set(plan.backends)
    for b in sorted(backends - {"builtin", "python"}):
        try:
            parser_names(b, "tool")
        except Exception:  # unavailable here: the workers will report it per transcript
            continue


def run_comparisons(
    transcripts: Iterable[Transcript],
    plan: ComparePlan,
    *,
    jobs: int = 1,
    ordered: bool = True,
    batch: int = BATCH,
    executor: str = "local",
    address: str | None = None,
    quiet: bool = True,
) -> Iterator[TranscriptComparison]:
    """The comparison of each transcript; in input order unless `ordered` is False.

    ``executor="local"``: ``jobs == 1`` runs in this process, otherwise a
    process pool of `jobs` workers (0: one per CPU). ``executor="ray"``:
    `jobs` Ray actors (0: one per CPU of the cluster) on the cluster at
    `address`, or on a local runtime started for the run. Either way input
    is read only as fast as results are consumed, so memory stays flat
    however long the log is. A wrong executor, or Ray missing, raises here,
    before any input is read.
    """
    if executor == "ray":
        ray_executor.require_ray()
        return ray_executor.run(
            transcripts, plan, workers=jobs, ordered=ordered, batch=batch, address=address, quiet=quiet
        )
    if executor != "local":
        raise ParsebridgeError(f"unknown executor {executor!r}; executors: {', '.join(EXECUTORS)}")
    if address:
        raise ParsebridgeError("an address is for the ray executor (executor='ray')")
    return _run_local(transcripts, plan, jobs=jobs, ordered=ordered, batch=batch)


def _run_local(
    transcripts: Iterable[Transcript], plan: ComparePlan, *, jobs: int, ordered: bool, batch: int
) -> Iterator[TranscriptComparison]:
    """This process (``jobs == 1``) or a pool of forked processes with bounded batches in flight."""
    jobs = (os.cpu_count() or 1) if jobs <= 0 else jobs
    if jobs == 1:
        comparer = Comparer(plan)
        for t in transcripts:
            yield comparer.compare(t)
        return
    _warm(plan)
    batches = batched(transcripts, batch)
    # fork: workers inherit imported frameworks (vLLM/torch take ~8 s to import) and the spec caches.
    method = "fork" if fork_available() else "spawn"
    with worker_pool(jobs, initializer=_init_worker, initargs=(plan,), start_method=method) as ex:
        pending: deque[Future[list[str]]] = deque(
            ex.submit(_work, b) for b in islice(batches, jobs * INFLIGHT)
        )
        while pending:
            if ordered:
                done = [pending.popleft()]
            else:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                done = [f for f in pending if f in finished]
                for f in done:
                    pending.remove(f)
            for fut in done:
                nxt = next(batches, None)
                if nxt is not None:
                    pending.append(ex.submit(_work, nxt))
                yield from received(fut.result())

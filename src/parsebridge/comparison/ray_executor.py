"""The Ray executor: the same comparisons in Ray actors, on a local runtime or an existing cluster.

Why Ray: it is the serving ecosystem's distributed engine (vLLM's multi-node
executor runs on it), so a provider that has a cluster has a Ray cluster.

How: one actor per worker, each building one `Comparer` (its parsers, and
the frameworks they import, load once per actor, in the worker). The driver
reads the log lazily and sends blocks of `BATCH` transcripts with at most
``workers × INFLIGHT`` blocks in flight, each to the least-loaded actor;
results come back as the same ``(JSON line, Compact)`` pairs the local
executor yields, so the records and the summary are identical (only the
order may differ, with ``ordered=False``). The driver never holds the log,
only the blocks in flight.

Without an address a local runtime starts, kept small: `LOCAL_CPUS` CPUs
(or the workers asked for), a `LOCAL_OBJECT_STORE` object store, no
dashboard; it is shut down at the end. With an address (``ray start --head``
prints it; ``auto`` finds a running one) the driver connects, and the
cluster's nodes need parsebridge (and any framework compared) installed.

Ray is imported only here, and this module only when ``executor="ray"``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from types import ModuleType
from typing import Any

from ..conformance.transcripts import Transcript
from ..protocol import ParsebridgeError
from .batches import BATCH, INFLIGHT, batched, received, sent
from .comparer import Comparer
from .models import TranscriptComparison
from .plan import ComparePlan

#: A local runtime uses at most this many CPUs unless more workers are asked for.
LOCAL_CPUS = 2
#: Object store of a local runtime: blocks and results are small, Ray's minimum is enough.
LOCAL_OBJECT_STORE = 100 * 1024 * 1024
#: parsebridge is installed from its clone (no registry): the extra is `.[ray]` there, or Ray itself.
INSTALL_HINT = "pip install '.[ray]' in the parsebridge clone, or pip install 'ray>=2.40,<3'"


class RayUnavailableError(ParsebridgeError, ImportError):
    """``executor="ray"`` without Ray installed."""


class RayExecutorError(ParsebridgeError):
    """The Ray runtime could not start, the cluster could not be reached, or a worker died."""


def require_ray() -> ModuleType:
    """The `ray` module, or a `RayUnavailableError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailableError(
            f"the ray executor needs Ray, which is not installed: {INSTALL_HINT}"
        ) from exc
    return ray


class ComparerActor:
    """One Ray worker: a `Comparer` built once, fed blocks of transcripts."""

    def __init__(self, plan: ComparePlan, quiet: bool = True) -> None:
        if quiet:  # frameworks log a traceback per unreadable output; compare reports those itself
            os.environ.setdefault("VLLM_LOGGING_LEVEL", "CRITICAL")
            for name in ("vllm", "sglang"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        self.comparer = Comparer(plan)

    def work(self, block: list[Transcript]) -> list[str]:
        return sent(self.comparer.compare(t) for t in block)

    def ping(self) -> int:
        return os.getpid()


def _connect(ray: ModuleType, address: str | None, workers: int, quiet: bool) -> bool:
    """Start or join a runtime; True when this call started it (so `run` shuts it down)."""
    if ray.is_initialized():
        return False
    common: dict[str, Any] = {
        "logging_level": logging.ERROR,  # no start-up banners or notices over the progress bar
        "log_to_driver": not quiet,
        "configure_logging": True,
    }
    env = {k: v for k, v in os.environ.items() if k.startswith(("PARSEBRIDGE_", "VLLM_LOGGING"))}
    if env:
        common["runtime_env"] = {"env_vars": env}
    try:
        if address:
            ray.init(address=address, **common)
        else:
            ray.init(  # "local": a new runtime of our own, even beside a running one
                address="local",
                num_cpus=max(workers, min(LOCAL_CPUS, os.cpu_count() or 1)),
                object_store_memory=LOCAL_OBJECT_STORE,
                include_dashboard=False,
                **common,
            )
    except Exception as exc:  # ConnectionError, a bad address, no room for the object store…
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        hint = ""
        if address and address != "auto" and os.environ.get("RAY_AUTH_MODE") is None:
            hint = (
                " (a cluster that checks tokens needs RAY_AUTH_MODE=token and its token for an explicit"
                " address; on the head node, --address auto)"
            )
        raise RayExecutorError(f"could not start or reach {where}: {exc}{hint}") from exc
    return True


def cluster_cpus(ray: ModuleType) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def run(
    transcripts: Iterable[Transcript],
    plan: ComparePlan,
    *,
    workers: int = 0,
    ordered: bool = True,
    batch: int = BATCH,
    address: str | None = None,
    quiet: bool = True,
) -> Iterator[TranscriptComparison]:
    """The comparison of each transcript, computed by `workers` Ray actors.

    ``workers <= 0``: one per CPU of the cluster (of the local runtime: `LOCAL_CPUS`).
    """
    ray = require_ray()
    started = _connect(ray, address, workers, quiet)
    actors: list[Any] = []
    try:
        n = workers if workers > 0 else cluster_cpus(ray)
        remote = ray.remote(num_cpus=1, max_restarts=0)(ComparerActor)
        actors = [remote.remote(plan, quiet) for _ in range(n)]
        yield from _drive(ray, actors, batched(transcripts, batch), ordered)
    finally:
        for a in actors:
            with contextlib.suppress(Exception):  # already gone: nothing to release
                ray.kill(a)
        if started:
            ray.shutdown()


def _drive(
    ray: ModuleType, actors: list[Any], blocks: Iterator[list[Transcript]], ordered: bool
) -> Iterator[TranscriptComparison]:
    """Keep every actor busy with at most `INFLIGHT` blocks each; yield results as they are taken."""
    load = [0] * len(actors)
    owner: dict[Any, int] = {}
    pending: deque[Any] = deque()

    def submit(block: list[Transcript]) -> None:
        i = min(range(len(actors)), key=load.__getitem__)
        ref = actors[i].work.remote(block)
        load[i] += 1
        owner[ref] = i
        pending.append(ref)

    for block in islice(blocks, len(actors) * INFLIGHT):
        submit(block)
    while pending:
        if ordered:
            ref = pending.popleft()
        else:
            ready, _ = ray.wait(list(pending), num_returns=1)
            ref = ready[0]
            pending.remove(ref)
        try:
            done: list[str] = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise RayExecutorError(f"a Ray worker failed: {exc}") from exc
        load[owner.pop(ref)] -= 1
        nxt = next(blocks, None)
        if nxt is not None:
            submit(nxt)
        yield from received(done)

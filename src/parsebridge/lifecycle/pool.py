"""Worker pools whose Ctrl-C is the parent's: conformance's units and compare's batches run in one.

Ctrl-C goes to the whole process group. A worker that took it would report it as one unit's
error and go on with the next (starting its servers), so workers ignore SIGINT; the parent,
interrupted, cancels what has not started and terminates the workers (`stop_pool`), and each
worker, on SIGTERM, stops the servers it started (`stop_all`) before it ends; what it ran under
the parent-death pipe (smg's gateways) ends with it. The caller says how far it got and exits 130.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .owners import stop_all


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _worker_init(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """In each worker: Ctrl-C is the parent's; SIGTERM (the parent stopping the pool) stops this
    worker's servers, then ends it at once. Then the pool's own `initializer`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_and_exit)
    if initializer is not None:
        initializer(*initargs)


def _stop_and_exit(signum: int, frame: Any) -> None:
    # In a thread: the interrupted main thread may hold a lock the stop needs (a gateway starting);
    # whatever does not stop in time ends with this process (smg's gateways: the parent-death pipe).
    stopper = threading.Thread(target=stop_all, daemon=True)
    stopper.start()
    stopper.join(5)
    os._exit(128 + signum)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Interrupted: drop the work not started and end the workers now (not after their batches).

    Then wait for the pool's manager thread to finish closing the pool's wakeup pipe. The
    `shutdown(wait=False)` here forgets that thread, so the caller's later `shutdown(wait=True)`
    no longer joins it; and CPython's exit hook for such pools (3.11) writes to that pipe without
    the pool's lock, so a thread still closing it made Ctrl-C end in "Bad file descriptor" and
    exit 1, now and then. (`_executor_manager_thread` is CPython's; without it, no wait.)
    """
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for child in multiprocessing.active_children():
        child.terminate()
    for child in multiprocessing.active_children():
        child.join(10)
    if isinstance(manager, threading.Thread):
        manager.join(10)


def _start_workers(pool: ProcessPoolExecutor) -> None:
    """Start the workers now, with Ctrl-C noted instead of raised while they fork, then raised here.

    A fork runs Python's at-fork hooks (logging's, the pool's); a KeyboardInterrupt raised inside
    one can only be printed ("Exception ignored in: <function _releaseLock>"), so Ctrl-C at that
    moment was lost and the run went on to its end, exit 0 (found with ``timeout -s INT 3``).
    The first work item starts every worker of a forking pool (a no-op here). From a thread other
    than the main one, or under a handler other than Python's own, nothing is changed."""
    caught: list[int] = []
    ours = threading.current_thread() is threading.main_thread()
    ours = ours and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        pool.submit(os.getpid)
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt


@contextlib.contextmanager
def worker_pool(
    jobs: int,
    *,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    start_method: str = "fork",
) -> Iterator[ProcessPoolExecutor]:
    """A pool of `jobs` workers (forked unless told otherwise: they inherit imported frameworks).

    Ctrl-C in the block stops the pool at once (`stop_pool`) and goes on up; a block left early
    otherwise (an error, a consumer that stopped reading) cancels what has not started.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    pool = ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context(start_method),
        initializer=_worker_init,
        initargs=(initializer, initargs),
    )
    try:
        _start_workers(pool)
        yield pool
    except KeyboardInterrupt:
        stop_pool(pool)
        raise
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)

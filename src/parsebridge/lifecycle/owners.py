"""The one place that stops what this process started, when it ends.

`own(thing)` keeps a weak reference to anything with a ``stop()`` (every
`Server` registers itself when it starts; the smg runtime registers its
scripted worker); `stop_all` stops each, newest first. It runs at three moments
(what the first stopped, the others find stopped):

* before the interpreter joins its thread pools (`threading`'s exit hooks:
  a server still sending requests to a pool in this process, such as smg's
  gateways to the scripted gRPC worker, would otherwise keep a pool thread
  waiting and the exit with it);
* at `atexit`, where that hook is not available;
* in a `multiprocessing` child (a process pool's worker), through its
  finalizers, which run where `atexit` does not (the child ends with
  `os._exit`).

The hooks are registered at the first `own` of each process, never at import.
A forked child (a process pool's worker) starts with nothing owned: what the
parent started is the parent's to stop, and its threads are not in the child
(stopping smg's inherited gRPC worker there waits forever for them).
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - its exit hook must be registered before ours (see `own`)
import contextlib
import multiprocessing
import multiprocessing.util
import os
import threading
import weakref
from typing import Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


_owned: weakref.WeakValueDictionary[int, Stoppable] = weakref.WeakValueDictionary()
_lock = threading.RLock()
_hooked: set[int] = set()  # the processes that registered the exit hooks (a fork inherits the set)
_fork_hook: list[bool] = []  # whether `_forget_the_parents` is registered (once: fork inherits it)


def _forget_the_parents() -> None:
    """In a forked child: own nothing the parent owned (a new lock too: the parent's may be held)."""
    global _owned, _lock
    _lock = threading.RLock()
    _owned = weakref.WeakValueDictionary()


def own(thing: Stoppable) -> None:
    """Stop `thing` when this process ends (unless it is collected or `disown`ed first)."""
    with _lock:
        _owned[id(thing)] = thing
        if not _fork_hook:
            _fork_hook.append(True)
            os.register_at_fork(after_in_child=_forget_the_parents)
        pid = os.getpid()
        if pid in _hooked:
            return
        _hooked.add(pid)
    # CPython's hook that runs before the thread pools are joined (no public equivalent exists);
    # hooks run last-registered first, and concurrent.futures registered its own at import (above).
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        with contextlib.suppress(RuntimeError):  # already shutting down
            register(stop_all)
    atexit.register(stop_all)
    if multiprocessing.parent_process() is not None:
        multiprocessing.util.Finalize(None, stop_all, exitpriority=100)


def disown(thing: Stoppable) -> None:
    """`thing` was stopped by its user: nothing to do for it at exit."""
    with _lock:
        if _owned.get(id(thing)) is thing:
            del _owned[id(thing)]


def stop_all() -> None:
    """Stop everything this process owns, newest first (best effort, silent; a stop is idempotent)."""
    with _lock:
        things = list(_owned.values())
    for thing in reversed(things):
        with contextlib.suppress(Exception):  # at exit: never a traceback
            thing.stop()

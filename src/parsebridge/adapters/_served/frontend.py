"""One server per process: started on first use, restarted once, closed at exit, fork-aware.

`ServedFrontend` runs an asyncio loop in a daemon thread and starts the
server on it (`_start`, a subclass coroutine). `ensure()` is the only entry
callers need: it starts the server the first time (a readiness wait bounded
by `start_timeout`), retries a failed start once on a new port, and then
raises `ServerUnavailableError` with the reason. After a fork, the child's
copy knows it is not the parent (`os.register_at_fork`): the parent's thread
and server do not exist there, so `ensure()` in the child starts its own, or
refuses with the typed error when the subclass sets ``fork_policy =
"refuse"`` (a framework that cannot run twice in one process image).
`close()` stops the server, joins the thread, and removes `cleanup_paths`; it
runs at exit, also in a `multiprocessing` worker (which skips `atexit`).
"""

from __future__ import annotations

import abc
import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import shutil
import socket
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from ...protocol.errors import ServerUnavailableError
from .steps import ScriptBoard

T = TypeVar("T")

_live: weakref.WeakSet[ServedFrontend] = weakref.WeakSet()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.01) -> None:
    """Poll `check` until true; TimeoutError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # not up yet (connection refused, a 404 before registration...)
            last = exc
        time.sleep(interval)
        interval = min(interval * 1.5, 0.2)
    detail = f" (last error: {type(last).__name__}: {last})" if last is not None else ""
    raise TimeoutError(f"{what} not ready after {timeout:g} s{detail}")


def _after_fork_in_child() -> None:
    for frontend in list(_live):
        frontend._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class ServedFrontend(abc.ABC):
    """A framework server in this process (see module doc); subclass per framework."""

    #: The parsebridge backend name (for errors).
    backend: ClassVar[str]
    #: Seconds a start may take before it counts as failed.
    start_timeout: ClassVar[float] = 30.0
    #: What a forked child does: start its own server, or refuse with `ServerUnavailableError`.
    fork_policy: ClassVar[Literal["restart", "refuse"]] = "restart"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.board = ScriptBoard(self.backend)
        self.port: int | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self._inherited_from: int | None = None
        self._failures: list[str] = []
        #: Files and folders the start wrote that `close` removes.
        self.cleanup_paths: list[Path] = []
        self.started_at: float | None = None
        self.start_seconds: float | None = None
        _live.add(self)

    # ------------------------------------------------------------------ subclass hooks

    @abc.abstractmethod
    async def _start(self, port: int) -> None:
        """Start the server on `port` (in the frontend's loop); return once it is starting."""

    @abc.abstractmethod
    async def _stop(self) -> None:
        """Stop the server (in the frontend's loop)."""

    @abc.abstractmethod
    def _is_ready(self) -> bool:
        """Whether the server answers (called from the caller's thread while starting)."""

    def _reset(self) -> None:  # noqa: B027 - optional hook
        """Forget per-server state (registered configurations...) before a new start."""

    # ------------------------------------------------------------------ life cycle

    @property
    def running(self) -> bool:
        return self.port is not None and self._pid == os.getpid()

    def ensure(self) -> int:
        """The running server's port; starts it on first use (see module doc)."""
        port = self.port
        if port is not None and self._pid == os.getpid():
            return port
        with self._lock:
            if self._pid != os.getpid():
                self._forked()
            if self.port is not None:
                return self.port
            if self._inherited_from is not None and self.fork_policy == "refuse":
                raise ServerUnavailableError(
                    self.backend,
                    f"this process was forked from process {self._inherited_from}, which had the "
                    "server running; the framework cannot start a second one in a forked copy "
                    "(use the 'spawn' start method, or let the child be the first to use it)",
                )
            for attempt in (1, 2):
                try:
                    return self._start_once()
                except ServerUnavailableError:
                    raise
                except Exception as exc:
                    self._failures.append(f"attempt {attempt}: {type(exc).__name__}: {exc}")
                    self._shutdown()
            raise ServerUnavailableError(self.backend, "could not start: " + "; ".join(self._failures[-2:]))

    def _start_once(self) -> int:
        began = time.perf_counter()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=loop.run_forever, name=f"parsebridge-{self.backend}-frontend", daemon=True
        )
        thread.start()
        self.loop, self._thread = loop, thread
        self.board.bind(loop)
        port = free_port()
        self.run(self._start(port), self.start_timeout)
        self.port = port
        try:
            wait_until(self._is_ready, self.start_timeout, f"{self.backend} server on port {port}")
        except BaseException:
            self.port = None
            raise
        _close_at_exit()
        self.started_at = time.time()
        self.start_seconds = time.perf_counter() - began
        return port

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the frontend's loop from another thread and wait for its result."""
        loop = self.loop
        if loop is None or loop.is_closed():
            coro.close()
            raise ServerUnavailableError(self.backend, "the server's event loop is not running")
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"{self.backend} frontend call did not finish in {timeout} s") from None

    def close(self) -> None:
        """Stop the server and its thread; remove what the start wrote. Safe to call twice."""
        with self._lock:
            if self._pid != os.getpid():
                self._forked()
                return
            self._shutdown()

    def _shutdown(self) -> None:
        loop, thread = self.loop, self._thread
        self.board.cancel_all()
        if loop is not None and not loop.is_closed() and thread is not None and thread.is_alive():
            with contextlib.suppress(Exception):  # a server that fails to stop still loses its thread
                self.run(self._stop(), 10.0)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10.0)
        if loop is not None and not loop.is_closed() and (thread is None or not thread.is_alive()):
            loop.close()
        self.loop, self._thread, self.port = None, None, None
        self._reset()
        for path in self.cleanup_paths:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        self.cleanup_paths.clear()

    def _forked(self) -> None:
        """In a forked child: the parent's thread, loop and server are not ours."""
        if self._pid == os.getpid():
            return
        if self.port is not None:
            self._inherited_from = self._pid
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self.loop, self._thread, self.port = None, None, None
        self.board = ScriptBoard(self.backend)
        self.cleanup_paths = []
        self._reset()


_registered_exit: list[int] = []  # the processes that registered `_close_all` (atexit survives a fork)


def _close_at_exit() -> None:
    """Close every frontend when this process ends: `atexit`, and in a `multiprocessing` child
    (a process pool's worker), its finalizers, which run where `atexit` does not (the child ends
    with `os._exit`)."""
    pid = os.getpid()
    if pid in _registered_exit:
        return
    if not _registered_exit:
        atexit.register(_close_all)
    _registered_exit.append(pid)
    import multiprocessing
    import multiprocessing.util

    if multiprocessing.parent_process() is not None:
        multiprocessing.util.Finalize(None, _close_all, exitpriority=10)


def _close_all() -> None:
    for frontend in list(_live):
        with contextlib.suppress(Exception):  # at exit: best effort, never a traceback
            frontend.close()

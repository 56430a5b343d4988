"""A framework server in a thread of this process: started on first use, restarted once, fork-aware.

`ServedFrontend` is a `lifecycle.Server` with a `ThreadLauncher` (an asyncio
loop in a daemon thread) that starts the server with the subclass's
coroutine (`_start`). `ensure()` is the only entry callers need: it starts
the server the first time (readiness: `_is_ready`, polled until
`start_timeout`), retries a failed start once on a new port, and then raises
`ServerUnavailableError` with the reason. After a fork, the child's copy
knows it is not the parent: the parent's thread and server do not exist
there, so `ensure()` in the child starts its own, or refuses with the typed
error when the subclass sets ``fork_policy = "refuse"`` (a framework that
cannot run twice in one process image). `close()` stops the server, joins
the thread, and removes `cleanup_paths`; the process's owner of servers
(`lifecycle.owners`) closes it at exit, also in a `multiprocessing` worker.
"""

from __future__ import annotations

import abc
import os
import threading
import weakref
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from ...lifecycle import PollUntil, Server, ThreadLauncher
from ...protocol.errors import ServerUnavailableError
from .steps import ScriptBoard

T = TypeVar("T")

_live: weakref.WeakSet[ServedFrontend] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for frontend in list(_live):
        frontend._forked()


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
        self.launcher = ThreadLauncher(
            f"{self.backend}-frontend", self._start, self._stopped, self.start_timeout
        )
        self.server = Server(
            self.backend,
            "frontend",
            self.launcher,
            PollUntil(lambda _: self._is_ready()),
            start_timeout=self.start_timeout,
            attempts=2,
        )
        self._pid = os.getpid()
        self._inherited_from: int | None = None
        #: The parsers (their engines) that use this server: the last to `release` it stops it.
        self._users: weakref.WeakSet[Any] = weakref.WeakSet()
        #: How many times `close` began: what was registered or opened under an older count went
        #: with a server that stopped (a request failing then failed for that, not by its parser).
        self.stops = 0
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

    async def _stopped(self) -> None:
        self.board.cancel_all()
        await self._stop()

    # ------------------------------------------------------------------ life cycle

    @property
    def port(self) -> int | None:
        return self.server.port if self.running else None

    @property
    def loop(self) -> Any:
        return self.launcher.loop

    @property
    def cleanup_paths(self) -> list[Path]:
        """Files and folders the start wrote that `close` removes."""
        return self.server.cleanup_paths

    @property
    def start_seconds(self) -> float | None:
        return self.server.start_seconds

    @property
    def running(self) -> bool:
        return self._pid == os.getpid() and self.server.port is not None and self.server.is_alive()

    def ensure(self) -> int:
        """The running server's port; starts it on first use (see module doc). Another thread's
        call while it starts waits for the start (the lock), not only for a port to be picked."""
        port = self.server.ready_port
        if port is not None and self._pid == os.getpid():
            return port
        with self._lock:
            if self.running:
                return self.server.port  # type: ignore[return-value]
            if self._inherited_from is not None and self.fork_policy == "refuse":
                raise ServerUnavailableError(
                    self.backend,
                    f"this process was forked from process {self._inherited_from}, which had the "
                    "server running; the framework cannot start a second one in a forked copy "
                    "(use the 'spawn' start method, or let the child be the first to use it)",
                )
            self._reset()
            self.server.start()
            return self.server.port  # type: ignore[return-value]

    def use(self, user: Any) -> int:
        """`ensure`, counting `user` among the server's users until it `release`s it (or is collected).
        Under the lock: another user's `release` may be stopping the server this moment, and a user
        counted only after its emptiness check would be handed the port of a server about to stop."""
        with self._lock:
            self._users.add(user)
            return self.ensure()

    def release(self, user: Any) -> None:
        """`user` is done: the server stops when no other user is left (it starts again on the next use)."""
        with self._lock:
            self._users.discard(user)
            if not self._users:
                self.close()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the frontend's loop from another thread and wait for its result."""
        try:
            return self.launcher.run(coro, timeout)
        except RuntimeError as exc:
            if self.launcher.loop is None:
                raise ServerUnavailableError(self.backend, str(exc)) from None
            raise

    def close(self) -> None:
        """Stop the server and its thread; remove what the start wrote. Safe to call twice."""
        with self._lock:
            self.stops += 1  # first: a request this stop breaks sees it when it fails
            self.server.stop()
            self.board.cancel_all()
            self._reset()

    def _forked(self) -> None:
        """In a forked child: the parent's thread, loop and server are not ours."""
        if self._pid == os.getpid():
            return
        if self.server.port is not None:
            self._inherited_from = self._pid
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self.server.stop()  # forgets the parent's (`Server.stop` in a process that did not launch it)
        self.board = ScriptBoard(self.backend)
        self._reset()

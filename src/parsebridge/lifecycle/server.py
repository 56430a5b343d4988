"""`Server`: one owner of a server's life, in the vocabulary of jupyter_client and testcontainers.

``start`` (launch on a free port, then wait until ready through a readiness
strategy), ``is_alive``, ``restart`` (the same launch arguments, a new port),
``stop`` (ask, wait, terminate, wait, kill, then ``cleanup``), and ``with``.
How the server runs is its launcher's business (`launchers`: a thread of
this process, or a subprocess); when it counts as ready is the strategy's
(`PollUntil`, `HttpAnswer`). A start that fails or times out stops what it
launched and raises `ServerUnavailableError` with the server's log tail; a
start may be tried again on a new port (``attempts``).

Every started server is stopped when this process ends (`owners`): nothing
is left behind, and a forked child never stops or reuses its parent's
server (`is_alive` is False there; `stop` only forgets it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from ..protocol.errors import ParsebridgeError, ServerUnavailableError
from . import owners


def free_port(avoid: Collection[int] = ()) -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS's pick), none of `avoid`: a server
    that needs two ports gets two (the OS may hand out a port it just handed out, once closed)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in avoid:
            return port


class Launcher(Protocol):
    """How a server runs (`launchers.ThreadLauncher`, `launchers.SubprocessLauncher`)."""

    #: Whether `launch` needs a port (a server that listens on one).
    needs_port: bool

    def launch(self, port: int | None) -> None:
        """Start the server (on `port`); return once it is starting."""

    def is_alive(self) -> bool: ...

    def ask(self) -> None:
        """Ask the server to stop (its own way of stopping)."""

    def terminate(self) -> None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float) -> bool:
        """Whether the server ended within `timeout` seconds."""

    def log_tail(self, limit: int) -> str:
        """The end of what the server wrote (for errors)."""

    def cleanup(self) -> None:
        """Release what the launch held (pipes, loops), once the server has ended."""

    def forget(self) -> None:
        """Drop the references to a server this process does not own (a forked child's copy)."""


class Readiness(Protocol):
    """A readiness strategy: `check` is polled until it is true or the start times out.

    An exception is "not yet", except a parsebridge error, which ends the start (the server is
    stopped and the error raised as it is). A strategy whose `check` waits by itself (on a pipe)
    may set ``interval = 0``: no sleep between checks.
    """

    def check(self, server: Server) -> bool: ...


class PollUntil:
    """Ready once `check(server)` is true (an exception counts as not yet)."""

    def __init__(self, check: Callable[[Server], bool]) -> None:
        self._check = check

    def check(self, server: Server) -> bool:
        return self._check(server)


class HttpAnswer:
    """Ready once ``METHOD path`` (with `body` as JSON, if given) on the server's port answers 2xx."""

    def __init__(self, path: str, body: Any = None, method: str | None = None, timeout: float = 5.0) -> None:
        self.path, self.timeout = path, timeout
        self.body = None if body is None else json.dumps(body).encode("utf-8")
        self.method = method or ("GET" if body is None else "POST")

    def check(self, server: Server) -> bool:
        # http.client only once a server is waited for by HTTP: every parser's guard imports this
        # module (the budget worker), and few ever start a server.
        import http.client

        assert server.port is not None
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=self.timeout)
        try:
            headers = {"content-type": "application/json"} if self.body is not None else {}
            conn.request(self.method, self.path, body=self.body, headers=headers)
            return 200 <= conn.getresponse().status < 300
        finally:
            conn.close()


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


class Server:
    """One server this process owns (see module doc). `backend` and `name` go into its errors."""

    #: Seconds `stop` waits after asking, then after terminating, then after killing.
    stop_waits: tuple[float, float, float] = (2.0, 2.0, 10.0)
    #: Seconds `stop(now=True)` waits after asking before it kills (a stuck server cannot act on it).
    now_ask_wait = 0.2

    def __init__(
        self,
        backend: str,
        name: str,
        launcher: Launcher,
        ready: Readiness,
        *,
        start_timeout: float = 30.0,
        attempts: int = 1,
        cleanup_paths: Iterable[Path] = (),
    ) -> None:
        self.backend, self.name = backend, name
        self.launcher, self.ready = launcher, ready
        self.start_timeout, self.attempts = start_timeout, attempts
        #: Files and folders the server wrote that `cleanup` removes.
        self.cleanup_paths: list[Path] = list(cleanup_paths)
        self.port: int | None = None
        self._up = False  # answered ready since the last launch (`ready_port`)
        self.restarts = 0
        self.start_seconds: float | None = None
        self._lock = threading.RLock()
        self._pid: int | None = None  # the process that launched it (None: not launched)

    # ------------------------------------------------------------------ life cycle

    def start(self) -> Server:
        """Launch and wait until ready (retried on a new port up to `attempts` times); returns self."""
        with self._lock:
            if self.is_alive():
                return self
            failures: list[str] = []
            for attempt in range(1, max(1, self.attempts) + 1):
                try:
                    self._start_once()
                    return self
                except ServerUnavailableError as exc:
                    if self.attempts <= 1:
                        raise
                    failures.append(f"attempt {attempt}: {exc.reason}")
            raise ServerUnavailableError(self.backend, "could not start: " + "; ".join(failures[-2:]))

    def _start_once(self) -> None:
        began = time.perf_counter()
        port = free_port() if self.launcher.needs_port else None
        self._pid, self.port, self._up = os.getpid(), port, False
        owners.own(self)
        try:
            self.launcher.launch(port)
            self.wait_ready()
        except ParsebridgeError:
            self.stop()
            raise
        except Exception as exc:
            tail = self.log_tail()
            self.stop()
            raise self.error(f"{type(exc).__name__}: {exc}", tail) from exc
        self.start_seconds = time.perf_counter() - began
        self._up = True

    @property
    def ready_port(self) -> int | None:
        """The port once the server has answered ready; None while it starts or after it stopped.
        `port` is set before the launch (the readiness check needs it), so a caller that does not
        hold the starter's lock must read this one: a server still starting has no loop or routes."""
        return self.port if self._up else None

    def wait_ready(self, timeout: float | None = None) -> None:
        """Poll the readiness strategy until it says ready; a server that ends meanwhile, or a
        timeout, is a `ServerUnavailableError` carrying the log tail (the server is then stopped)."""
        timeout = self.start_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        interval, last = getattr(self.ready, "interval", 0.01), ""
        while True:
            try:  # before the liveness test: a server that said why and ended is read first
                if self.ready.check(self):
                    return
            except ParsebridgeError:
                self.stop()
                raise
            except Exception as exc:  # not up yet (connection refused...)
                last = f" (last: {type(exc).__name__}: {exc})"
            if not self.launcher.is_alive():
                tail = self.log_tail()
                self.stop()
                raise self.error("it ended while starting", tail)
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise self.error(f"not ready after {timeout:g} s{last}", tail)
            time.sleep(interval)
            interval = min(interval * 1.5, 0.2)

    def error(self, what: str, tail: str | None = None) -> ServerUnavailableError:
        """The typed error for this server: `what` went wrong, then the server's log tail."""
        tail = self.log_tail() if tail is None else tail
        return ServerUnavailableError(self.backend, f"{self.name}: {what}" + (f": {tail}" if tail else ""))

    def is_alive(self) -> bool:
        """Whether this process launched the server and it still runs."""
        return self._pid == os.getpid() and self.launcher.is_alive()

    def restart(self) -> Server:
        """Stop, then start again with the same launch arguments on a new port."""
        with self._lock:
            self.stop()
            self.restarts += 1
            return self.start()

    def stop(self, now: bool = False) -> None:
        """Ask the server to stop, wait; terminate, wait; kill, wait; then `cleanup`. Safe to repeat.
        `now`: kill at once after the ask (a server that is stuck, such as a worker past its time
        budget): the ask ends a command run under the parent-death watcher with its watcher."""
        with self._lock:
            if self._pid is None:
                return
            self._up = False  # a server being stopped is not ready: `ready_port` says so at once
            if self._pid != os.getpid():  # a forked child's copy: the parent's server, not ours
                self.launcher.forget()
                self._pid, self.port, self.cleanup_paths, self._up = None, None, [], False
                return
            ask_wait, term_wait, kill_wait = self.stop_waits
            launcher = self.launcher
            steps = [(launcher.ask, ask_wait), (launcher.terminate, term_wait), (launcher.kill, kill_wait)]
            if now:  # the ask still goes first (a watched command's watcher then ends it: no orphan)
                steps = [(launcher.ask, min(ask_wait, self.now_ask_wait)), steps[2]]
            for step, wait in steps:
                if not launcher.is_alive():
                    break
                step()
                if launcher.wait(wait):
                    break
            self.cleanup()

    def cleanup(self) -> None:
        """Release the launch's pipes and loops and remove `cleanup_paths` (called by `stop`)."""
        self._up = False
        self.launcher.cleanup()
        for path in self.cleanup_paths:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        self.cleanup_paths.clear()
        self._pid, self.port = None, None
        owners.disown(self)

    def log_tail(self, limit: int = 800) -> str:
        return self.launcher.log_tail(limit)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"port {self.port}" if self.is_alive() else "stopped"
        return f"<Server {self.backend} {self.name} {state}>"

"""How a `Server` runs: in a thread of this process, or as a subprocess.

`ThreadLauncher` runs an asyncio loop in a daemon thread and starts the
server there with a coroutine (Dynamo's frontend runs in-process): asking it
to stop runs the stop coroutine, terminating stops the loop; a thread cannot
be killed, so a loop that never stops is left to die with the process.

`SubprocessLauncher` runs a command line (smg's gateway, the time-budget
worker, llama.cpp's server). Its whole API is the constructor:

    SubprocessLauncher(command, env=None, capture=True, parent_death=True, pass_fds=(), on_ask=None,
                       needs_port=True, log_lines=200, log_filter=None, echo=False)

* ``command(port)`` gives the argument list (called at every launch, so a
  restart gets its new port);
* ``capture``: standard output and error go to a pipe whose last lines are
  the log tail of errors (read by a thread: the server never blocks on a
  full pipe, and no log file is written); else they are inherited;
* ``parent_death``: the server ends when this process is gone, however it
  went (exit, exception, SIGKILL, a crash): the command runs under
  `_watch`, which holds the read end of a pipe on its standard input whose
  only write end is here. A ``[sys.executable, "-m", MODULE, ...]`` command
  runs inside the watcher's own interpreter; any other command is the
  watcher's child, killed when the pipe closes;
* ``pass_fds``: descriptors the server inherits (a `multiprocessing` pipe);
* ``on_ask``: how to ask it to stop (default: close the parent-death pipe,
  which makes the watcher end it at once); then SIGTERM, then SIGKILL;
* ``needs_port``: a free port is picked for every launch (False: a server
  that listens on none, such as a worker on a pipe);
* ``log_lines``, ``log_filter``: how many output lines the tail keeps, and
  which (a line the filter refuses is not kept); ``echo``: copy the output to
  this process's standard error too (``--framework-logs``).

A future server (llama.cpp's ``llama-server``) is a `Server` with this
launcher, an `HttpAnswer` readiness (its ``/health``), and nothing else.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
#: ``python -P _watch.py COMMAND``: the parent-death watcher (a script: it imports nothing of ours).
WATCH = Path(__file__).with_name("_watch.py")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ThreadLauncher:
    """A server started by `start(port)` (a coroutine) on an asyncio loop in a daemon thread."""

    needs_port = True

    def __init__(
        self,
        name: str,
        start: Callable[[int], Coroutine[Any, Any, None]],
        stop: Callable[[], Coroutine[Any, Any, None]],
        start_timeout: float = 30.0,
    ) -> None:
        self.name = name
        self._start, self._stop = start, stop
        self.start_timeout = start_timeout
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def launch(self, port: int | None) -> None:
        # asyncio (with ssl, about a tenth of a second) only once a server runs on a thread (Dynamo's
        # frontend): the guard imports this module for the budget worker, so every parser would pay it.
        import asyncio

        assert port is not None
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"parsebridge-{self.name}", daemon=True)
        thread.start()
        self.loop, self._thread = loop, thread
        self.run(self._start(port), self.start_timeout)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop from another thread and wait for its result."""
        loop = self.loop
        if loop is None or loop.is_closed():
            coro.close()
            raise RuntimeError(f"{self.name}: the server's event loop is not running")
        import asyncio  # (imported by `launch`, which made the loop: a lookup here)

        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"{self.name}: a call did not finish in {timeout} s") from None

    def is_alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def ask(self) -> None:
        with contextlib.suppress(Exception):  # a server that fails to stop still loses its loop
            self.run(self._stop(), 10.0)
        self.terminate()

    def terminate(self) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)

    def kill(self) -> None:
        """A thread cannot be killed: a loop that would not stop is a daemon, gone at exit."""

    def wait(self, timeout: float) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.is_alive()

    def log_tail(self, limit: int) -> str:
        return ""  # in-process: what it logs is on this process's own standard error

    def cleanup(self) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed() and not self.is_alive():
            loop.close()
        self.loop, self._thread = None, None

    def forget(self) -> None:
        self.loop, self._thread = None, None


class SubprocessLauncher:
    """A server run as a command line (see module doc)."""

    def __init__(
        self,
        command: Callable[[int | None], Sequence[str]],
        *,
        env: Mapping[str, str] | None = None,
        capture: bool = True,
        parent_death: bool = True,
        pass_fds: Sequence[int] = (),
        on_ask: Callable[[], None] | None = None,
        needs_port: bool = True,
        log_lines: int = 200,
        log_filter: Callable[[str], bool] | None = None,
        echo: bool = False,
    ) -> None:
        self.command, self.env = command, env
        self.capture, self.parent_death = capture, parent_death
        self.pass_fds, self.on_ask = tuple(pass_fds), on_ask
        self.needs_port = needs_port
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: deque[str] = deque(maxlen=log_lines)
        self._keep = log_filter
        self.echo = echo
        self._drain: threading.Thread | None = None

    def argv(self, port: int | None) -> list[str]:
        """The command as run: under the parent-death watcher when `parent_death`."""
        argv = list(self.command(port))
        return [sys.executable, "-P", str(WATCH), *argv] if self.parent_death else argv

    def _child_env(self) -> dict[str, str] | None:
        """The server's environment. A captured Python server runs unbuffered: its output is the
        log tail an error carries, and a block-buffered pipe would hold it back until the server ends."""
        if not self.capture:
            return None if self.env is None else dict(self.env)
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def launch(self, port: int | None) -> None:
        self._log.clear()
        out = subprocess.PIPE if self.capture else None
        self.proc = subprocess.Popen(
            self.argv(port),
            # The parent-death pipe: this process holds the only write end.
            stdin=subprocess.PIPE if self.parent_death else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if self.capture else None,
            env=self._child_env(),
            pass_fds=self.pass_fds,
        )
        if self.capture:
            self._drain = threading.Thread(
                target=_drain,
                args=(self.proc.stdout, self._log, self._keep, self.echo),
                name="parsebridge-server-log",
                daemon=True,
            )
            self._drain.start()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ask(self) -> None:
        if self.on_ask is not None:
            self.on_ask()
        elif self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def terminate(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.proc.terminate()

    def kill(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.proc.kill()

    def wait(self, timeout: float) -> bool:
        if self.proc is None:
            return True
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def log_tail(self, limit: int) -> str:
        if not self.capture:
            return ""
        drain = self._drain
        if drain is not None and not self.is_alive():
            drain.join(2)  # the rest of an ended server's output
        return " | ".join(line for line in list(self._log) if line)[-limit:] or "(no output)"

    def cleanup(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            # Killed, but not yet reaped (seen on a machine at load 40): a daemon thread reaps it
            # when the kernel lets it go, so a stop never fails the call that stopped it.
            threading.Thread(target=proc.wait, name="parsebridge-reap", daemon=True).start()

    def forget(self) -> None:
        self.proc, self._drain = None, None


def _drain(pipe: IO[bytes] | None, into: deque[str], keep: Callable[[str], bool] | None, echo: bool) -> None:
    """Keep a server's output lines (its pipe must be read, or the server blocks on a full one);
    with `echo`, copy each to this process's standard error as well."""
    if pipe is None:
        return
    with pipe:
        for raw in pipe:
            if echo:
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.buffer.write(raw)
                    sys.stderr.flush()
            line = _ANSI.sub("", raw.decode("utf-8", "replace")).rstrip()
            if keep is None or keep(line):
                into.append(line)

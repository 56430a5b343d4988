"""smg gateway processes: one per parser pair, started on first parse, pooled, stopped at exit.

A `Runtime` per process holds the scripted worker (`_worker`) and a small
pool of gateways keyed by parser pair (`ParserPair`: reasoning, tool): the least
recently used is stopped when a new pair needs room. A gateway is a
`lifecycle.Server`: ``python -m smg launch`` on free 127.0.0.1 ports through a
`SubprocessLauncher`, reading the tokenizer folder `_served.model_folder`
keeps in parsebridge's cache; it is ready once it answers a chat request
(`HttpAnswer`). Its output goes to a pipe (the last lines kept for error
messages), never to a file. One that dies is started again once; a second
failure, or a gateway that cannot start, is a `ServerUnavailableError` with
its log tail; smg's refusal of a pair (a Symphony-only name paired with a
legacy one) is a `ParserUnsupportedError`. A gateway no parser uses any more
(each `close`d) is stopped; so is the worker, with the last gateway. At exit
(`lifecycle.owners`, also in a multiprocessing child) every gateway is stopped
and the worker too: no process or port is left. A process that dies without
cleaning up (SIGKILL, a crash) leaves no gateway either: the launcher's
parent-death pipe ends each one. A forked child of a process whose worker ran
refuses with `ServerUnavailableError` (gRPC aborts a server started after such
a fork); one forked before any use builds its own.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ...lifecycle import HttpAnswer, Server, SubprocessLauncher, free_port, own
from ...protocol.errors import ParserUnsupportedError, ServerUnavailableError
from .._common import framework_logs_wanted
from .._served import ModelFolder, model_folder
from .._served.parsers import ParserPair
from ._worker import ScriptedWorker

#: Gateways kept running at once (each ~60 MB); more pairs stop the least recently used.
POOL_SIZE = int(os.environ.get("PARSEBRIDGE_SMG_POOL", "4"))
#: Seconds a gateway may take to answer its first chat request.
START_TIMEOUT = float(os.environ.get("PARSEBRIDGE_SMG_START_TIMEOUT", "60"))
#: A gateway's key: its parser pair and the model folder it reads.
Key = tuple[ParserPair, Path]
#: smg's refusal of a parser configuration, in its start-up error.
_INVALID = re.compile(r"Invalid configuration: [^|]*")
#: The readiness probe: a chat request the worker answers without a script.
_PING = {"model": "parsebridge", "messages": [{"role": "user", "content": "ping"}]}


def gateway_error(label: str, reason: str) -> ServerUnavailableError:
    """The typed error for a gateway (pair `label`) that could not start or died twice."""
    return ServerUnavailableError("smg", f"gateway {label}: {reason}")


class Gateway:
    """One `python -m smg launch` process for one parser pair (a `lifecycle.Server`)."""

    def __init__(self, pair: ParserPair, worker_port: int, model_dir: Path, symphony: bool = False) -> None:
        self.pair = pair
        #: Requests open on it (guarded by the runtime's lock): the pool closes none while it has one.
        self.in_flight = 0
        #: Closed (its parsers released it, or the runtime shut down): never started again.
        self.closed = False
        #: ``--parser symphony``: smg reads some names (e.g. ``xlam``) only from its Symphony tables.
        self.symphony = symphony
        self.label = pair.label
        self._worker_port = worker_port
        self._model_dir = model_dir
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "RUST_LOG_STYLE": "never"}
        # WARN lines are smg's chatter about its own defaults: the log tail keeps what explains a failure.
        self.launcher = SubprocessLauncher(
            self.command, env=env, log_filter=lambda line: " WARN " not in line, echo=framework_logs_wanted()
        )
        self.server = Server(
            "smg",
            f"gateway {self.label}",
            self.launcher,
            HttpAnswer("/v1/chat/completions", _PING),
            start_timeout=START_TIMEOUT,
        )

    def command(self, port: int | None) -> list[str]:
        """smg's own command line (run under the launcher's parent-death watcher)."""
        reasoning, tool = self.pair
        args = [sys.executable, "-m", "smg", "launch", "--host", "127.0.0.1", "--port", str(port)]
        args += ["--worker-urls", f"grpc://127.0.0.1:{self._worker_port}"]
        args += ["--tokenizer-path", str(self._model_dir), "--model-path", str(self._model_dir)]
        metrics = free_port(avoid=(port or 0,))  # (smg refuses to start with one port for both)
        args += ["--prometheus-host", "127.0.0.1", "--prometheus-port", str(metrics)]
        args += ["--log-level", "info" if self.launcher.echo else "warn"]  # --framework-logs: smg's own
        if self.symphony:
            args += ["--parser", "symphony"]
        if tool:
            args += ["--tool-call-parser", tool]
        if reasoning:
            args += ["--reasoning-parser", reasoning]
        return args

    @property
    def port(self) -> int:
        return self.server.port or 0

    @property
    def proc(self) -> Any:
        return self.launcher.proc

    @property
    def restarts(self) -> int:
        return self.server.restarts

    @property
    def start_seconds(self) -> float:
        return self.server.start_seconds or 0.0

    def start(self) -> None:
        self.server.start()

    def alive(self) -> bool:
        return self.server.is_alive()

    def log_tail(self, limit: int = 800) -> str:
        return self.server.log_tail(limit)

    def restart(self) -> None:
        """Start a dead gateway again, once in its life; the second death is a `ServerUnavailableError`."""
        if self.restarts >= 1:
            raise gateway_error(self.label, f"the gateway died again after a restart: {self.log_tail()}")
        self.server.restart()

    def rss_kb(self) -> int | None:
        """Resident memory of the gateway process (Linux /proc), or None."""
        pid = self.launcher.pid
        if pid is None:
            return None
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None

    def close(self) -> None:
        self.closed = True
        self.server.stop()


class Runtime:
    """The worker, the model folder and the gateway pool of one process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._lock = threading.Lock()
        #: One token per byte, no marker tokens: no smg parser needs a marker as one token.
        self.folder = model_folder(())
        self.model_dir = self.folder.path
        self.worker = ScriptedWorker(self.folder)
        #: One worker per model folder: smg's gateway detokenizes with the tokenizer its worker
        #: names (`GetModelInfo`), so a real tokenizer's gateways get a worker of their own.
        self._workers: dict[Path, ScriptedWorker] = {self.model_dir: self.worker}
        #: Gateways by (parser pair, model folder): a real tokenizer's folder gets gateways of its own.
        self._pool: OrderedDict[Key, Gateway] = OrderedDict()
        #: Keys whose gateway could not start: the error, raised again without a new try.
        self._failed: dict[Key, ServerUnavailableError | ParserUnsupportedError] = {}
        self._symphony: set[Key] = set()
        #: The parsers (their engines) that use each key's gateway: the last to `release` stops it.
        self._users: dict[Key, weakref.WeakSet[Any]] = {}
        #: Gateway processes started (first starts, LRU re-starts and restarts after a death).
        self.starts = 0
        self._closed = False
        try:
            self.worker.start()
        except BaseException:
            self.worker.stop()
            raise

    def gateway(
        self, pair: ParserPair, user: Any = None, folder: ModelFolder | None = None, hold: bool = False
    ) -> Gateway:
        """The running gateway for `pair` reading `folder` (None: the approximate vocabulary),
        started (and the pool trimmed) if needed; `user` is counted among its users until it
        `release`s it (or is collected). `hold`: a request opens on it, and the pool keeps it
        until `done` says the request ended."""
        key = self._key(pair, folder)
        self.worker_for(folder)  # the worker its gateway talks to (started once per folder)
        with self._lock:
            if self._closed:
                raise gateway_error(pair.label, "the smg runtime was shut down")
            if user is not None:
                self._users.setdefault(key, weakref.WeakSet()).add(user)
            gw = self._pool.get(key)
            if gw is not None:
                self._pool.move_to_end(key)
                if not gw.alive():
                    gw.restart()
            else:
                gw = self._started(key)
            if hold:
                gw.in_flight += 1
            return gw

    def _started(self, key: Key) -> Gateway:
        """A new gateway for `key` in the pool, room made first (called with the lock held)."""
        failed = self._failed.get(key)
        if failed is not None:
            raise failed
        self._trim()
        try:
            gw = self._start(key)
        except (ServerUnavailableError, ParserUnsupportedError) as exc:
            self._failed[key] = exc
            raise
        self._pool[key] = gw
        return gw

    def _trim(self) -> None:
        """Close the least recently used gateways until one more fits. One with a request open is
        kept, and the pool stays over its size until such a request ends: closing it would take
        that stream's state with it (another thread's, as a thread pool over many parsers has)."""
        while len(self._pool) >= max(1, POOL_SIZE):
            idle = next((key for key, gw in self._pool.items() if not gw.in_flight), None)
            if idle is None:
                return
            self._pool.pop(idle).close()

    def done(self, gw: Gateway) -> None:
        """A request `gateway(hold=True)` opened on `gw` ended."""
        with self._lock:
            gw.in_flight = max(0, gw.in_flight - 1)

    def _key(self, pair: ParserPair, folder: ModelFolder | None) -> Key:
        return pair, (folder.path if folder is not None else self.model_dir)

    def worker_for(self, folder: ModelFolder | None) -> ScriptedWorker:
        """The worker whose model folder is `folder` (None: the approximate one), started on first use."""
        if folder is None:
            return self.worker
        with self._lock:
            if self._closed:
                raise gateway_error(folder.label, "the smg runtime was shut down")
            worker = self._workers.get(folder.path)
            if worker is None:
                worker = self._workers[folder.path] = ScriptedWorker(folder)
                try:
                    worker.start()
                except BaseException:
                    worker.stop()
                    del self._workers[folder.path]
                    raise
            return worker

    def _start(self, key: Key) -> Gateway:
        """A started gateway for `key`, with ``--parser symphony`` when smg asks for it."""
        symphony = key in self._symphony
        pair, model_dir = key
        while True:
            gw = Gateway(pair, self._workers[model_dir].port, model_dir, symphony)
            self.starts += 1
            try:
                gw.start()
                return gw
            except ServerUnavailableError:
                log = gw.log_tail(4000)
                if not symphony and "--parser symphony" in log:
                    symphony = True
                    self._symphony.add(key)
                    continue
                refused = _INVALID.search(log)
                if refused:  # smg refuses this combination of names: not a failure of the gateway
                    raise ParserUnsupportedError("smg", gw.label, refused.group(0)) from None
                raise

    def release(self, pair: ParserPair, user: Any, folder: ModelFolder | None = None) -> bool:
        """`user` is done with `pair`'s gateway: stop it if nobody else uses it. True when no
        gateway is left in use (the caller may then stop the runtime)."""
        key = self._key(pair, folder)
        with self._lock:
            users = self._users.get(key)
            if users is not None:
                users.discard(user)
            gw = self._pool.pop(key, None) if not users else None
            idle = not any(self._users.values())
        if gw is not None:
            gw.close()
        return idle

    def gateways(self) -> list[Gateway]:
        with self._lock:
            return list(self._pool.values())

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pool, self._pool = list(self._pool.values()), OrderedDict()
        for gw in pool:
            gw.close()
        for worker in list(self._workers.values()):
            worker.stop()

    stop = close  # what `lifecycle.owners` calls at exit


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def runtime() -> Runtime:
    """This process's runtime, started on first use (a fork gets its own, not its parent's)."""
    global _runtime
    with _runtime_lock:
        rt = _runtime
        if rt is not None and rt.pid != os.getpid() and not rt._closed:
            raise ServerUnavailableError(
                "smg",
                "this process is a fork of one whose scripted gRPC worker was running, and gRPC cannot "
                "serve again after such a fork (it aborts); use smg: in the parent, or start children "
                "with the spawn method",
            )
        if rt is None or rt._closed:
            rt = _runtime = Runtime()
            own(rt)  # stopped at exit, before the worker's thread pool is joined (`lifecycle.owners`)
        return rt


def release(pair: ParserPair, user: Any, folder: ModelFolder | None = None) -> None:
    """`user` (a parser's engine) is closed: stop what only it used (its gateway; the worker with
    the last gateway)."""
    with _runtime_lock:
        rt = _runtime
    if rt is None or rt.pid != os.getpid() or rt._closed:
        return
    if rt.release(pair, user, folder):
        shutdown()


def shutdown() -> None:
    """Stop every gateway and the worker of this process (idempotent)."""
    global _runtime
    with _runtime_lock:
        rt, _runtime = _runtime, None
    if rt is not None and rt.pid == os.getpid():
        rt.close()

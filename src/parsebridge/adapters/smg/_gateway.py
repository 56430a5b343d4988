"""smg gateway processes: one per parser configuration, started on demand, pooled, closed at exit.

A `Runtime` per process holds the scripted worker (`_worker`) and a small
pool of gateways keyed by (tool parser, reasoning parser): the least
recently used is closed when a new configuration needs room. A gateway is
``python -m smg launch`` on free 127.0.0.1 ports, reading the tokenizer
folder `_served.model_folder` keeps in parsebridge's cache; it is ready once
it answers a chat request. Its output goes to a pipe (the last lines kept
for error messages), never to a file. One that dies is started again once;
a second failure, or a gateway that cannot start, is a
`ServerUnavailableError` saying why; smg's refusal of a configuration (a
Symphony-only name paired with a legacy one) is a `ParserUnsupportedError`.
At exit (or `shutdown()`; in a multiprocessing child through its finalizers)
every gateway is killed and the worker stopped: no process or port is left.
A process that dies without cleaning up (SIGKILL, a crash) leaves no gateway
either: each runs under `_launch`, which ends it when its parent-death pipe
(the gateway's stdin; this process holds the write end) reaches end-of-file. A forked child of a
process whose worker ran refuses with `ServerUnavailableError` (gRPC aborts a
server started after such a fork); one forked before any use builds its own.
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from pathlib import Path
from typing import IO

from ...protocol.errors import ParserUnsupportedError, ServerUnavailableError
from .._served import free_port, model_folder
from ._worker import ScriptedWorker

#: Gateways kept running at once (each ~60 MB); more configurations close the least recently used.
POOL_SIZE = int(os.environ.get("PARSEBRIDGE_SMG_POOL", "4"))
#: Seconds a gateway may take to answer its first chat request.
START_TIMEOUT = float(os.environ.get("PARSEBRIDGE_SMG_START_TIMEOUT", "60"))
Config = tuple[str | None, str | None]
#: Runs ``python -m smg ARGS`` and ends it when the process that started it is gone (any death).
_LAUNCHER = Path(__file__).with_name("_launch.py")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: smg's refusal of a parser configuration, in its start-up error.
_INVALID = re.compile(r"Invalid configuration: [^|]*")


def gateway_error(label: str, reason: str) -> ServerUnavailableError:
    """The typed error for a gateway (configuration `label`) that could not start or died twice."""
    return ServerUnavailableError("smg", f"gateway {label}: {reason}")


def label_of(config: Config) -> str:
    tool, reasoning = config
    return "+".join(n for n in (reasoning, tool) if n) or "none"


class Gateway:
    """One `python -m smg launch` process for one (tool, reasoning) parser configuration."""

    def __init__(self, config: Config, worker_port: int, model_dir: Path, symphony: bool = False) -> None:
        self.config = config
        #: ``--parser symphony``: smg reads some names (e.g. ``xlam``) only from its Symphony tables.
        self.symphony = symphony
        self.label = label_of(config)
        self._worker_port = worker_port
        self._model_dir = model_dir
        #: The gateway's last output lines, read from a pipe (no log file is written).
        self._log: deque[str] = deque(maxlen=200)
        self._drain: threading.Thread | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.restarts = 0
        self.start_seconds = 0.0

    def command(self) -> list[str]:
        tool, reasoning = self.config
        # smg's own ``python -m smg launch``, run by `_launch` (a script: no parsebridge import, ``-P``
        # keeps its folder off sys.path), which ends the gateway when this process is gone.
        args = [
            sys.executable,
            "-P",
            str(_LAUNCHER),
            "launch",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        args += ["--worker-urls", f"grpc://127.0.0.1:{self._worker_port}"]
        args += ["--tokenizer-path", str(self._model_dir), "--model-path", str(self._model_dir)]
        args += ["--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port())]
        args += ["--log-level", "warn"]
        if self.symphony:
            args += ["--parser", "symphony"]
        if tool:
            args += ["--tool-call-parser", tool]
        if reasoning:
            args += ["--reasoning-parser", reasoning]
        return args

    def start(self) -> None:
        began = time.perf_counter()
        self.port = free_port()
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "RUST_LOG_STYLE": "never"}
        self._log.clear()
        self.proc = subprocess.Popen(
            self.command(),
            # The launcher's parent-death pipe: this process holds the only write end.
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self._drain = threading.Thread(
            target=_drain, args=(self.proc.stdout, self._log), name="pb-smg-gateway-log", daemon=True
        )
        self._drain.start()
        self._wait_ready()
        self.start_seconds = time.perf_counter() - began

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        body = json.dumps({"model": "parsebridge", "messages": [{"role": "user", "content": "ping"}]})
        while True:
            if not self.alive():
                raise gateway_error(self.label, f"the gateway exited while starting: {self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                try:
                    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
                    if conn.getresponse().status == 200:
                        return
                finally:
                    conn.close()
            if time.monotonic() > deadline:
                self.close()
                raise gateway_error(self.label, f"no answer within {START_TIMEOUT:.0f} s: {self.log_tail()}")
            time.sleep(0.02)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, limit: int = 800) -> str:
        drain = self._drain
        if drain is not None and not self.alive():
            drain.join(2)  # the rest of a dead gateway's output
        lines = [line for line in list(self._log) if " WARN " not in line]
        return " | ".join(lines)[-limit:] or "(no output)"

    def restart(self) -> None:
        """Start a dead gateway again, once in its life; the second death is a `ServerUnavailableError`."""
        if self.restarts >= 1:
            raise gateway_error(self.label, f"the gateway died again after a restart: {self.log_tail()}")
        self.restarts += 1
        self.close()
        self.start()

    def rss_kb(self) -> int | None:
        """Resident memory of the gateway process (Linux /proc), or None."""
        if self.proc is None:
            return None
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        # The gateway holds no state worth a graceful stop (SIGTERM waits ~5 s for drains).
        proc.kill()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            # Killed, but not yet reaped (seen on a machine at load 40): an evicted gateway must not
            # fail the parse that evicted it, so a daemon thread reaps it when the kernel lets it go.
            threading.Thread(target=proc.wait, name="smg-reap", daemon=True).start()


def _drain(pipe: IO[bytes] | None, into: deque[str]) -> None:
    """Keep a gateway's output lines (its pipe must be read, or the gateway blocks on a full one)."""
    if pipe is None:
        return
    with pipe:
        for raw in pipe:
            into.append(_ANSI.sub("", raw.decode("utf-8", "replace")).rstrip())


class Runtime:
    """The worker, the model folder and the gateway pool of one process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._lock = threading.Lock()
        #: One token per byte, no marker tokens: no smg parser needs a marker as one token.
        self.model_dir = model_folder(()).path
        self.worker = ScriptedWorker(str(self.model_dir))
        self._pool: OrderedDict[Config, Gateway] = OrderedDict()
        #: Configurations whose gateway could not start: the error, raised again without a new try.
        self._failed: dict[Config, ServerUnavailableError | ParserUnsupportedError] = {}
        self._symphony: set[Config] = set()
        #: Gateway processes started (first starts, LRU re-starts and restarts after a death).
        self.starts = 0
        self._closed = False
        try:
            self.worker.start()
        except BaseException:
            self.worker.stop()
            raise

    def gateway(self, config: Config) -> Gateway:
        """The running gateway for `config`, started (and the pool trimmed) if needed."""
        with self._lock:
            if self._closed:
                raise gateway_error(label_of(config), "the smg runtime was shut down")
            gw = self._pool.get(config)
            if gw is not None:
                self._pool.move_to_end(config)
                if not gw.alive():
                    gw.restart()
                return gw
            failed = self._failed.get(config)
            if failed is not None:
                raise failed
            while len(self._pool) >= max(1, POOL_SIZE):
                _, old = self._pool.popitem(last=False)
                old.close()
            try:
                gw = self._start(config)
            except (ServerUnavailableError, ParserUnsupportedError) as exc:
                self._failed[config] = exc
                raise
            self._pool[config] = gw
            return gw

    def _start(self, config: Config) -> Gateway:
        """A started gateway for `config`, with ``--parser symphony`` when smg asks for it."""
        symphony = config in self._symphony
        while True:
            gw = Gateway(config, self.worker.port, self.model_dir, symphony)
            self.starts += 1
            try:
                gw.start()
                return gw
            except ServerUnavailableError:
                log = gw.log_tail(4000)
                if not symphony and "--parser symphony" in log:
                    symphony = True
                    self._symphony.add(config)
                    continue
                refused = _INVALID.search(log)
                if refused:  # smg refuses this combination of names: not a failure of the gateway
                    raise ParserUnsupportedError("smg", gw.label, refused.group(0)) from None
                raise

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
        self.worker.stop()


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
            # A multiprocessing child leaves through os._exit, which skips atexit: its
            # finalizers still run (the conformance suite's --jobs workers are such children).
            import multiprocessing.util

            multiprocessing.util.Finalize(rt, rt.close, exitpriority=100)
            # Before concurrent.futures stops taking work at interpreter exit (its hook runs ahead
            # of atexit): the worker's gRPC server would print a traceback for every request the
            # gateways still send. threading runs these hooks last-registered first.
            register = getattr(threading, "_register_atexit", None)
            if register is not None:
                with contextlib.suppress(RuntimeError):
                    register(shutdown)
        return rt


def shutdown() -> None:
    """Close every gateway, the worker and the temporary folder of this process (idempotent)."""
    global _runtime
    with _runtime_lock:
        rt, _runtime = _runtime, None
    if rt is not None and rt.pid == os.getpid():
        rt.close()


atexit.register(shutdown)

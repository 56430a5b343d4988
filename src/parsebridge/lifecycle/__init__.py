"""One owner of each server parsebridge starts: a framework's server, a time-budget worker.

`Server` is the life cycle (start, wait until ready, is_alive, restart, stop,
cleanup, ``with``), after jupyter_client's KernelManager and testcontainers;
`launchers` run it in a thread of this process (`ThreadLauncher`) or as a
subprocess that ends with this process (`SubprocessLauncher`); readiness is a
strategy (`PollUntil`, `HttpAnswer`); `owners` stops everything still running
when the process ends; `pool` runs worker processes whose Ctrl-C is the parent's (conformance's
units, compare's batches). A low room: it imports only `protocol` (for
`ServerUnavailableError`), so `policy` and `adapters` both build on it.
"""

from __future__ import annotations

from .launchers import SubprocessLauncher, ThreadLauncher
from .owners import own, stop_all
from .server import HttpAnswer, PollUntil, Readiness, Server, free_port, wait_until

__all__ = [
    "HttpAnswer",
    "PollUntil",
    "Readiness",
    "Server",
    "SubprocessLauncher",
    "ThreadLauncher",
    "free_port",
    "own",
    "stop_all",
    "wait_until",
]

"""The `parsebridge` command: its entry point and subcommands.

``main`` (the console script) runs ``cli.commands``: a table of subcommands, each a module
of this package (``parse_command``, ``list_command``, ``compare_command``,
``conformance_command``, ``install_command``) imported only when its subcommand runs.
``stream_output`` keeps ``parse --stream`` in bounded memory; the terminal helpers the
commands and the rooms' renderers share are `parsebridge.terminal`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from .commands import main as _run


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `parsebridge` command and return its exit status (for callers in Python)."""
    return _run(argv)


def console_main() -> NoReturn:
    """The console script's entry point: run the command, then end the process without the
    interpreter's teardown. Freeing every module one by one is the slowest part of a short command's
    exit: about an eighth of a `compare` of 22 transcripts, and seconds once vLLM or torch is loaded
    (3 s after importing vLLM alone on a 2-core machine, 6.5 s after a three-backend conformance run).
    What exit must do still runs (`exit_without_teardown`); a command closes its own files before it
    returns."""
    exit_without_teardown(_run(None))


def exit_without_teardown(code: int) -> NoReturn:
    """Exit as the interpreter would, minus freeing every module one by one: first what exit runs
    that matters (threads joined and their exit hooks, which stop the servers we started; `atexit`,
    which flushes logging), then the standard streams flushed, then the process ends."""
    shutdown = getattr(threading, "_shutdown", None)  # CPython's own first step of exiting
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)

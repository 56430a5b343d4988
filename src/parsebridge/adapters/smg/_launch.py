"""``python -P _launch.py ARGS``: smg's gateway command line, ended when its parent process is gone.

`_gateway` starts every gateway through this module instead of ``python -m smg``.
It runs smg's own command line (``python -m smg ARGS``, unchanged) in this
process, plus one daemon thread that reads standard input: the parent holds
the only write end of that pipe, so the read returns end-of-file as soon as
the parent process is gone, however it went (exit, exception, SIGKILL, a
crash), and the thread then ends this process at once with ``os._exit``.
No gateway outlives the Python process that started it.

A pipe rather than ``prctl(PR_SET_PDEATHSIG)``: Linux sends the parent-death
signal when the *thread* that forked the child ends, and parsers are built
from thread pools (a gateway started from a pool thread would die with that
thread); the pipe follows the process, works on every POSIX system, and needs
no ``preexec_fn`` (unsafe with threads). A fork of the parent that outlives it
keeps the write end, and with it the gateway, until it ends too.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading


def _watch(fd: int) -> None:
    """Block until the parent's end of the pipe on `fd` closes, then end this process."""
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass
    os._exit(0)


def main(argv: list[str]) -> None:
    threading.Thread(target=_watch, args=(0,), name="pb-parent-watch", daemon=True).start()
    sys.argv = ["smg", *argv]
    runpy.run_module("smg", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])

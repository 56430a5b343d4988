"""``python -P _watch.py COMMAND...``: run COMMAND, and end it when the parent process is gone.

`launchers.SubprocessLauncher` starts every server with ``parent_death``
through this script. One daemon thread reads standard input: the parent holds
the only write end of that pipe, so the read returns end-of-file as soon as
the parent process is gone, however it went (exit, exception, SIGKILL, a
crash), or when the parent closes it to ask for a stop; the thread then ends
this process at once with ``os._exit`` (killing COMMAND first when it is a
child). No server outlives the Python process that started it.

``COMMAND`` = ``PYTHON -m MODULE ARGS`` (this interpreter) runs the module in
this process, with ``sys.argv`` as ``python -m`` would set it (one process,
not two). Any other command runs as this process's child.

A pipe rather than ``prctl(PR_SET_PDEATHSIG)``: Linux sends the parent-death
signal when the *thread* that forked the child ends, and servers are started
from thread pools (a server started from a pool thread would die with that
thread); the pipe follows the process, works on every POSIX system, and needs
no ``preexec_fn`` (unsafe with threads). A fork of the parent that outlives it
keeps the write end, and with it the server, until it ends too.

A script, not a module of the package: it imports nothing of parsebridge (``-P``
keeps its folder off ``sys.path``).
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import threading


def _watch(fd: int, child: subprocess.Popen[bytes] | None) -> None:
    """Block until the parent's end of the pipe on `fd` closes, then end this process (and `child`)."""
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass
    if child is not None and child.poll() is None:
        child.kill()
        child.wait()  # this process ends after its child: once it is gone, so is the server
    os._exit(0)


def main(argv: list[str]) -> None:
    if len(argv) >= 3 and argv[1] == "-m" and os.path.realpath(argv[0]) == os.path.realpath(sys.executable):
        threading.Thread(target=_watch, args=(0, None), name="pb-parent-watch", daemon=True).start()
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        return
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    threading.Thread(target=_watch, args=(0, child), name="pb-parent-watch", daemon=True).start()
    sys.exit(child.wait())


if __name__ == "__main__":
    main(sys.argv[1:])

"""Run a piece of a test in a forked copy of the test process and read back what it said:
the fork-safety tests (a server, worker or stream opened before a fork, used in the copy)."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_fork(work: Callable[[], str]) -> tuple[int, int]:
    """Fork; the child runs `work`, writes what it returned (or the error it raised, as
    ``TypeName: message``), and ends. The child's pid and the pipe to read that from (`child_said`)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            os.close(read)
            try:
                said = work()
            except BaseException as exc:
                said = f"{type(exc).__name__}: {exc}"
            os.write(write, said.encode())
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def child_said(pid: int, read: int) -> str:
    """What the child of `in_fork` wrote, once it has ended."""
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said


def said_in_fork(work: Callable[[], str]) -> str:
    """`work`'s answer in a forked copy of this process (`in_fork`, then `child_said`)."""
    return child_said(*in_fork(work))

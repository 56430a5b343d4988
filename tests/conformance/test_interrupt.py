"""Ctrl-C during a run: `conformance` with Dynamo or smg stops promptly, starts no further servers,
says how far it got and exits 130; `compare`'s workers are stopped the same way (one pool,
`lifecycle.pool`), it says how far of how many it got, and its bar does not claim a full run it
did not finish."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack

import pytest

from parsebridge.adapters import get_backend
from parsebridge.cli import compare_command, conformance_run, main
from parsebridge.comparison.engine import ComparePlan, as_transcripts, run_comparisons
from parsebridge.lifecycle.pool import worker_pool

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def _in_session(sid: int) -> list[int]:
    """The live processes of session `sid` (what a run and everything it started belong to)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()  # noqa: SIM115 - a /proc read
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(entry))
    return out


#: ``python -m parsebridge ARGS`` with Ctrl-C's default handler installed first, whatever this
#: process passes on: a shell's background job starts with SIGINT ignored, and a Python started
#: so never installs KeyboardInterrupt (the run would go on to its end). Set in the child itself,
#: not by a `preexec_fn`, which is unsafe in a test process whose framework threads may hold locks.
_WITH_CTRL_C = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('parsebridge', run_name='__main__', alter_sys=True)"
)


@pytest.mark.framework
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("backend", "after"), [("smg", 15.0), ("dynamo", 20.0)])
def test_ctrl_c_stops_a_parallel_conformance_run_at_once(backend: str, after: float) -> None:
    reason = get_backend(backend).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend} is not installed: {reason}")
    # Its own session, as a terminal's foreground job: Ctrl-C goes to every process in it.
    run = subprocess.Popen(
        [sys.executable, "-c", _WITH_CTRL_C, "conformance", "--backend", backend, "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(after)  # well inside the run (a whole run takes minutes)
    assert run.poll() is None
    os.killpg(run.pid, signal.SIGINT)
    began = time.monotonic()
    _, err = run.communicate(timeout=120)
    took = time.monotonic() - began
    assert run.returncode == 130, err[-3000:]
    assert took < 20, f"{took:.1f} s from Ctrl-C to exit"
    assert "interrupted after" in err and "results; nothing reported" in err, err[-3000:]
    deadline = time.monotonic() + 10  # what it started (workers, gateways) is gone with it
    while _in_session(run.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in_session(run.pid) == []


def test_an_interrupted_compare_bar_stays_where_it_stopped() -> None:
    def finished(complete: bool) -> tuple[float | None, float]:
        with ExitStack() as stack:
            bar = compare_command._Bar(stack, True, 10, time.perf_counter())
            for _ in range(3):
                bar.advance()
            bar.finish(complete)
            task = bar.bar.tasks[0]
            return task.total, task.completed

    assert finished(False) == (10, 3)  # 3/10, not 3/3 = 100 %
    assert finished(True) == (3, 3)


def _sigint_handler() -> object:
    return signal.getsignal(signal.SIGINT)


def test_pool_workers_leave_ctrl_c_to_the_parent() -> None:
    with worker_pool(1) as pool:
        assert pool.submit(_sigint_handler).result() == signal.SIG_IGN


def test_ctrl_c_stops_a_parallel_compare_at_once() -> None:
    def then_ctrl_c():  # the parent is interrupted while it reads the 9th transcript
        for i in range(8):
            yield {"id": f"t{i}", "family": "hermes", "output": "SLOW " + CALL}
        raise KeyboardInterrupt

    plan = ComparePlan.build(["python:_compare_parsers:Slow"], chunkings=["token-5"])
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        for _ in run_comparisons(as_transcripts(then_ctrl_c()), plan, jobs=2, batch=1):
            pass
    assert time.monotonic() - began < 30  # each worker's batch takes a minute
    # terminated, not left to finish their batches (asked of the OS: the pool's manager thread joins
    # the same workers, and where it reaps one first the Process object never learns its exit code)
    assert [c.name for c in multiprocessing.active_children() if _still_running(c.pid)] == []


def _still_running(pid: int | None) -> bool:
    """Whether this process's child `pid` has not ended (a zombie it leaves is reaped here)."""
    try:
        return pid is not None and os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:  # reaped already
        return False


def test_an_interrupted_compare_says_how_far_of_how_many(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(f'{{"id": "t{i}", "family": "hermes", "output": "x"}}\n' for i in range(3)))
    real = compare_command.run_comparisons

    def one_then_ctrl_c(*args, **kwargs):
        yield next(iter(real(*args, **kwargs)))
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_command, "run_comparisons", one_then_ctrl_c)
    assert main(["compare", str(log), "--backends", "builtin", "--format", "json"]) == 130
    assert "interrupted after 1 of 3 transcripts" in capsys.readouterr().err


_CTRL_C_WHILE_FORKING = """
import os, signal
from parsebridge.lifecycle.pool import worker_pool

signal.signal(signal.SIGINT, signal.default_int_handler)  # (an xdist worker's child ignores SIGINT)
fired = []

def ctrl_c_while_forking():
    if not fired:
        fired.append(1)
        os.kill(os.getpid(), signal.SIGINT)

os.register_at_fork(before=ctrl_c_while_forking)
try:
    with worker_pool(2) as pool:
        print(sorted(pool.map(abs, [-1, -2])))
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_while_the_workers_fork_is_not_lost() -> None:
    """Ctrl-C that came while a worker forked was raised inside an at-fork hook, which can only
    print it ("Exception ignored in: <function _releaseLock>"): the run went on to its end and
    exited 0. In a process of its own: an at-fork hook cannot be removed."""
    p = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_FORKING], capture_output=True, text=True, timeout=120
    )
    assert (p.stdout, p.returncode) == ("interrupted\n", 0), p.stderr
    assert "Exception ignored" not in p.stderr, p.stderr


def test_an_interrupted_conformance_run_says_one_line_on_a_non_terminal_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rich's progress bar, stopped off a terminal, printed an empty line (it shows nothing there:
    it is transient), so stderr read "\\ninterrupted after N of M results"."""
    real = conformance_run.run_units

    def some_then_ctrl_c(*args, **kwargs):
        results = real(*args, **kwargs)
        yield next(iter(results))
        raise KeyboardInterrupt

    monkeypatch.setattr(conformance_run, "run_units", some_then_ctrl_c)
    args = ["conformance", "--backend", "builtin", "--family", "hermes", "--jobs", "1"]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert err.startswith("interrupted after ") and err.count("\n") == 1, repr(err)

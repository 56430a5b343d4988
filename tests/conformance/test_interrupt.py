"""Ctrl-C during a run: `conformance` with Dynamo or smg stops promptly, starts no further servers,
says how far it got and exits 130; `compare`'s bar does not claim a full run it did not finish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack

import pytest

from parsebridge.adapters import get_backend
from parsebridge.cli import compare_command


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


@pytest.mark.framework
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("backend", "after"), [("smg", 15.0), ("dynamo", 20.0)])
def test_ctrl_c_stops_a_parallel_conformance_run_at_once(backend: str, after: float) -> None:
    reason = get_backend(backend).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend} is not installed: {reason}")
    # Its own session, as a terminal's foreground job: Ctrl-C goes to every process in it.
    run = subprocess.Popen(
        [sys.executable, "-m", "parsebridge", "conformance", "--backend", backend, "--jobs", "2"],
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

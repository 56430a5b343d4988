"""The console script's exit (`cli.console_main`): with a heavy framework imported it skips the
interpreter's teardown (seconds after vLLM and torch), and still runs what exit must run: thread
exit hooks (they stop the servers a run started), `atexit`, the streams' flush, the exit status."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = r"""
import atexit, os, sys, threading, types
if sys.argv[1] == "heavy":
    sys.modules["torch"] = types.ModuleType("torch")  # as if a framework had imported it
atexit.register(lambda: print("atexit ran", flush=True))
threading._register_atexit(lambda: print("thread hook ran", flush=True))

class Teardown:
    def __del__(self, write=os.write):  # (at teardown the streams may be gone: the bare fd)
        write(1, b"teardown ran\n")

kept = Teardown()
sys.argv = ["parsebridge", *sys.argv[2:]]
from parsebridge.cli import console_main
console_main()
"""


def _run(mode: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(("args", "code"), [(("list",), 0), (("parse", "no-such-file.txt"), 2)])
def test_heavy_exit_skips_teardown_and_keeps_hooks_output_and_status(args, code):
    heavy = _run("heavy", *args)
    assert heavy.returncode == code, heavy.stderr
    assert "thread hook ran" in heavy.stdout and "atexit ran" in heavy.stdout
    assert "teardown ran" not in heavy.stdout
    light = _run("light", *args)  # the control: a normal exit does tear down
    assert light.returncode == code and "teardown ran" in light.stdout
    assert heavy.stdout.replace("thread hook ran\n", "").replace("atexit ran\n", "") == light.stdout.replace(
        "thread hook ran\n", ""
    ).replace("atexit ran\n", "").replace("teardown ran\n", "")
    assert heavy.stderr == light.stderr

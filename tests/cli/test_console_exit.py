"""The console script's exit (`cli.console_main`): it skips the interpreter's teardown (the slowest
part of a short command's exit; seconds after vLLM and torch), and still runs what exit must run:
thread exit hooks (they stop the servers a run started), `atexit`, the streams' flush, the exit
status. A file the command wrote is whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import atexit, os, sys, threading
atexit.register(lambda: print("atexit ran", flush=True))
threading._register_atexit(lambda: print("thread hook ran", flush=True))

class Teardown:
    def __del__(self, write=os.write):  # (at teardown the streams may be gone: the bare fd)
        write(1, b"teardown ran\n")

kept = Teardown()
mode, sys.argv = sys.argv[1], ["parsebridge", *sys.argv[2:]]
from parsebridge.cli import console_main, main
console_main() if mode == "console" else sys.exit(main())
"""


def _run(mode: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, *args], capture_output=True, text=True, timeout=120
    )


def _without_hooks(out: str) -> str:
    return out.replace("thread hook ran\n", "").replace("atexit ran\n", "").replace("teardown ran\n", "")


@pytest.mark.parametrize(("args", "code"), [(("list",), 0), (("parse", "no-such-file.txt"), 2)])
def test_console_exit_skips_teardown_and_keeps_hooks_output_and_status(args, code):
    console = _run("console", *args)
    assert console.returncode == code, console.stderr
    assert "thread hook ran" in console.stdout and "atexit ran" in console.stdout
    assert "teardown ran" not in console.stdout
    plain = _run("plain", *args)  # the control: a normal interpreter exit does tear down
    assert plain.returncode == code and "teardown ran" in plain.stdout
    assert _without_hooks(console.stdout) == _without_hooks(plain.stdout)
    assert console.stderr == plain.stderr


def test_a_file_the_command_wrote_is_whole(tmp_path: Path) -> None:
    """compare's JSON Lines output, written through a file the command opened, ends complete."""
    out = tmp_path / "out.jsonl"
    args = ("compare", "--bundled", "--family", "hermes", "--backends", "builtin", "--output", str(out))
    console = _run("console", *args)
    assert console.returncode == 0, console.stderr
    plain_out = tmp_path / "plain.jsonl"
    plain = _run("plain", *args[:-1], str(plain_out))
    assert plain.returncode == 0, plain.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines and len(lines) == len(plain_out.read_text(encoding="utf-8").splitlines())
    assert out.read_text(encoding="utf-8").endswith("\n")

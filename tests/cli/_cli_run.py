"""Run the `parsebridge` command as a user does: a subprocess, in a folder of their own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import parsebridge

SRC = str(Path(parsebridge.__file__).resolve().parent.parent)


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PARSEBRIDGE_FRAMEWORK_LOGS")}
    out["PYTHONPATH"] = SRC + os.pathsep + out.get("PYTHONPATH", "")
    out.update(extra)
    return out


def run(
    *args: str, cwd: Path, stdin: bytes | None = None, command: list[str] | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``python -m parsebridge ARGS`` (or `command` + ARGS) in `cwd`; text out, never a traceback."""
    proc = subprocess.run(
        [*(command or [sys.executable, "-m", "parsebridge"]), *args],
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=env(**extra),
        timeout=300,
    )
    out = subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout, out.stderr
    return out


def one_error_line(p: subprocess.CompletedProcess[str]) -> str:
    """The usage error a command printed: exit 2, one ``error:`` line on stderr, nothing on stdout."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert not p.stdout.strip(), p.stdout
    return lines[0]

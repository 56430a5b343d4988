"""`dynamo:` leaves nothing in Dynamo's model-card cache (``$HOME/.cache/dynamo/mdc``), also when a
process pool's workers ran the frontend, or a process died before `close`. Skipped without
`ai-dynamo-runtime`; every run uses a temporary HOME."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parsebridge.adapters import get_backend

pytestmark = pytest.mark.framework

_reason = get_backend("dynamo").unavailable_reason()
if _reason is not None:
    pytest.skip(f"dynamo is not installed: {_reason}", allow_module_level=True)

_PARSE = """
import parsebridge as pb
def parse(text):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    tp = pb.get_tool_parser("dynamo:hermes", tools=tools)
    return [c.name for c in tp.parse(text).tool_calls]
CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
"""

_POOL = _PARSE + textwrap.dedent(
    """
    from parsebridge.conformance.parallel import map_forked
    from parsebridge.adapters.dynamo._frontend import frontend
    assert map_forked(parse, [CALL] * 4, jobs=2) == [["f"]] * 4
    assert not frontend().running  # the workers ran the frontend, this process did not
    print("done")
    """
)


def _run(code: str, home: Path) -> str:
    env = dict(os.environ, HOME=str(home), PARSEBRIDGE_CACHE=str(home / "pb"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-6000:]
    return out.stdout


def test_forked_pool_workers_remove_their_cache_entries(tmp_path: Path) -> None:
    """A pool worker ends with `os._exit` (no `atexit`): its frontend still closes and cleans up."""
    assert "done" in _run(_POOL, tmp_path)
    assert not (tmp_path / ".cache" / "dynamo").exists(), sorted(tmp_path.rglob("*"))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _entry(mdc: Path, slug: str, blob: str) -> None:
    (mdc / "blobs").mkdir(parents=True, exist_ok=True)
    (mdc / "blobs" / blob).write_text(blob)
    folder = mdc / "by-slug" / slug / "0123abcd"
    folder.mkdir(parents=True)
    (folder / "tokenizer.json").symlink_to(mdc / "blobs" / blob)


def test_a_start_removes_what_dead_processes_left_and_nothing_else(tmp_path: Path) -> None:
    mdc = tmp_path / ".cache" / "dynamo" / "mdc"
    dead, alive = _dead_pid(), os.getpid()
    _entry(mdc, f"dynamo-{dead}-0a1b2c-m0", "b-dead")
    _entry(mdc, f"dynamo-{dead}-0a1b2c-m1", "b-shared")
    _entry(mdc, f"dynamo-{alive}-0a1b2c-m0", "b-alive")
    _entry(mdc, "Qwen--Qwen3-8B", "b-user")
    (mdc / "by-slug" / "Qwen--Qwen3-8B" / "0123abcd" / "shared.json").symlink_to(mdc / "blobs" / "b-shared")
    code = _PARSE + "assert parse(CALL) == ['f']\n"
    # The child ends without `close` (as a killed worker would): its own entries stay, named by its PID.
    _run(code + "import os; os._exit(0)\n", tmp_path)
    left = sorted(p.name for p in (mdc / "by-slug").iterdir())
    assert f"dynamo-{dead}-0a1b2c-m0" not in left and f"dynamo-{dead}-0a1b2c-m1" not in left, left
    assert f"dynamo-{alive}-0a1b2c-m0" in left and "Qwen--Qwen3-8B" in left, left
    assert len(left) == 3, left  # the child's own model
    blobs = {p.name for p in (mdc / "blobs").iterdir()}
    assert {"b-alive", "b-user", "b-shared"} <= blobs and "b-dead" not in blobs, blobs
    # The next start removes the first child's entries; its `close` removes its own.
    _run(code, tmp_path)
    left = sorted(p.name for p in (mdc / "by-slug").iterdir())
    assert left == sorted([f"dynamo-{alive}-0a1b2c-m0", "Qwen--Qwen3-8B"]), left
    assert {p.name for p in (mdc / "blobs").iterdir()} == {"b-alive", "b-user", "b-shared"}

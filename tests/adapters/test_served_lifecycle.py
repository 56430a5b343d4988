"""Dynamo's frontend, smg's gateways and a time-budget worker, each started and closed through
``with``: nothing is left behind (no thread, process, listening port or Dynamo cache file). Run in
a fresh interpreter with a temporary HOME, so what was there before is known. Skipped without
`ai-dynamo-runtime` or smg."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parsebridge.adapters import get_backend

pytestmark = [pytest.mark.framework, pytest.mark.timeout(600)]

for _name in ("dynamo", "smg"):
    _reason = get_backend(_name).unavailable_reason()
    if _reason is not None:
        pytest.skip(f"{_name} is not installed: {_reason}", allow_module_level=True)

_CODE = r"""
import json, os, socket, threading, time
import parsebridge as pb
from parsebridge.adapters.dynamo._frontend import frontend
from parsebridge.adapters.smg import _gateway

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
CALL = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
before = set(threading.enumerate())
names = lambda p: [c.name for c in p.parse(CALL).tool_calls]

def children():
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                out.append(int(entry))
    return out

def listening(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0

with (
    pb.get_tool_parser("dynamo:hermes", tools=TOOLS) as dyn,
    pb.get_tool_parser("smg:qwen", tools=TOOLS) as smg,
    pb.get_tool_parser("builtin:hermes", tools=TOOLS, timeout=60) as budget,
):
    assert names(dyn) == names(smg) == names(budget) == ["f"]
    stream = smg.stream()
    stream.feed(CALL[:9])
    del stream  # abandoned mid-way: cleaned up, not left waiting
    rt = _gateway.runtime()
    ports = [frontend().port, rt.worker.port] + [gw.port for gw in rt.gateways()]
    during = children()
deadline = time.monotonic() + 10
while time.monotonic() < deadline and (children() or set(threading.enumerate()) - before):
    time.sleep(0.05)
print(json.dumps({
    "during": during,
    "children": children(),
    "threads": sorted(t.name for t in set(threading.enumerate()) - before),
    "ports": [p for p in ports if listening(p)],
    "frontend running": frontend().running,
}))
"""


def test_with_closes_dynamo_smg_and_a_budget_worker_leaving_nothing(tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path), PARSEBRIDGE_CACHE=str(tmp_path / "pb"))
    out = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, timeout=500)
    assert out.returncode == 0, out.stderr[-6000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen["during"]) == 2, seen  # the gateway and the budget worker ran as children
    assert seen["children"] == [] and seen["threads"] == [] and seen["ports"] == [], seen
    assert not seen["frontend running"]
    assert not (tmp_path / ".cache" / "dynamo").exists(), sorted(tmp_path.rglob("*"))

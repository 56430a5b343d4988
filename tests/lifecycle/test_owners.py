"""The exit-time owner: a forked child stops only what it started itself."""

from __future__ import annotations

import os
from pathlib import Path

from parsebridge.lifecycle import owners


class _Recorder:
    def __init__(self, log: Path) -> None:
        self.log = log

    def stop(self) -> None:
        with self.log.open("a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")


def test_a_forked_child_leaves_the_parents_things_alone(tmp_path: Path) -> None:
    # (a conformance worker forked after smg's scripted gRPC worker started hung at exit stopping it)
    parents, childs = _Recorder(tmp_path / "parent"), _Recorder(tmp_path / "child")
    owners.own(parents)
    try:
        pid = os.fork()
        if pid == 0:  # the child: own its own thing, then stop all as a pool worker's exit does
            owners.own(childs)
            owners.stop_all()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert not (tmp_path / "parent").exists(), "the child stopped the parent's thing"
        assert (tmp_path / "child").read_text(encoding="utf-8").split() == [str(pid)]
        owners.stop_all()
        assert (tmp_path / "parent").read_text(encoding="utf-8").split() == [str(os.getpid())]
    finally:
        owners.disown(parents)

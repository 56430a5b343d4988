"""A voice (Dynamo, smg: parsers read inside their own servers) gets one more try on a failed case."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from parsebridge.conformance.consensus import voices


class FlakyRunner:
    """Fails the first `failures` requests, then reads ``{"content": "x"}``."""

    chunkings = ("oneshot",)
    table = None

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def run_transcript(self, target: Any, t: Any, chunkings: Any) -> list[Any]:
        self.calls += 1
        ok = self.calls > self.failures
        obs = SimpleNamespace(error=None if ok else "timed out", reading=lambda: {"content": "x"})
        return [SimpleNamespace(status="pass" if ok else "error", observation=obs, detail="timed out")]


@pytest.fixture
def one_voice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voices, "voice_versions", lambda: {"dynamo": "test"})
    monkeypatch.setattr(voices, "target_for", lambda t, v, table: SimpleNamespace(unsupported=None))


@pytest.mark.usefixtures("one_voice")
def test_a_failed_case_is_read_again_once() -> None:
    runner = FlakyRunner(failures=1)
    o = SimpleNamespace(readings={}, errors={})
    voices.add_voices([o], [object()], ["dynamo"], runner)  # type: ignore[list-item,arg-type]
    assert (o.readings, o.errors, runner.calls) == ({"dynamo": {"content": "x"}}, {}, 2)


@pytest.mark.usefixtures("one_voice")
def test_a_case_that_fails_twice_is_an_error() -> None:
    runner = FlakyRunner(failures=2)
    o = SimpleNamespace(readings={}, errors={})
    voices.add_voices([o], [object()], ["dynamo"], runner)  # type: ignore[list-item,arg-type]
    assert (o.readings, o.errors, runner.calls) == ({"dynamo": None}, {"dynamo": "timed out"}, 2)

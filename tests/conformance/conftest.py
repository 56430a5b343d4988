"""Fixtures for the conformance tests: toy parsers, a toy backend and family table, tiny transcripts.

Nothing here depends on the builtin parsers or on a framework: the suite's
machinery is tested against deliberately defective `python:` parsers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parsebridge import load_table
from parsebridge.adapters import registry

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

TOY_TABLE = """
[tool.toycall]
aliases = ["toy"]
toyfw = "incremental"
toybroken = "good"
toylight = "good"
toyheavy = "good"
notinstalled = "good"
nosuchfw = "good"

[tool.onlyelsewhere]
othersomewhere = "x"

[reasoning.toythink]
toyfw = "think"
notinstalled = "think"
"""


@pytest.fixture
def toy_backends(monkeypatch):
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "toyfw", "_confparsers:ToyBackend")
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "notinstalled", "_confparsers:NotInstalledBackend")
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "toybroken", "_confparsers:BrokenImportBackend")
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "toylight", "_confparsers:LightToyBackend")
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "toyheavy", "_confparsers:HeavyToyBackend")
    registry._reset_caches()
    yield
    registry._reset_caches()


@pytest.fixture
def toy_table(monkeypatch):
    """The toy family table, installed wherever conformance and the registry look it up."""
    from parsebridge.conformance import runner, transcripts

    table = load_table(TOY_TABLE)
    monkeypatch.setattr(runner, "family_table", lambda: table)
    monkeypatch.setattr(transcripts, "family_table", lambda: table)
    monkeypatch.setattr(registry, "family_table", lambda: table)
    return table

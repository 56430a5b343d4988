"""Plugin tests drive the frameworks' real servers with the scripted-engine harness in tests/serving."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVING = Path(__file__).resolve().parent.parent / "serving"
if str(SERVING) not in sys.path:
    sys.path.insert(0, str(SERVING))


@pytest.fixture(scope="module", autouse=True)
def _framework_registries_restored() -> Iterator[None]:
    """Each test module gets the frameworks' tables back as they were, so names it registered
    (``pb:…``, a test's own parser) never reach tests that read the frameworks' own names in the
    same worker; the plugin modules are forgotten, so the next module's import registers again."""
    from parsebridge.plugins._tables import tables_restored

    with tables_restored(forget_all_plugins=True):
        yield

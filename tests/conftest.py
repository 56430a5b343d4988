"""Shared test setup: the `python:` user parsers, the `framework` marker, hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``dev``):

- ``dev`` — what ``tox -e core`` and a plain ``pytest`` run: every property test
  runs a tenth of its example count (at least ``DEV_FLOOR``, never more than its
  own count), so the suite gives feedback in minutes;
- ``thorough`` — every property test runs the example count written beside it
  (``tox -e thorough``, run by ``.ci/run``): the full depth, nothing dropped.

A test's own ``@settings(max_examples=N)`` states its thorough count; the
``dev`` profile scales it down here, once per test function, at collection.
Tests that exercise a framework (marked `framework`) keep their counts: they
run in the framework envs, which have no thorough twin.
Environment overrides that name a count (``PB_BUILTIN_EXAMPLES``,
``PARSEBRIDGE_FUZZ_EXAMPLES``, ``PARSEBRIDGE_ROUNDTRIP_EXAMPLES``) are taken
as asked: they are not scaled.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from hypothesis import settings

HERE = Path(__file__).parent
# `tests/_userparsers.py` is loaded by `python:_userparsers:Class` specs.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# pytest-xdist's workers run with COLUMNS=80 and LINES=24 in their environment (a plain pytest
# run has neither), and the CLI's consoles take a width from COLUMNS: a table rendered in-process
# would be cut at 80 columns under `-n` (tox -e core) and whole without it. Tests see no terminal.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

#: Fraction of each property test's example count run under the ``dev`` profile, and its floor.
DEV_FRACTION = 0.1
DEV_FLOOR = 5
#: Environment variables that set an example count explicitly (never scaled).
COUNT_OVERRIDES = ("PB_BUILTIN_EXAMPLES", "PARSEBRIDGE_FUZZ_EXAMPLES", "PARSEBRIDGE_ROUNDTRIP_EXAMPLES")

settings.register_profile("thorough", deadline=None)
settings.register_profile("dev", deadline=None, max_examples=DEV_FLOOR * 2)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
settings.load_profile(PROFILE)


def dev_examples(full: int) -> int:
    """The ``dev`` profile's example count for a test whose thorough count is `full`."""
    return min(full, max(DEV_FLOOR, math.ceil(full * DEV_FRACTION)))


def _scale_examples(items) -> None:  # type: ignore[no-untyped-def]
    if PROFILE != "dev" or any(os.environ.get(v) for v in COUNT_OVERRIDES):
        return
    tests: dict[int, object] = {}
    framework: set[int] = set()
    for item in items:
        fn = getattr(item, "obj", None)
        if getattr(fn, "is_hypothesis_test", False):
            tests[id(fn)] = fn
            if item.get_closest_marker("framework") is not None:
                framework.add(id(fn))
    for key, fn in tests.items():
        if key in framework:
            continue
        own = fn._hypothesis_internal_use_settings  # type: ignore[attr-defined]
        fn._hypothesis_internal_use_settings = settings(  # type: ignore[attr-defined]
            own, max_examples=dev_examples(own.max_examples)
        )


def pytest_report_header(config):  # type: ignore[no-untyped-def]
    if PROFILE == "dev":
        return (
            f"hypothesis profile: dev (a tenth of each test's examples, >= {DEV_FLOOR}; "
            "HYPOTHESIS_PROFILE=thorough or tox -e thorough for the full counts)"
        )
    return f"hypothesis profile: {PROFILE}"


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Mark every test that exercises vLLM, SGLang or smg (by module or parameter) as `framework`.

    Framework tox envs run ``-m framework``: the rest already ran in `core`.
    """
    import pytest

    for item in items:
        text = item.nodeid.lower()
        if "vllm" in text or "sglang" in text or "smg" in text:
            item.add_marker(pytest.mark.framework)
    _scale_examples(items)

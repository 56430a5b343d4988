"""Shared test helpers: a tiny user parser package importable as `python:` specs."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
# `tests/_userparsers.py` is loaded by `python:_userparsers:Class` specs.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Mark every test that exercises vLLM or SGLang (by module or parameter) as `framework`.

    Framework tox envs run ``-m framework``: the rest already ran in `core`.
    """
    import pytest

    for item in items:
        text = item.nodeid.lower()
        if "vllm" in text or "sglang" in text:
            item.add_marker(pytest.mark.framework)

"""Shared test helpers: a tiny user parser package importable as `python:` specs."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
# `tests/_userparsers.py` is loaded by `python:_userparsers:Class` specs.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

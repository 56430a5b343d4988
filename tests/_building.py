"""Build a parser under test: a builtin failure fails, a framework skips only when it cannot run here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from parsebridge.conformance.runner import unsupported_reason

T = TypeVar("T")


def build_or_skip(backend: str, what: str, build: Callable[[], T]) -> T:
    """`build()`, or a skip when a framework backend cannot run it here; every other raise propagates.

    Builtin parsers ship with parsebridge: any exception building one is a
    failure. A framework's parser may be absent (framework not installed, no
    such parser in this release, needs a model): those skip, naming why.
    """
    if backend == "builtin":
        return build()
    try:
        return build()
    except Exception as exc:
        why = unsupported_reason(exc)
        if why is None:
            raise
        pytest.skip(f"{backend} cannot build {what}: {why}")


def cached_build(cache: dict[Any, Any], key: Any, backend: str, what: str, build: Callable[[], T]) -> T:
    """`build_or_skip` once per key: a skip or a failure is re-raised for every later test of the key."""
    if key not in cache:
        try:
            cache[key] = build_or_skip(backend, what, build)
        except BaseException as exc:  # skip (pytest's Skipped) or fault: the same for each test of the key
            cache[key] = exc
    got = cache[key]
    if isinstance(got, BaseException):
        raise got
    return got  # type: ignore[no-any-return]

"""A framework's native reasoning→tool chain is under the same failure policy as single parsers."""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.adapters import registry


@pytest.fixture
def chainfw(monkeypatch):
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "chainfw", "_userparsers:ChainFrameworkBackend")
    registry._reset_caches()
    yield
    registry._reset_caches()


def test_native_chain_errors_are_typed(chainfw):
    pipe = pb.get_pipeline("chainfw:colon", "chainfw:qwen25")
    assert pipe.parse("fine").content == "fine"
    with pytest.raises(pb.BackendError) as info:
        pipe.parse("boom!")
    assert info.value.backend == "chainfw" and isinstance(info.value.__cause__, KeyError)


def test_native_chain_fallback_keeps_every_character(chainfw):
    pipe = pb.get_pipeline("chainfw:colon", "chainfw:qwen25", on_error="fallback")
    assert pipe.parse("boom!").content == "boom!"
    s = pipe.stream()
    assert s.feed("abc").content == "ab"
    assert s.feed("x!y").content == "cx!y"  # held "c", then the failing chunk, as content
    assert s.feed("z").content == "z"
    assert s.finish().content == "abcx!yz"


def test_native_chain_max_held(chainfw):
    pipe = pb.get_pipeline("chainfw:colon", "chainfw:qwen25", max_held=4, on_error="fallback")
    s = pipe.stream()
    assert s.feed("<ab").content == ""  # held: within the limit
    assert s.feed("cdef").content == "<abcdef"  # over it: released as content
    assert s.finish().content == "<abcdef"
    strict = pb.get_pipeline("chainfw:colon", "chainfw:qwen25", max_held=4).stream()
    with pytest.raises(pb.BufferLimitError):
        strict.feed("<abcdef")

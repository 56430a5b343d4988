"""A finished stream is freed when the caller drops it, not at the next garbage collection.

A stream whose per-chunk closure refers back to the object holding it is a
reference cycle: every finished request then keeps its framework parser (and
everything that parser holds) alive until the collector runs, and the
collector has more to walk on every request. These count what the cycle
collector finds after a batch of requests: it must not grow with the batch.
"""

from __future__ import annotations

import gc
import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import parsebridge as pb

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
REASONING_CHUNKS = ["<think>", "Paris", " is", " warm", "</think>", "It", " is", " 21", "°C."]
TOOL_CHUNKS = [
    "Sure. ",
    "<tool_call>",
    '{"name": "get_weather", ',
    '"arguments": {"city": "Paris"}}',
    "</tool_call>",
]
REQUESTS = 20


def _installed(framework: str) -> bool:
    return importlib.util.find_spec(framework) is not None


def _needs(spec: str) -> Any:
    framework = spec.partition(":")[0]
    if framework in ("vllm", "sglang") and not _installed(framework):
        return pytest.mark.skip(reason=f"{framework} is not installed (parsebridge install-framework all)")
    return ()


CASES: list[tuple[str, str, list[str]]] = [
    ("reasoning", "sglang:qwen3", REASONING_CHUNKS),
    ("reasoning", "vllm:qwen3", REASONING_CHUNKS),
    ("reasoning", "vllm:deepseek_r1", REASONING_CHUNKS),
    ("tool", "sglang:qwen25", TOOL_CHUNKS),
    ("tool", "vllm:hermes", TOOL_CHUNKS),
    ("pipeline", "sglang:qwen3+sglang:qwen25", REASONING_CHUNKS + TOOL_CHUNKS),
    ("pipeline", "vllm:qwen3+vllm:hermes", REASONING_CHUNKS + TOOL_CHUNKS),
    ("tool", "builtin:hermes", TOOL_CHUNKS),
    ("reasoning", "builtin:qwen3", REASONING_CHUNKS),
]


def _parser(kind: str, spec: str) -> Any:
    if kind == "reasoning":
        return pb.get_reasoning_parser(spec)
    if kind == "tool":
        return pb.get_tool_parser(spec, tools=TOOLS)
    reasoning, tool = spec.split("+")
    return pb.get_pipeline(reasoning, tool, tools=TOOLS)


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("kind", "spec", "chunks"),
    [pytest.param(k, s, c, id=s, marks=_needs(s.split("+")[0])) for k, s, c in CASES],
)
def test_finished_streams_leave_no_cyclic_garbage(
    kind: str, spec: str, chunks: list[str], collector_paused: None
) -> None:
    parser = _parser(kind, spec)

    def request() -> None:
        stream = parser.stream()
        for chunk in chunks:
            stream.feed(chunk)
        stream.finish()

    request()  # first use: lazy set-up (tokenizers, caches) is not per request
    gc.collect()
    for _ in range(REQUESTS):
        request()
    found = gc.collect()
    # Before the fix every request left 24–80 objects in cycles; a handful in total is
    # something else (a framework's one-off), not a per-request leak.
    assert found < REQUESTS, f"{spec}: {found} objects in reference cycles after {REQUESTS} streams"


def test_the_check_sees_a_stream_that_is_a_cycle(collector_paused: None) -> None:
    """The counting above can fail: a stream holding a closure over itself is found."""

    class Cyclic:
        def __init__(self) -> None:
            self.feed: Callable[[], Cyclic] = lambda: self

    gc.collect()
    for _ in range(REQUESTS):
        Cyclic()
    assert gc.collect() >= REQUESTS

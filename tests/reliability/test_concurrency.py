"""Parser objects are shared by many requests at once; streams are per request.

64 concurrent streams (threads, then asyncio tasks interleaving their
chunks on one event loop) over ONE parser object per backend must give
exactly what the same streams give one after another.
"""

from __future__ import annotations

import asyncio
import importlib.util
from concurrent.futures import ThreadPoolExecutor

import pytest

import parsebridge as pb

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]


def _hermes(i: int) -> str:
    calls = "".join(
        f'<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "City {i}-{k} é", "days": {k}}}}}\n</tool_call>\n'
        for k in range(i % 3)
    )
    return f"Request {i}: checking.\n{calls}" + ("Done." if i % 2 else "")


def _reasoning(i: int) -> str:
    return f"<think>Request {i} needs {'a' * (i % 7)} thought.</think>Answer {i}."


CASES = [
    ("builtin", "tool", "builtin:hermes", _hermes),
    ("builtin", "reasoning", "builtin:qwen3", _reasoning),
    ("vllm", "tool", "vllm:hermes", _hermes),
    ("vllm", "reasoning", "vllm:qwen3", _reasoning),
    ("sglang", "tool", "sglang:qwen25", _hermes),
    ("sglang", "reasoning", "sglang:qwen3", _reasoning),
]


def _params():
    for backend, kind, spec, make in CASES:
        marks = []
        if backend != "builtin":
            marks.append(pytest.mark.framework)
            if importlib.util.find_spec(backend) is None:
                marks.append(pytest.mark.skip(reason=f"{backend} is not installed"))
        yield pytest.param(kind, spec, make, id=spec, marks=marks)


def _parser(kind: str, spec: str):
    return pb.get_tool_parser(spec, tools=TOOLS) if kind == "tool" else pb.get_reasoning_parser(spec)


def _chunks(text: str, i: int) -> list[str]:
    size = 1 + i % 5
    return [text[k : k + size] for k in range(0, len(text), size)]


def _key(result) -> tuple:
    calls = [(c.name, c.arguments, c.invalid_arguments) for c in getattr(result, "tool_calls", [])]
    return (getattr(result, "reasoning", None), result.content, calls)


def _run(parser, i: int, make) -> tuple:
    stream = parser.stream()
    for chunk in _chunks(make(i), i):
        stream.feed(chunk)
    return _key(stream.finish())


N = 64


@pytest.mark.parametrize(("kind", "spec", "make"), list(_params()))
def test_threads_share_one_parser(kind, spec, make):
    parser = _parser(kind, spec)
    sequential = [_run(parser, i, make) for i in range(N)]
    oneshot = [_key(parser.parse(make(i))) for i in range(N)]
    with ThreadPoolExecutor(max_workers=N) as pool:
        concurrent = list(pool.map(lambda i: _run(parser, i, make), range(N)))
        concurrent_oneshot = list(pool.map(lambda i: _key(parser.parse(make(i))), range(N)))
    assert concurrent == sequential
    assert concurrent_oneshot == oneshot


@pytest.mark.parametrize(("kind", "spec", "make"), list(_params()))
def test_asyncio_tasks_interleave_streams_on_one_parser(kind, spec, make):
    parser = _parser(kind, spec)
    sequential = [_run(parser, i, make) for i in range(N)]

    async def one(i: int) -> tuple:
        stream = parser.stream()
        for chunk in _chunks(make(i), i):
            stream.feed(chunk)
            await asyncio.sleep(0)  # let every other request advance between chunks
        return _key(stream.finish())

    async def main() -> list[tuple]:
        return list(await asyncio.gather(*(one(i) for i in range(N))))

    assert asyncio.run(main()) == sequential

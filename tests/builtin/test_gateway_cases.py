"""Outputs where builtin read differently from vLLM and SGLang (and from other gateways' tests).

Each case is a model-style output and what each convention reads from it, one-shot and streamed
per approximate token, at 5 and 20 tokens and at seeded random splits.
"""

from __future__ import annotations

from typing import Any

import pytest
from _streaming import assert_streams_like_oneshot, norm, random_chunkings

import parsebridge as pb
from parsebridge.conformance.chunking import approximate_tokens

Reading = tuple[str | None, list[tuple[str, dict[str, Any], str | None]]]


def _token_chunkings(text: str) -> list[list[str]]:
    tokens = approximate_tokens(text)
    groups = [["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)] for k in (1, 5, 20)]
    return [*groups, *random_chunkings(text, seed=len(text))]


def _read(spec: str, conventions: str, text: str) -> tuple[Reading, str | None]:
    parser = pb.get_tool_parser(spec, conventions=conventions)
    result = assert_streams_like_oneshot(parser, text, _token_chunkings(text))
    return norm(result), result.dropped


#: A Hermes block that never closes, prose after its call object: the model went on writing
#: inside the block, so the object is no finished call (vLLM and SGLang: the whole output is content).
HERMES_PROSE_IN_OPEN_BLOCK = (
    "Checking the forecast.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Lyon"}}\n'
    "I will report back once it returns."
)
HERMES_CALL_THEN_PROSE_IN_OPEN_BLOCK = (
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Lyon"}} and that is all'
)
SECOND_BLOCK = HERMES_CALL_THEN_PROSE_IN_OPEN_BLOCK[
    HERMES_CALL_THEN_PROSE_IN_OPEN_BLOCK.index("\n<tool_call>", 10) :
]


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_hermes_prose_in_an_open_block_is_no_call(conventions: str) -> None:
    reading, dropped = _read("builtin:hermes", conventions, HERMES_PROSE_IN_OPEN_BLOCK)
    assert reading == (HERMES_PROSE_IN_OPEN_BLOCK, [])
    assert dropped is None


def test_hermes_prose_in_an_open_block_after_a_call() -> None:
    time_call = ("get_time", {"zone": "CET"}, None)
    reading, dropped = _read("builtin:hermes", "lossless", HERMES_CALL_THEN_PROSE_IN_OPEN_BLOCK)
    assert reading == (SECOND_BLOCK, [time_call])
    reading, dropped = _read("builtin:hermes", "servers", HERMES_CALL_THEN_PROSE_IN_OPEN_BLOCK)
    assert reading == (None, [time_call])
    assert dropped == SECOND_BLOCK


@pytest.mark.parametrize("tail", ["", "\n", "\n  \n"])
def test_hermes_open_block_whitespace_after_the_object_is_a_call(tail: str) -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"}}' + tail
    for conventions in ("servers", "lossless"):
        reading, _ = _read("builtin:hermes", conventions, text)
        assert reading == (None, [("get_weather", {"city": "Lyon"}, None)])

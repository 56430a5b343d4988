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
from parsebridge.formats import deepseek_v4, deepseek_v32, deepseek_v41

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


DSML_TAGS = {
    "deepseek_v32": deepseek_v32.TAGS,
    "deepseek_v4": deepseek_v4.TAGS,
    "deepseek_v41": deepseek_v41.TAGS,
}


def _dsml_json_body(tags: deepseek_v32.DsmlTags) -> str:
    """An invoke whose body is the arguments as one JSON object, no parameter elements."""
    return (
        "I'll look that up.\n\n"
        f"{tags.calls_begin}\n"
        f'{tags.invoke_open} name="get_weather">\n{{"city": "Hangzhou", "days": 3}}\n{tags.invoke_close}\n'
        f'{tags.invoke_open} name="get_time">\n  {{}}  \n{tags.invoke_close}\n'
        f"{tags.calls_end}"
    )


@pytest.mark.parametrize("family", sorted(DSML_TAGS))
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_dsml_invoke_body_as_a_json_object(family: str, conventions: str) -> None:
    """SGLang reads such an invoke's arguments from the object; vLLM returns the call with none
    (and loses the object): builtin reads the object under both conventions."""
    text = _dsml_json_body(DSML_TAGS[family])
    reading, dropped = _read(f"builtin:{family}", conventions, text)
    assert reading == (
        "I'll look that up.\n\n",
        [("get_weather", {"city": "Hangzhou", "days": 3}, None), ("get_time", {}, None)],
    )
    assert not (dropped or "").strip()  # (under "servers", the layout between the section's tags)


@pytest.mark.parametrize("body", ['not json {"city": "Hangzhou"}', '{"city": "Hangzhou"} and more', "[1, 2]"])
def test_dsml_invoke_body_that_is_no_object_stays_text(body: str) -> None:
    tags = deepseek_v32.TAGS
    text = f'{tags.calls_begin}\n{tags.invoke_open} name="get_weather">\n{body}\n{tags.invoke_close}\n{tags.calls_end}'
    reading, _ = _read("builtin:deepseek_v32", "lossless", text)
    assert reading == ("\n" + body, [("get_weather", {}, None)])  # (stray text: content in place)

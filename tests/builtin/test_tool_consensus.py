"""Builtin tool parsers where vLLM 0.33 and SGLang 0.5.23 read calls that builtin used to leave in content.

Measured with the consensus check (``python -m parsebridge.conformance.consensus``);
each reading is builtin's own, checked streamed at random chunkings too.
"""

from __future__ import annotations

from typing import Any

import pytest
from _streaming import assert_streams_like_oneshot, norm, random_chunkings

import parsebridge as pb

W = '{"name": "get_weather", "parameters": {"city": "NYC"}}'
CALL = ("get_weather", {"city": "NYC"}, None)


def check(
    spec: str, text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]
) -> None:
    parser = pb.get_tool_parser(spec, conventions="lossless")
    result = assert_streams_like_oneshot(parser, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        # both frameworks read the call after prose (SGLang keeps the prose, vLLM drops it)
        ("Sure. <|python_tag|>" + W, "Sure. ", [CALL]),
        ("Sure. <|python_tag|>" + W + "; " + W, "Sure. ", [CALL, CALL]),
        (W + " then <|python_tag|>" + W, " then ", [CALL, CALL]),
        ("a <|python_tag|> print(1)", "a <|python_tag|> print(1)", []),  # code after the tag: content
        # a bare call object after prose: both frameworks read the second one of these
        (W + "\nAnd the time:\n" + W, "\nAnd the time:\n", [CALL, CALL]),
        ("Sure. " + W, "Sure. ", [CALL]),  # vLLM reads it; SGLang keeps it as text
        ('use {x} and {"a": 1} here', 'use {x} and {"a": 1} here', []),
    ],
)
def test_llama3_json_python_tag_after_prose_opens_calls(text: str, content: str, calls: list) -> None:
    check("builtin:llama3_json", text, content, calls)
    assert pb.get_tool_parser("builtin:llama3_json", conventions="lossless").has_tool_calls(text) == (
        "<|python_tag|>" in text or bool(calls)
    )


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        ("Sure: [get_weather(city='NYC')]", "Sure: ", [CALL]),
        ("text <|python_start|>[get_weather(city='NYC')]<|python_end|>", "text ", [CALL]),
        ("a [1] b [get_weather(city='NYC')] c", "a [1] b  c", [CALL]),
        ("see [note](link) and [x y]", "see [note](link) and [x y]", []),
    ],
)
def test_pythonic_calls_after_prose(text: str, content: str, calls: list) -> None:
    check("builtin:pythonic", text, content, calls)
    assert pb.get_tool_parser("builtin:pythonic", conventions="lossless").has_tool_calls(text) == bool(calls)


def test_cohere_single_action_object() -> None:
    # SGLang reads one call object in an action block (vLLM 0.33 reads no call at all there)
    text = '<|START_ACTION|>{"tool_name": "get_weather", "parameters": {"city": "NYC"}}<|END_ACTION|>'
    check("builtin:cohere", text, None, [CALL])
    not_a_call = '<|START_ACTION|>{"a": 1}<|END_ACTION|>'
    check("builtin:cohere", not_a_call, not_a_call, [])


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        ('<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "NYC"}}]</TOOLCALL>', None, [CALL]),
        (
            'Sure. <TOOLCALL>{"name": "get_weather", "arguments": {"city": "NYC"}}</TOOLCALL> ok',
            "Sure.  ok",
            [CALL],
        ),
        ("<TOOLCALL>not json</TOOLCALL>", "<TOOLCALL>not json</TOOLCALL>", []),
    ],
)
def test_nemotron_toolcall_family(text: str, content: str | None, calls: list) -> None:
    check("builtin:nemotron_deci", text, content, calls)
    assert pb.get_tool_parser("builtin:llama_nemotron_json", conventions="lossless").name == "nemotron_deci"


@pytest.mark.parametrize(
    ("text", "content", "calls"),
    [
        ("Sure. <|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'NYC'}}]", "Sure. ", [CALL]),
        ("<|tool_calls|>{'name': 'get_weather', 'parameters': {'city': 'NYC'}} done", " done", [CALL]),
        (
            "<|tool_calls|>[{'name': 'f', 'arguments': {'s': 'a]b', 'ok': True, 'n': None}}]",
            None,
            [("f", {"s": "a]b", "ok": True, "n": None}, None)],
        ),
        ("<|tool_calls|>[oops", "<|tool_calls|>[oops", []),
        ("<|tool_calls|>[{'name': 1}]", "<|tool_calls|>[{'name': 1}]", []),
        ("no calls <|tool_", "no calls <|tool_", []),
    ],
)
def test_sarashina_python_literal_calls(text: str, content: str | None, calls: list) -> None:
    check("builtin:sarashina", text, content, calls)
    assert pb.get_tool_parser("builtin:sarashina", conventions="lossless").has_tool_calls(text) == (
        "<|tool_calls|>" in text
    )


@pytest.mark.parametrize(
    "items",
    [
        ['{"name": "a", "arguments": {"x": "p\u2028q"}}', "{'name': 'é', 'arguments': {}}"],
        ['{"name": "a",\r\n "arguments": {"k": [1,\n 2]}}'],
    ],
    ids=["line-separator-in-a-string", "crlf-and-newlines"],
)
def test_sarashina_raw_text_is_each_item_verbatim(items: list[str]) -> None:
    """Each call's raw text is its item of the literal (ast's lines count Python's line ends only),
    streamed as one-shot: the CLI's `parse --stream` cuts it out by the stream's call spans."""
    from parsebridge.cli.stream_output import RawCalls

    text = "Hi <|tool_calls|>\n[" + ",\n ".join(items) + "]"
    parser = pb.get_tool_parser("builtin:sarashina")
    assert [c.raw_text for c in parser.parse(text).tool_calls] == items
    rec = RawCalls(parser.stream())
    for i in range(0, len(text), 3):
        rec.feed(text[i : i + 3])
    rec.flush()
    assert list(rec.texts) == items

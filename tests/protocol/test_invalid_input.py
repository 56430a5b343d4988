"""Text that is not a `str` is refused, typed, at every parse and every chunk, on every backend.

``parse(None)`` once came back as the content ``'None'`` (str() of the input, builtin) or as
nothing at all (SGLang), and a bytes chunk failed deep in a framework as a `BackendError`. Now
it is `InvalidInputError` — a `ParsebridgeError` and a `TypeError` — naming the type received,
before any parser or the failure policy sees it: the guard checks parses and the chunks of the
streams it wraps, and each stream it hands out as is (`guard_complete`) checks its own chunks.
One spec per distinct per-chunk path (builtin's machine, its two fast feeds, the guard's two,
vLLM's, SGLang's three, the served frameworks', llama.cpp's, the generic pipeline's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import parsebridge as pb
import parsebridge.protocol as protocol
from parsebridge.adapters import get_backend

NOT_TEXT = [None, b"<tool_call>", 3, ["a"]]
NOT_TEXT_IDS = ["None", "bytes", "int", "list"]
CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'

QWEN3_CODER = "<tool_call>\n<function=f>\n<parameter=x>\nsome text\n</parameter>\n</function>\n</tool_call>"
GPT_OSS = '<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"x": "some text"}<|call|>'
#: Spec → an output in its format (fed in pieces, a refused chunk between every two).
TOOL_SPECS = {
    "builtin:hermes": CALL,  # the builtin machine (`BuiltinToolStream.feed`), handed out as is
    "builtin:qwen3_coder": QWEN3_CODER,  # its tagged-values fast feed, inside a value
    "builtin:gpt_oss": GPT_OSS,  # its Harmony fast feed, inside a call's body
    "builtin:sarashina": CALL,  # a protocol stream: the guard's feed-and-record
    "python:_userparsers:CallLine": CALL,  # a user's parser: buffered, under the guard
    "vllm:hermes": CALL,
    "sglang:qwen25": CALL,
    "sglang:minimax-m3": CALL,  # SGLang's tool-only fused feed
    "dynamo:hermes": CALL,
    "smg:qwen": CALL,
}
REASONING_SPECS = [
    "builtin:deepseek_r1",  # the guard's plain feed
    "builtin:qwen3",
    "vllm:deepseek_r1",
    "sglang:deepseek-r1",  # SGLang's own reasoning stream
    "dynamo:deepseek_r1",
]
PIPELINES = [
    ("builtin:deepseek_r1", "builtin:hermes"),  # the generic chain
    (None, "builtin:hermes"),  # the generic chain, tool parser alone
    ("vllm:deepseek_r1", "vllm:hermes"),  # native chains, handed out as is
    ("sglang:deepseek-r1", "sglang:qwen25"),
    ("dynamo:deepseek_r1", "dynamo:hermes"),
]


def _made(make: Callable[[], Any]) -> Any:
    """`make()`, skipped when its backend is not installed here, or its release has no such parser
    (SGLang's minimax-m3 came after 0.4.10: the oldest-release env runs this file too)."""
    try:
        return make()
    except (pb.BackendNotInstalledError, pb.ServerUnavailableError, pb.UnknownParserError) as exc:
        pytest.skip(str(exc))


def _refused(value: object, call: Callable[[], Any], name: str) -> None:
    with pytest.raises(pb.InvalidInputError) as info:
        call()
    err = info.value
    assert isinstance(err, pb.ParsebridgeError) and isinstance(err, TypeError)
    assert err.received == type(value).__name__ and type(value).__name__ in str(err)
    assert str(err).startswith(f"{name}()")
    if isinstance(value, bytes):
        assert "decode" in str(err)


def _read(result: Any) -> tuple[Any, ...]:
    """What a stream's result says (its call ids aside: a stream may make new ones)."""
    calls = [(c.name, c.arguments) for c in getattr(result, "tool_calls", None) or ()]
    return result.content, getattr(result, "reasoning", None), calls


def _check_stream(parser: Any, value: object, text: str = CALL) -> None:
    """The stream refuses `value` as a chunk at every point of `text` and, having read nothing,
    ends as a stream never fed it does."""
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    clean = parser.stream()
    for piece in pieces:
        clean.feed(piece)
    stream = parser.stream()
    for piece in pieces:
        _refused(value, lambda: stream.feed(value), "stream.feed")
        stream.feed(piece)
    _refused(value, lambda: stream.feed(value), "stream.feed")
    assert _read(stream.finish()) == _read(clean.finish())


@pytest.mark.parametrize("value", NOT_TEXT, ids=NOT_TEXT_IDS)
@pytest.mark.parametrize("spec", TOOL_SPECS)
def test_a_tool_parser_refuses_what_is_not_text(spec: str, value: object) -> None:
    parser = _made(lambda: pb.get_tool_parser(spec))
    _refused(value, lambda: parser.parse(value), "parse")
    _refused(value, lambda: parser.parse_tool_calls(value), "parse")
    _refused(value, lambda: parser.has_tool_calls(value), "has_tool_calls")
    _check_stream(parser, value, TOOL_SPECS[spec])


@pytest.mark.parametrize("value", NOT_TEXT, ids=NOT_TEXT_IDS)
@pytest.mark.parametrize("spec", REASONING_SPECS)
def test_a_reasoning_parser_refuses_what_is_not_text(spec: str, value: object) -> None:
    parser = _made(lambda: pb.get_reasoning_parser(spec))
    _refused(value, lambda: parser.parse(value), "parse")
    _refused(value, lambda: parser.parse(value, reasoning_started=True), "parse")
    _refused(value, lambda: parser.has_reasoning(value), "has_reasoning")
    _check_stream(parser, value)


@pytest.mark.parametrize("value", [None, b"x"], ids=["None", "bytes"])
@pytest.mark.parametrize(("reasoning", "tool"), PIPELINES, ids=[f"{r}+{t}" for r, t in PIPELINES])
def test_a_pipeline_refuses_what_is_not_text(reasoning: str | None, tool: str, value: object) -> None:
    pipeline = _made(lambda: pb.get_pipeline(reasoning, tool))
    _refused(value, lambda: pipeline.parse(value), "parse")
    _check_stream(pipeline, value)


@pytest.mark.parametrize(
    "options", [{"on_error": "fallback"}, {"max_held": 1000}, {"on_error": "fallback", "max_held": 10}]
)
def test_the_failure_policy_does_not_turn_it_into_content(options: dict[str, Any]) -> None:
    """A usage error, not a parser's failure: "fallback" does not show ``str(None)`` as content,
    and the stream is not broken by it (the guard's slow path, under `max_held`, refuses it too)."""
    parser = pb.get_tool_parser("builtin:hermes", **options)
    _refused(None, lambda: parser.parse(None), "parse")
    _check_stream(parser, None)
    stream = parser.stream()
    stream.feed("a")
    _refused(b"b", lambda: stream.feed(b"b"), "stream.feed")
    assert not stream.broken and stream.finish().content == "a"


def test_a_str_subclass_is_text() -> None:
    class Text(str):
        pass

    assert pb.get_tool_parser("builtin:hermes").parse(Text(CALL)).tool_calls[0].name == "f"


@pytest.mark.framework
def test_a_llamacpp_stream_refuses_what_is_not_text() -> None:
    backend = get_backend("llamacpp")
    if not backend.is_available():
        pytest.skip(f"no llama.cpp harness: {backend.unavailable_reason()}")
    name = pb.parser_names("llamacpp", "tool")[0]
    parser = pb.get_tool_parser(f"llamacpp:{name}")
    _refused(None, lambda: parser.parse(None), "parse")
    _check_stream(parser, b"x")


def test_the_error_is_exported_like_the_others() -> None:
    assert "InvalidInputError" in pb.__all__ and "InvalidInputError" in protocol.__all__
    assert pb.InvalidInputError is protocol.InvalidInputError
    assert issubclass(pb.InvalidInputError, pb.ParsebridgeError) and issubclass(
        pb.InvalidInputError, TypeError
    )

"""The one-object stream of a request with only an SGLang reasoning parser (`SglangReasoningStream`).

It is handed out without the guard under on_error="raise", so it must do
what the guard did: type every error, keep the failing chunk as pending
text, refuse feed after finish, and lose nothing under the fallback policy.
SGLang's parser is made to fail by patching its class (the stream binds the
method when it is created).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("sglang", reason="SGLang is not installed (parsebridge install-framework sglang-latest)")

import parsebridge as pb
from parsebridge.adapters.sglang import _reasoning_stream
from parsebridge.adapters.sglang._reasoning_stream import SglangReasoningStream
from parsebridge.protocol import BackendError
from parsebridge.protocol.errors import StreamStateError

CHUNKS = ["<think>", "Paris", " is warm", "</think>", "It is", " 21°C."]


def _boom_on(monkeypatch: pytest.MonkeyPatch, word: str) -> None:
    """SGLang's `parse_stream_chunk` raises on a chunk containing `word`."""
    parser_cls = type(pb.get_reasoning_parser("sglang:qwen3").stream()._parser)
    original = parser_cls.parse_stream_chunk

    def failing(self: Any, text: str) -> Any:
        if word in text:
            raise RuntimeError(f"cannot parse {text!r}")
        return original(self, text)

    monkeypatch.setattr(parser_cls, "parse_stream_chunk", failing)


def _assembled(stream: Any) -> tuple[str | None, str | None]:
    result = stream.finish()
    return result.reasoning, result.content


def test_raise_policy_hands_out_the_one_object_stream() -> None:
    stream = pb.get_reasoning_parser("sglang:qwen3").stream()
    assert isinstance(stream, SglangReasoningStream)
    for chunk in CHUNKS:
        stream.feed(chunk)
    result = stream.finish()
    assert (result.reasoning, result.content) == ("Paris is warm", "It is 21°C.")
    assert result.block is not None and result.block.located
    assert (
        "".join(CHUNKS)[result.block.start_index : result.block.end_index] == "<think>Paris is warm</think>"
    )


@pytest.mark.parametrize("end_of_stream", ["last_chunk", "empty_chunk"])
def test_a_framework_error_is_typed_and_the_failing_chunk_stays_pending(
    monkeypatch: pytest.MonkeyPatch, end_of_stream: str
) -> None:
    _boom_on(monkeypatch, "BOOM")
    stream = pb.get_reasoning_parser("sglang:qwen3").stream(end_of_stream=end_of_stream)
    stream.feed("<think>")
    with pytest.raises(BackendError) as err:
        stream.feed("BOOM")
        stream.feed("after")  # "last_chunk": the held chunk goes through with the next feed
    assert (err.value.backend, err.value.call) == ("sglang", "parse_stream_chunk")
    assert "RuntimeError" in str(err.value)
    if end_of_stream == "last_chunk":
        assert stream.pending_text().endswith("BOOM")


def test_fallback_loses_no_text_when_sglang_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    _boom_on(monkeypatch, "BOOM")
    stream = pb.get_reasoning_parser("sglang:qwen3", on_error="fallback").stream()
    chunks = ["<think>", "a", "BOOM", "b", "</think>", "c"]
    for chunk in chunks:
        stream.feed(chunk)
    reasoning, content = _assembled(stream)
    shown = (reasoning or "") + (content or "")
    for piece in ("a", "BOOM", "b", "c"):
        assert piece in shown


def test_an_error_at_the_end_is_typed_as_the_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise ValueError("no block")

    monkeypatch.setattr(_reasoning_stream, "locate_reasoning", broken)
    stream = pb.get_reasoning_parser("sglang:qwen3").stream()
    for chunk in CHUNKS:
        stream.feed(chunk)
    with pytest.raises(BackendError) as err:
        stream.finish()
    assert (err.value.backend, err.value.call) == ("sglang", "stream.flush")


def test_life_cycle_after_the_end() -> None:
    stream = pb.get_reasoning_parser("sglang:qwen3").stream()
    for chunk in CHUNKS:
        stream.feed(chunk)
    last = stream.flush()
    assert last.content == " 21°C."
    again = stream.flush()
    assert (again.content, again.reasoning, again.tool_calls) == ("", "", [])
    assert stream.finished and stream.pending_text() == ""
    assert stream.finish().content == "It is 21°C."
    with pytest.raises(StreamStateError):
        stream.feed("more")


def test_a_stream_with_nothing_fed_ends_empty() -> None:
    for end_of_stream in ("last_chunk", "empty_chunk"):
        result = pb.get_reasoning_parser("sglang:qwen3").stream(end_of_stream=end_of_stream).finish()
        assert (result.reasoning, result.content, result.block) == (None, None, None)


def test_an_unknown_end_of_stream_is_refused() -> None:
    with pytest.raises((ValueError, BackendError)):
        pb.get_reasoning_parser("sglang:qwen3").stream(end_of_stream="eventually")

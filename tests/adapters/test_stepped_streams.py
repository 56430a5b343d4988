"""Framework streams handed out without a guard (`guard_complete`), and what that promises.

Under on_error="raise" with no `max_held`, the guard returns a stepped stream as
is: no wrapper object per request. The stream must then do what the guard did:
record itself, refuse feed after finish, and raise only parsebridge errors, also
from its own code at the end of the stream. A fake stepper stands in for a
framework session, so these run with no framework installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from parsebridge.adapters._stepped import SteppedPipelineStream, SteppedReasoningStream, SteppedToolStream
from parsebridge.policy.guard import GuardedPipeline, GuardedReasoningParser, GuardedToolParser
from parsebridge.protocol import BackendError, DeltaAccumulator, StreamDelta
from parsebridge.protocol.errors import StreamStateError
from parsebridge.protocol.models import make_delta


class FakeStepper:
    """Everything fed is reasoning; "BOOM" in a chunk fails like a framework call."""

    spec = ("fake", "fake-parser")

    def __init__(self) -> None:
        self.text_seen: list[str] = []
        self.closed = False
        self.acc: DeltaAccumulator | None = None

    def attach(self, acc: DeltaAccumulator) -> Any:
        self.acc = acc
        return self.feed

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if self.closed:
            raise StreamStateError("closed")
        if "BOOM" in text:
            raise BackendError("fake", "fake-parser", "parse_stream_chunk", "boom")
        self.text_seen.append(text)
        assert self.acc is not None
        self.acc.reasoning_parts.append(text)
        return make_delta("", text)

    def flush(self) -> StreamDelta:
        self.closed = True
        return make_delta()

    def pending_text(self) -> str:
        return ""


class FakeParser:
    backend = "fake"
    name = "fake-parser"

    def __init__(self, markers: Any = lambda: ("<think>", "</think>")) -> None:
        self.markers = markers

    def stream(self, **_: Any) -> SteppedReasoningStream:
        return SteppedReasoningStream(FakeStepper(), self.markers)


class FakeToolParser:
    backend, name = "fake", "fake-parser"

    def stream(self, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(FakeStepper())


class FakePipeline:
    specs = ("fake:r", "fake:t")

    def stream(self, **_: Any) -> SteppedPipelineStream:
        return SteppedPipelineStream(FakeStepper(), lambda: ("<think>", "</think>"))


def test_raise_policy_hands_the_stepped_stream_out_as_is() -> None:
    for guard, cls in (
        (GuardedReasoningParser(FakeParser(), "raise"), SteppedReasoningStream),  # type: ignore[arg-type]
        (GuardedToolParser(FakeToolParser(), "raise"), SteppedToolStream),  # type: ignore[arg-type]
        (GuardedPipeline(FakePipeline(), "raise"), SteppedPipelineStream),
    ):
        stream = guard.stream()
        assert type(stream) is cls and not stream.broken
        assert stream.feed("abc").reasoning == "abc"
        stream.finish()
        with pytest.raises(StreamStateError):
            stream.feed("more")


@pytest.mark.parametrize("options", [{"on_error": "fallback"}, {"on_error": "raise", "max_held": 100}])
def test_other_policies_keep_the_guard(options: dict[str, Any]) -> None:
    on_error = options.pop("on_error")
    stream = GuardedReasoningParser(FakeParser(), on_error, **options).stream()  # type: ignore[arg-type]
    assert not isinstance(stream, SteppedReasoningStream)
    if on_error == "fallback":
        stream.feed("why")
        assert stream.feed("BOOM").content == "BOOM" and stream.broken
        result = stream.finish()
        assert result.reasoning == "why" and result.content == "BOOM"  # nothing lost


def test_a_failure_in_the_streams_own_end_is_typed() -> None:
    def broken_markers() -> tuple[str | None, str | None]:
        raise KeyError("markers")

    stream = GuardedReasoningParser(FakeParser(broken_markers), "raise").stream()  # type: ignore[arg-type]
    stream.feed("abc")
    with pytest.raises(BackendError) as info:
        stream.finish()
    assert info.value.call == "stream.flush" and isinstance(info.value.__cause__, KeyError)
    assert "fake-parser" in str(info.value)


def test_a_framework_error_passes_through_typed_under_raise() -> None:
    stream = GuardedReasoningParser(FakeParser(), "raise").stream()  # type: ignore[arg-type]
    with pytest.raises(BackendError) as info:
        stream.feed("BOOM")
    assert info.value.call == "parse_stream_chunk"

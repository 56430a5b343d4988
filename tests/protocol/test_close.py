"""`close()` and ``with`` on every parser and pipeline: a no-op where nothing is owned, the worker
process of a ``timeout=`` parser stopped, a pipeline's two parsers both closed."""

from __future__ import annotations

import os
import time

import pytest

import parsebridge as pb
from parsebridge.protocol import Pipeline, ReasoningParserBase, ReasoningParseResult

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def test_a_parser_or_pipeline_that_owns_nothing_closes_as_a_no_op() -> None:
    with pb.get_tool_parser("builtin:hermes") as tp, pb.get_reasoning_parser("builtin:qwen3") as rp:
        assert tp.parse(CALL).tool_calls[0].name == "f"
        assert rp.parse("a</think>b").content == "b"
    assert tp.parse(CALL).tool_calls  # still usable: nothing was owned, nothing was taken away
    with pb.get_pipeline("builtin:qwen3", "builtin:hermes") as pipe:
        assert pipe.parse("why</think>" + CALL).tool_calls[0].name == "f"
    pipe.close()  # twice is fine


def test_a_timeout_parser_stops_its_worker_at_the_end_of_with() -> None:
    with pb.get_tool_parser("builtin:hermes", timeout=60) as tp:
        assert tp.parse(CALL).tool_calls[0].name == "f"
        pid = tp.worker._server.launcher.pid
        os.kill(pid, 0)  # running
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the worker outlived its parser's with block")


def test_a_pipeline_closes_both_of_its_parsers() -> None:
    closed: list[str] = []

    class Mine(ReasoningParserBase):
        def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
            return ReasoningParseResult(content=text)

        def close(self) -> None:
            closed.append(self.name)

    with Pipeline(Mine(), None) as pipe:
        pipe.parse("x")
    assert closed == ["Mine"]


def test_a_stream_left_open_across_close_is_refused_by_name() -> None:
    """Before: the next feed went to a fresh worker that never opened that stream, and failed as
    `BackendError ... raised in feed: KeyError: 1`."""
    tp = pb.get_tool_parser("builtin:hermes", timeout=60)
    try:
        stream = tp.stream()
        stream.feed("Sure. <tool_")
        tp.close()
        with pytest.raises(pb.StreamStateError, match="closed while this stream was open"):
            stream.feed('call>{"name": "f", "arguments": {}}</tool_call>')
        fresh = tp.stream()  # the parser itself goes on with a new worker
        fresh.feed(CALL)
        assert fresh.finish().tool_calls[0].name == "f"
    finally:
        tp.close()

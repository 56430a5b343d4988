"""`has_tool_calls` on a pipeline (`pb.get_pipeline`): the tool parsers' Dynamo method, with the
same meaning (the text holds, or starts, a tool call) for the calls the pipeline would read, i.e.
in what its reasoning parser leaves as content. A pipeline had no such method (AttributeError)."""

from __future__ import annotations

from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters import registry
from parsebridge.adapters._stepped import FrameworkPipeline
from parsebridge.policy.guard import GuardedPipeline

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_pipeline_says_whether_its_tool_parser_would_read_a_call(on_error: str) -> None:
    pipe = pb.get_pipeline("builtin:deepseek_r1", "builtin:hermes", on_error=on_error)
    tp = pb.get_tool_parser("builtin:hermes")
    assert pipe.has_tool_calls(f"Paris.</think>{CALL}") is True
    assert pipe.has_tool_calls("Paris.</think>It is sunny.") is False
    assert pipe.has_tool_calls('Paris.</think><tool_call>{"na') is True  # the start, as a tool parser's
    # A call written inside the reasoning is reasoning: the tool parser alone would say True.
    inside = f"I could write {CALL} but will not.</think>It is sunny."
    assert tp.has_tool_calls(inside) is True
    assert pipe.has_tool_calls(inside) is False
    assert pipe.parse(inside).tool_calls == []
    # The pipeline's start state holds: started=False reads the call as content, so it counts.
    outside = pb.get_pipeline("builtin:deepseek_r1", "builtin:hermes", reasoning_started=False)
    assert outside.has_tool_calls(CALL) is True
    assert pipe.has_tool_calls(CALL) is False  # deepseek_r1 starts inside reasoning


def test_a_pipeline_without_a_tool_parser_has_no_calls_and_one_without_reasoning_is_its_tool_parser() -> None:
    assert pb.get_pipeline("builtin:deepseek_r1").has_tool_calls(f"</think>{CALL}") is False
    tools_only = pb.get_pipeline(tool="builtin:hermes")
    assert tools_only.has_tool_calls(CALL) is True
    assert tools_only.has_tool_calls("no call") is False


def test_a_pipeline_refuses_text_that_is_not_text() -> None:
    with pytest.raises(pb.InvalidInputError):
        pb.get_pipeline("builtin:deepseek_r1", "builtin:hermes").has_tool_calls(None)  # type: ignore[arg-type]


class _OneCallChain(FrameworkPipeline):
    """A framework's own chain (no reasoning/tools parser objects): a call wherever "CALL" is."""

    backend = "fakefw"

    def _open(self, tools: Any, options: dict[str, Any]) -> None:
        pass

    def parse(self, text: str, *, reasoning_started: bool | None = None, **options: Any) -> pb.ParseResult:
        if "!" in text:
            raise KeyError("native chain bug")
        calls = [pb.ToolCall.from_arguments_text("f", "{}")] if "CALL" in text else []
        return pb.ParseResult(content=None if calls else text, tool_calls=calls)


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_native_chain_says_what_its_parse_reads(on_error: str) -> None:
    pipe = GuardedPipeline(_OneCallChain("r", "t"), on_error)
    assert pipe.has_tool_calls("CALL") is True
    assert pipe.has_tool_calls("nothing") is False
    if on_error == "raise":
        with pytest.raises(pb.BackendError):
            pipe.has_tool_calls("boom!")
    else:
        assert pipe.has_tool_calls("boom!") is False


@pytest.fixture
def chainfw(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "chainfw", "_userparsers:ChainFrameworkBackend")
    registry._reset_caches()
    yield
    registry._reset_caches()


def test_a_native_chain_of_its_own_shape_is_asked_through_its_parse(chainfw: None) -> None:
    """A backend's `create_pipeline` may return any object with `parse`/`stream` (no has_tool_calls)."""
    pipe = pb.get_pipeline("chainfw:colon", "chainfw:qwen25", on_error="fallback")
    assert pipe.has_tool_calls("fine") is False
    assert pipe.has_tool_calls("boom!") is False

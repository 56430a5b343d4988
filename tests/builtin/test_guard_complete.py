"""Builtin tool streams are handed out without a guard under on_error="raise" (`guard_complete`).

The stream must then do what the guard did: record every delta itself, refuse
feed after finish, and raise only parsebridge errors, a failure of its machine
typed as the guard types it. Under "fallback" or `max_held` the guard is still
around it and behaves as before.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters.builtin.engines.scan import BuiltinToolStream
from parsebridge.policy.guarded_streams import GuardedToolStream
from parsebridge.protocol.errors import StreamStateError

TEXT = 'Hi.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get<｜tool▁sep｜>{"a": "b c"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'


def _boom(self: Any) -> bool:
    raise KeyError("boom")


def test_raise_policy_hands_the_builtin_stream_out_as_is() -> None:
    stream = pb.get_tool_parser("builtin:deepseek_v3", conventions="lossless").stream()
    assert isinstance(stream, BuiltinToolStream) and not stream.broken
    shown = [stream.feed(TEXT[i : i + 3]) for i in range(0, len(TEXT), 3)]
    result = stream.finish()
    assert "".join(d.content for d in shown) == result.content == "Hi."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get", {"a": "b c"})]
    assert stream.accumulator.arguments_text(0) == '{"a": "b c"}'
    with pytest.raises(StreamStateError):
        stream.feed("more")


@pytest.mark.parametrize("kwargs", [{"on_error": "fallback"}, {"max_held": 1000}])
def test_other_policies_keep_the_guard(kwargs: dict[str, Any]) -> None:
    stream = pb.get_tool_parser("builtin:deepseek_v3", **kwargs).stream()
    assert isinstance(stream, GuardedToolStream)
    for i in range(0, len(TEXT), 5):
        stream.feed(TEXT[i : i + 5])
    result = stream.finish()
    assert result.content == "Hi." and result.tool_calls[0].arguments == {"a": "b c"}


def test_a_failing_machine_raises_typed_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = pb.get_tool_parser("builtin:hermes", conventions="lossless")
    stream = parser.stream()
    stream.feed("plain ")
    holding = parser.stream()
    holding.feed("<tool_")  # a marker's start held: the end of output steps the machine
    monkeypatch.setattr(type(stream), "_step", _boom)
    stream.feed("content")  # the in-place content path takes no step
    with pytest.raises(pb.BackendError) as info:
        stream.feed("<tool_call>")
    err = info.value
    assert (err.backend, err.parser, err.call) == ("builtin", "hermes", "stream.feed")
    assert isinstance(err.__cause__, KeyError)
    with pytest.raises(pb.BackendError) as info:
        holding.finish()
    assert info.value.call == "stream.flush" and isinstance(info.value.__cause__, KeyError)
    assert parser.stream().finish().content is None  # at rest: the end of output takes no step
    with pytest.raises(pb.BackendError) as info:
        parser.parse("x")
    assert info.value.call == "parse" and isinstance(info.value.__cause__, KeyError)


def test_fallback_still_releases_the_text(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    stream = pb.get_tool_parser("builtin:hermes", on_error="fallback").stream()
    assert stream.feed("a ").content == "a "
    stream.feed("<tool_")
    monkeypatch.setattr(BuiltinToolStream, "_feed", lambda self, text, ids: _boom(self))
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        assert stream.feed("call>x").content == "<tool_call>x"
    assert stream.broken and stream.finish().content == "a <tool_call>x"

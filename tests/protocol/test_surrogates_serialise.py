"""A lone surrogate (half of a UTF-16 pair) a parser kept serialises: `model_dump_json` writes it as
its JSON escape, where pydantic's own writer raised (UTF-8 cannot encode it). Parsers keep one as
every character of the output: given in the text, or decoded from a JSON escape the model wrote."""

from __future__ import annotations

import json
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.protocol.surrogates import dumped_json

CALL_WITH_ESCAPE = r'<tool_call>{"name": "f", "arguments": {"a": "\ud800 x"}}</tool_call>'


def _round_trips(model: Any, **kwargs: Any) -> Any:
    text = model.model_dump_json(**kwargs)
    text.encode("utf-8")  # writable anywhere
    data = json.loads(text)
    assert data == model.model_dump(mode="json")  # the same value, every character as it was
    return data


def test_a_tool_result_with_a_lone_surrogate_in_the_text_serialises() -> None:
    result = pb.get_tool_parser("builtin:hermes").parse("hi \ud800 " + CALL_WITH_ESCAPE)
    assert result.content == "hi \ud800 "  # kept, as given
    data = _round_trips(result)
    assert data["content"] == "hi \ud800 "
    assert data["tool_calls"][0]["arguments"] == {"a": "\ud800 x"}


def test_a_lone_surrogate_from_a_json_escape_in_all_ascii_text_serialises() -> None:
    result = pb.get_tool_parser("builtin:hermes").parse(CALL_WITH_ESCAPE)
    assert result.tool_calls[0].arguments == {"a": "\ud800 x"}
    assert "\\ud800" in result.model_dump_json()
    assert _round_trips(result.tool_calls[0], indent=2)["arguments"] == {"a": "\ud800 x"}


def test_reasoning_results_and_stream_deltas_serialise() -> None:
    result = pb.get_reasoning_parser("builtin:deepseek-r1").parse("<think>\udfff</think>x")
    assert _round_trips(result)["reasoning"] == "\udfff"
    assert _round_trips(result.block)["content"] == "\udfff"  # a slotted model
    stream = pb.get_reasoning_parser("builtin:deepseek-r1").stream()
    deltas = [stream.feed(c) for c in ("<think>a\ud800", "b</think>")]
    assert "".join(_round_trips(d).get("reasoning") or "" for d in deltas) == "a\ud800b"


def test_other_serialisation_errors_are_not_hidden() -> None:
    call = pb.ToolCall(name="f", arguments={"a": object()})
    with pytest.raises(ValueError, match="Unable to serialize"):
        call.model_dump_json()


@pytest.mark.parametrize("kwargs", [{}, {"indent": 2}, {"exclude_none": True}, {"ensure_ascii": True}])
def test_the_escaped_json_is_what_pydantic_writes_where_it_can(kwargs: dict[str, Any]) -> None:
    """The fallback's layout is pydantic's: a text without a lone surrogate, written both ways."""
    result = pb.get_tool_parser("builtin:hermes").parse(
        'é <tool_call>{"name": "f", "arguments": {"a": [1]}}</tool_call>'
    )

    def refuse() -> str:
        raise ValueError("Error serializing to JSON: surrogates not allowed")

    assert dumped_json(refuse, result.model_dump, kwargs) == result.model_dump_json(**kwargs)

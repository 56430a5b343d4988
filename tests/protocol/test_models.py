import json

import pytest

from parsebridge import (
    DeltaAccumulator,
    ParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParseResult,
    parse_arguments,
)


def test_tool_call_openai_shape_has_json_string_arguments():
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Zürich", "n": 2})
    wire = call.to_openai()
    assert wire["type"] == "function"
    assert wire["function"]["name"] == "get_weather"
    assert isinstance(wire["function"]["arguments"], str)
    assert json.loads(wire["function"]["arguments"]) == {"city": "Zürich", "n": 2}


@pytest.mark.parametrize("text", ['{"a": ', "[1, 2]", "not json", '"str"'])
def test_invalid_arguments_are_kept_verbatim_and_flagged(text):
    call = ToolCall.from_arguments_text("f", text)
    assert call.arguments == {}
    assert call.invalid_arguments == text
    assert not call.valid
    assert call.to_openai()["function"]["arguments"] == text


def test_parse_arguments_empty_is_empty_object():
    assert parse_arguments("  ") == ({}, None)
    assert parse_arguments('{"x": [1]}') == ({"x": [1]}, None)


def test_models_round_trip_through_json():
    result = ParseResult(reasoning="r", content="c", tool_calls=[ToolCall(name="f", arguments={"a": 1})])
    again = ParseResult.model_validate_json(result.model_dump_json())
    assert again == result
    msg = result.to_openai_message()
    assert msg["reasoning_content"] == "r" and msg["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    assert result.finish_reason == "tool_calls"
    assert ParseResult(content="x").finish_reason == "stop"


def test_tool_parse_result_message_omits_tool_calls_when_none():
    assert ToolParseResult(content="hi").to_openai_message() == {"role": "assistant", "content": "hi"}


def test_delta_openai_shape_first_and_later_fragments():
    first = ToolCallDelta(index=0, id="call_9", name="f").to_openai()
    assert first == {
        "index": 0,
        "id": "call_9",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    later = ToolCallDelta(index=0, arguments='{"a"').to_openai()
    assert later == {"index": 0, "function": {"arguments": '{"a"'}}
    assert StreamDelta().to_openai() == {}
    assert not StreamDelta()
    assert StreamDelta(content="x")


def test_accumulator_assembles_like_a_client():
    acc = DeltaAccumulator()
    acc.add(StreamDelta(content="Hi "))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=0, id="c0", name="f", arguments='{"a"')]))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=0, arguments=": 1}")]))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=1, id="c1", name="g")]))
    calls = acc.tool_calls()
    assert acc.content == "Hi "
    assert [(c.id, c.name, c.arguments) for c in calls] == [("c0", "f", {"a": 1}), ("c1", "g", {})]
    assert acc.anomalies == []


def test_accumulator_flags_protocol_breaches():
    acc = DeltaAccumulator()
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=0, id="a", name="f")]))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=0, id="b", name="f")]))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=1, arguments="{}")]))
    acc.tool_calls()
    text = " | ".join(acc.anomalies)
    assert "id changed" in text and "neither id nor name" in text and "never named" in text


def test_a_call_sent_again_at_its_index_keeps_its_first_id_and_name():
    """What the fold of the deltas gives (a client fills each field once); the change is an anomaly."""
    acc = DeltaAccumulator()
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=-1, id="a", name="f", arguments='{"x": 1}')]))
    acc.add(StreamDelta(tool_calls=[ToolCallDelta(index=-1, id="b", name="g", arguments='{"y": 2}')]))
    [call] = acc.tool_calls()
    assert (call.id, call.name, call.invalid_arguments) == ("a", "f", '{"x": 1}{"y": 2}')
    text = " | ".join(acc.anomalies)
    assert "id changed from 'a' to 'b'" in text and "name changed from 'f' to 'g'" in text


def test_merged_deltas_join_fragments_of_the_same_call():
    a = StreamDelta(content="x", tool_calls=[ToolCallDelta(index=0, id="i", name="f", arguments="{")])
    b = StreamDelta(content="y", tool_calls=[ToolCallDelta(index=0, arguments="}")])
    m = a.merged(b)
    assert m.content == "xy" and len(m.tool_calls) == 1 and m.tool_calls[0].arguments == "{}"

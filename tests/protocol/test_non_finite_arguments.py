"""``NaN``, ``Infinity`` and ``-Infinity`` in a call's arguments: no JSON (RFC 8259), though Python's
decoder takes them and its encoder writes them back. They made `OutputProcessor` send arguments
text no client's JSON parser reads (``JSON.parse`` throws; vLLM 0.33 and SGLang 0.5.23 send the
same text, one-shot and streamed). Now arguments holding one are not a JSON object: a builtin
parser reads no call there (its text is text, as for any call whose arguments are not a JSON
object), a framework's call is flagged (`invalid_arguments`, verbatim, as any malformed arguments
are), and `compare` no longer finds a one-shot and a stream reading that agree to differ."""

from __future__ import annotations

import json
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.conformance import same_json
from parsebridge.serving import OutputProcessor

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
ARGS = ['{"x": NaN}', '{"y": [Infinity, 1.5]}', '{"z": -Infinity}', '{"a": {"b": [1, NaN]}}']


def _strict(text: str) -> Any:
    """`json.loads` as a JavaScript client reads JSON: no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("args", ARGS)
def test_arguments_with_a_non_finite_number_are_no_json_object(args: str) -> None:
    assert pb.parse_arguments(args) == ({}, args)
    call = pb.ToolCall.from_arguments_text("f", args)
    assert not call.valid and call.invalid_arguments == args
    assert pb.parse_arguments('{"x": "NaN", "y": 1e999}')[1] is None  # a string; a finite literal


@pytest.mark.parametrize("args", ARGS)
@pytest.mark.parametrize("cumulative", [False, True])
def test_the_processor_sends_only_json_its_clients_read(args: str, cumulative: bool) -> None:
    text = f'<tool_call>{{"name": "f", "arguments": {args}}}</tool_call>'
    proc = OutputProcessor(None, "builtin:hermes", tools=TOOLS, cumulative=cumulative)
    message = proc.parse(text).message
    assert message["content"] == text and "tool_calls" not in message  # no call: its text is text
    stream = proc.request().stream()
    chunks, sent = [], ""
    for i in range(0, len(text), 4):
        sent = sent + text[i : i + 4] if cumulative else text[i : i + 4]
        chunks += stream.feed(sent)
    chunks += stream.finish()
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            for call in choice.get("delta", {}).get("tool_calls") or []:
                _strict(call["function"]["arguments"])
    content = "".join(
        c["delta"].get("content") or "" for chunk in chunks for c in chunk.get("choices", []) if "delta" in c
    )
    assert content == text


def test_compare_finds_no_difference_between_readings_that_agree() -> None:
    """A stream and its one-shot parse both reading ``{"x": NaN}`` (a parser of one's own) were
    `arguments_differ`: NaN is not equal to itself."""
    assert same_json({"x": float("nan"), "y": [float("inf")]}, {"x": float("nan"), "y": [float("inf")]})
    assert not same_json({"x": float("nan")}, {"x": 1.0})
    assert not same_json({"x": float("inf")}, {"x": float("-inf")})

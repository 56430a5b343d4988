"""Cohere Command tool calls: Command A ``<|START_ACTION|>[…]<|END_ACTION|>``, Command R ``Action: ```json […]````.

Each call is ``{"tool_call_id": "0", "tool_name": …, "parameters": {…}}``;
"name" and "arguments" are accepted as synonyms, ``tool_call_id`` is ignored
(the OpenAI id is ours). Command A (vLLM ``cohere_command3``/``cohere_command4``,
SGLang ``cohere_command4``) wraps its answer in ``<|START_RESPONSE|>…<|END_RESPONSE|>``, Command 4
in ``<|START_TEXT|>…<|END_TEXT|>``: those tags are structure and never reach the content (vLLM
drops the text ones too; SGLang keeps them). Command R/R+ writes
``Action:`` and a ```json-fenced array instead; both are read. Thinking
(``<|START_THINKING|>``) is the reasoning parser's.

An action block may hold one call object instead of the array. Malformed
output (see `json_payload`): an action block whose body is not a call array or
object is content verbatim (SGLang returns only the text before it); the end
marker cutting a call object ends it (no call: `whole_calls`). "Action:" followed by anything but a call array is prose.

`format_tool_result`: Command A's ``<|START_TOOL_RESULT|>[{"tool_call_id": id,
"results": {"0": result}, "is_error": null}]<|END_TOOL_RESULT|>`` (a non-object
result becomes ``{"result": …}``: documents are objects).
"""

from __future__ import annotations

from typing import ClassVar

from ...formats.cohere import (
    ACTION_PREFIX,
    END_ACTION,
    END_RESPONSE,
    END_TEXT,
    FENCE,
    FENCE_LANG,
    START_ACTION,
    START_RESPONSE,
    START_TEXT,
)
from .engines.json_payload import ANY, ARRAY, JsonCallsParser, JsonCallsSpec, JsonCallsStream, Region
from .engines.scan import ObjectReader


class CohereObjectReader(ObjectReader):
    NAME_KEYS: ClassVar[tuple[str, ...]] = ("tool_name", "name")
    ARG_KEYS: ClassVar[tuple[str, ...]] = ("parameters", "arguments")


SPEC = JsonCallsSpec(
    regions=(
        # a list of calls, or one call object on its own (SGLang reads it too)
        Region(START_ACTION, END_ACTION, shape=ANY),
        Region(ACTION_PREFIX, FENCE, shape=ARRAY, openers=(FENCE + FENCE_LANG, FENCE)),
    ),
    drop=(START_RESPONSE, END_RESPONSE, START_TEXT, END_TEXT),
    reader=CohereObjectReader,
)


class CohereToolStream(JsonCallsStream):
    spec = SPEC


class CohereToolParser(JsonCallsParser):
    """Cohere Command A/R action blocks (builtin, incremental)."""

    name = "cohere"
    markers: ClassVar[tuple[str, ...]] = (
        START_ACTION,
        END_ACTION,
        START_RESPONSE,
        END_RESPONSE,
        START_TEXT,
        END_TEXT,
    )
    stream_class = CohereToolStream
    family_format = "cohere"

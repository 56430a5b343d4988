"""A parameter the request's `tools` do not declare, in the formats that write values as text.

vLLM 0.33 and SGLang 0.5.23 both keep such a value the string the model wrote
(``42`` stays "42", ``true`` stays "true") for Qwen3-Coder, Step-3, MiniMax-M2
and dots, where the tool itself is declared (dots: but for ``null``, which both
read as null); builtin reads it so under ``conventions="servers"`` and types it
as JSON under ``"lossless"``. The
consensus corpus holds the same case (``undeclared-parameters``), judged by
both frameworks in `tests/conformance/test_consensus.py`.
"""

from __future__ import annotations

from typing import Any

import pytest
from _streaming import assert_streams_like_oneshot, random_chunkings

from parsebridge import get_tool_parser
from parsebridge.formats import tool_format
from parsebridge.formats.cases.catalogue import tools as catalogue_tools

#: The shared catalogue's get_weather: `location` a string, `unit` an enum, `days` an integer.
TOOLS = catalogue_tools("get_weather")
#: `days` is declared (an integer under both conventions); `hours`, `hourly` and `filter` are not.
ARGS: dict[str, Any] = {"location": "Paris", "days": 3, "hours": 12, "hourly": True, "filter": None}
AS_WRITTEN = {"location": "Paris", "days": 3, "hours": "12", "hourly": "true", "filter": "null"}

FAMILIES = ["qwen3_coder", "step3", "minimax_m2", "dots"]


def _output(family: str) -> str:
    return "Checking.\n" + tool_format(family).render([("get_weather", ARGS)])


@pytest.mark.parametrize("family", FAMILIES)
def test_servers_keeps_an_undeclared_value_the_text_the_model_wrote(family: str) -> None:
    text = _output(family)
    parser = get_tool_parser(f"builtin:{family}", tools=TOOLS)
    result = assert_streams_like_oneshot(parser, text, random_chunkings(text, seed=7))
    expected = {**AS_WRITTEN, "filter": None} if family == "dots" else AS_WRITTEN
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", expected)]


@pytest.mark.parametrize("family", ["step3", "minimax_m2", "dots"])
def test_lossless_types_an_undeclared_value_as_json(family: str) -> None:
    text = _output(family)
    parser = get_tool_parser(f"builtin:{family}", tools=TOOLS, conventions="lossless")
    result = assert_streams_like_oneshot(parser, text, random_chunkings(text, seed=7))
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", ARGS)]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_declared_value_is_typed_by_its_schema_under_both(family: str) -> None:
    text = tool_format(family).render([("get_weather", {"location": "42", "days": 3})])
    for conventions in ("servers", "lossless"):
        parser = get_tool_parser(f"builtin:{family}", tools=TOOLS, conventions=conventions)
        calls = parser.parse(text).tool_calls
        assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"location": "42", "days": 3})]

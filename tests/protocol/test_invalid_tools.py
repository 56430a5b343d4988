"""Tools that are not a list of tool definitions are refused, typed, where a parser is built.

``get_tool_parser(spec, tools="abc")`` (or ``{"a": 1}``, ``[1]``, a tool without a function
object or a name, ``parameters`` that are not an object) was accepted in silence by builtin
parsers and raised `BackendError` "raised in construct" on vLLM and SGLang: the caller's input
blamed on the parser. Now it is `InvalidToolsError` — a `ParsebridgeError` and a `ValueError` —
naming the tool and what is wrong, from `get_tool_parser`, `get_pipeline` and `OutputProcessor`,
whatever `on_error` says. What was accepted and is legitimate stays accepted on every backend:
the OpenAI form, the flat ``{"name", "parameters"}`` form (vLLM and Dynamo refused it, the other
backends wrapped it), and pydantic models of a definition (each framework took only its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

import parsebridge as pb
import parsebridge.protocol as protocol
from parsebridge.adapters import get_backend

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL_LINE = 'CALL get_weather {"city": "Paris"}'
#: A tool parser of every backend (and a user's), with an output naming get_weather in its format.
SPECS = {
    "builtin:hermes": HERMES,
    "python:_userparsers:CallLine": CALL_LINE,
    "vllm:hermes": HERMES,
    "sglang:qwen25": HERMES,
    "dynamo:hermes": HERMES,
    "smg:qwen": HERMES,
}

#: (tools, what the message says): each refused, naming the tool where one is at fault.
BAD = [
    ("abc", "tools must be a list of tool definitions"),
    ({"a": 1}, "not an object"),
    ({"type": "function", "function": {"name": "get_weather"}}, "not an object"),
    ([1], "tool 0 is a number, not an object"),
    ([{"type": "function"}], 'tool 0 has no "function" object'),
    ([{"type": "function", "function": "get_weather"}], 'tool 0 has a "function" that is a string'),
    (
        [
            {"type": "function", "function": {"name": "f"}},
            {"type": "function", "function": {"parameters": {}}},
        ],
        'tool 1 has no "function.name" string',
    ),
    ([{"type": "function", "function": {"name": ""}}], 'tool 0 has no "function.name" string'),
    (
        [{"type": "function", "function": {"name": "f", "parameters": [1]}}],
        'tool 0 (f) has "function.parameters"',
    ),
    ([{"name": "f", "parameters": "x"}], 'tool 0 (f) has "parameters" that are not a JSON Schema object'),
    ([{"type": "retrieval", "function": {"name": "f"}}], "tool 0 has type 'retrieval', not \"function\""),
    ([{"parameters": SCHEMA}], 'tool 0 has no "function" object'),
]
BAD_IDS = [
    "str",
    "dict",
    "one-tool",
    "int",
    "no-function",
    "function-str",
    "no-name",
    "empty-name",
    "params-list",
    "flat-params-str",
    "type",
    "neither-form",
]


class Function(BaseModel):
    name: str
    parameters: dict[str, Any] | None = None
    description: str | None = None


class Tool(BaseModel):
    """A framework's own tool object, as vLLM's `ChatCompletionToolsParam` or SGLang's `Tool`."""

    type: str = "function"
    function: Function


#: Every accepted form of the one tool get_weather.
GOOD = {
    "openai": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
    "flat": [{"name": "get_weather", "parameters": SCHEMA}],
    "flat-typed": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
    "no-parameters": [{"type": "function", "function": {"name": "get_weather"}}],
    "tuple": ({"type": "function", "function": {"name": "get_weather", "parameters": None}},),
    "pydantic": [Tool(function=Function(name="get_weather", parameters=SCHEMA))],
}


def _made(make: Callable[[], Any]) -> Any:
    """`make()`, skipped when its backend is not installed here."""
    try:
        return make()
    except (pb.BackendNotInstalledError, pb.ServerUnavailableError) as exc:
        pytest.skip(str(exc))


def _refused(make: Callable[[], Any], says: str) -> pb.InvalidToolsError:
    with pytest.raises(pb.InvalidToolsError) as info:
        make()
    assert says in str(info.value), str(info.value)
    return info.value


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
@pytest.mark.parametrize(("tools", "says"), BAD, ids=BAD_IDS)
def test_get_tool_parser_refuses_malformed_tools_on_builtin(tools: Any, says: str, on_error: str) -> None:
    err = _refused(lambda: pb.get_tool_parser("builtin:hermes", tools=tools, on_error=on_error), says)
    assert isinstance(err, pb.ParsebridgeError) and isinstance(err, ValueError)
    assert err.index == (None if "tools must be" in says or says == "not an object" else int(says.split()[1]))


@pytest.mark.parametrize("spec", SPECS)
def test_every_backend_refuses_them_alike_even_with_a_timeout(spec: str) -> None:
    """Before the backend is reached (vLLM and SGLang raised BackendError "raised in construct";
    smg and Dynamo only at the first parse, an HTTP 400 blamed on the parser)."""
    for tools, says in BAD:
        _refused(lambda tools=tools: pb.get_tool_parser(spec, tools=tools, on_error="fallback"), says)
    _refused(lambda: pb.get_tool_parser(spec, tools=[{"type": "function"}], timeout=30), "tool 0")


@pytest.mark.parametrize("spec", SPECS)
def test_every_accepted_form_works_on_every_backend(spec: str) -> None:
    """The flat form on vLLM and Dynamo, and a pydantic model anywhere, used to fail; the rest is
    kept working."""
    for form, tools in GOOD.items():
        parser = _made(lambda tools=tools: pb.get_tool_parser(spec, tools=tools))
        try:
            assert parser.tool_names == ["get_weather"], form
            calls = parser.parse(SPECS[spec]).tool_calls
            assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})], form
        finally:
            parser.close()


PIPELINES = [
    ("builtin:qwen3", "builtin:hermes"),
    ("vllm:qwen3", "vllm:hermes"),
    ("sglang:qwen3", "sglang:qwen25"),
]


@pytest.mark.parametrize(("reasoning", "tool"), PIPELINES, ids=[t for _, t in PIPELINES])
def test_a_pipeline_checks_its_tools_native_or_not(reasoning: str, tool: str) -> None:
    for native in (True, False):
        _refused(
            lambda native=native: pb.get_pipeline(reasoning, tool, tools=[1], native=native),
            "tool 0 is a number",
        )
        pipe = _made(
            lambda native=native: pb.get_pipeline(reasoning, tool, tools=GOOD["flat"], native=native)
        )
        try:
            result = pipe.parse("<think>x</think>" + HERMES)
            assert [c.name for c in result.tool_calls] == ["get_weather"], native
        finally:
            pipe.close()


@pytest.mark.parametrize("spec", ["builtin:hermes", "vllm:hermes"])
def test_the_output_processor_checks_its_tools_and_each_requests(spec: str) -> None:
    _refused(lambda: _made(lambda: pb.OutputProcessor(None, spec, tools="abc")), "tools must be a list")
    proc = _made(lambda: pb.OutputProcessor(None, spec, tools=GOOD["openai"], on_error="fallback"))
    _refused(lambda: proc.request(tools=[{"type": "function"}]), 'tool 0 has no "function" object')
    _refused(lambda: proc.request(tools="abc"), "tools must be a list")
    request = proc.request(tools=GOOD["flat"])
    out = request.response(HERMES)
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


@pytest.mark.parametrize("spec", ["builtin:hermes", "vllm:hermes"])
def test_a_plugin_parser_reads_the_function_tools_of_a_request(spec: str) -> None:
    """A server checked its request's tools itself, and a Responses request may hold its own
    built-in tools (vLLM gives them to the parser too): the plugin's parser takes the functions."""
    from parsebridge.plugins.parser_cache import PARSERS  # (the plugins package reads its settings)

    tools = [{"type": "mcp", "server_label": "docs"}, *GOOD["openai"]]
    parser = _made(lambda: PARSERS.get("tool", spec, tools))
    assert parser.tool_names == ["get_weather"]


def test_the_error_is_exported_like_the_others() -> None:
    assert "InvalidToolsError" in pb.__all__ and "InvalidToolsError" in protocol.__all__
    assert pb.InvalidToolsError is protocol.InvalidToolsError


def test_a_llamacpp_parser_checks_and_reads_every_form() -> None:
    backend = get_backend("llamacpp")
    if not backend.is_available():
        pytest.skip(f"no llama.cpp harness: {backend.unavailable_reason()}")
    spec = "llamacpp:" + next(n for n in pb.parser_names("llamacpp", "tool") if "Hermes" in n)
    _refused(
        lambda: pb.get_tool_parser(spec, tools=[{"type": "function"}]), 'tool 0 has no "function" object'
    )
    for form, tools in GOOD.items():
        parser = pb.get_tool_parser(spec, tools=tools)
        assert [c.name for c in parser.parse(HERMES).tool_calls] == ["get_weather"], form

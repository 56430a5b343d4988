"""Tool definitions as callers pass them, checked once where a parser is built.

A request's tools are the caller's input, not a parser's: a malformed list is
`InvalidToolsError` naming the tool and what is wrong, before any backend sees it, whatever
``on_error`` says. (Unchecked, the frameworks refused such a list when they built the parser, an
error blamed on the parser, and builtin parsers ignored it.) `get_tool_parser`, `get_pipeline`,
`OutputProcessor` and the CLI's ``--tools`` all check with `checked_tools`.

Accepted, as every backend reads them:

* the OpenAI form ``{"type": "function", "function": {"name": …, "parameters": {…}}}``;
* the flat form ``{"name": …, "parameters": {…}}`` (``"type": "function"`` optional: the
  Responses API's), which `openai_tool` wraps for a backend that takes only the OpenAI form;
* a pydantic model of either (a framework's own tool object), read as its ``model_dump()``.

``parameters`` may be absent or null (a tool without arguments).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import InvalidToolsError

#: An OpenAI tool definition (as `parsers.ToolSpec`; that module loads pydantic, which the CLI's
#: ``--tools`` check and the probe need not).
ToolSpec = dict[str, Any]

#: What a tool definition looks like, for the error messages.
FORMS = '{"type": "function", "function": {"name": …, "parameters": {…}}} or, flat, {"name": …, "parameters": {…}}'


#: `tool_problem`'s rules as JSON Schema (the shipped transcript schema's ``tools`` items), so a
#: definition the schema passes is one `checked_tools` takes.
_FUNCTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 1}, "parameters": {"type": ["object", "null"]}},
}
TOOL_DEFINITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": f"a function tool: {FORMS}",
    "properties": {"type": {"const": "function"}},
    "anyOf": [
        {"required": ["function"], "properties": {"function": _FUNCTION_SCHEMA}},
        {"not": {"required": ["function"]}, **_FUNCTION_SCHEMA},
    ],
}


def json_kind(value: Any) -> str:
    """What a JSON value is, as an error names it ("null", "a string", "an array", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def tool_problem(tool: Any) -> str:
    """What keeps `tool` from being a function tool definition ("" when nothing does), as the end
    of a sentence that starts "tool 0 ..."."""
    if not isinstance(tool, Mapping):
        return f"is {json_kind(tool)}, not an object"
    kind = tool.get("type", "function")
    if kind != "function":
        return f'has type {kind!r}, not "function"'
    if "function" in tool:
        fn, where = tool["function"], "function."
        if fn is None:
            return 'has no "function" object'
        if not isinstance(fn, Mapping):
            return f'has a "function" that is {json_kind(fn)}, not an object'
    elif "name" in tool:
        fn, where = tool, ""  # the flat form
    else:
        return 'has no "function" object'
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return f'has no "{where}name" string'
    parameters = fn.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        return f'({name}) has "{where}parameters" that are not a JSON Schema object'
    return ""


def checked_tools(tools: Any) -> list[ToolSpec]:
    """`tools` as a list of dicts (pydantic models dumped), each checked; [] for None.

    Raises `InvalidToolsError` for what is not a list of tool definitions (a string, one dict)
    or for the first definition `tool_problem` refuses.
    """
    if tools is None:
        return []
    single = isinstance(tools, str | bytes | bytearray | Mapping) or hasattr(tools, "model_dump")
    if single or not isinstance(tools, Iterable):
        raise InvalidToolsError(
            None, f"tools must be a list of tool definitions ({FORMS}), not {json_kind(tools)}"
        )
    out: list[ToolSpec] = []
    for index, tool in enumerate(tools):
        if hasattr(tool, "model_dump") and not isinstance(tool, Mapping):
            tool = tool.model_dump(exclude_none=True)
        elif isinstance(tool, Mapping) and not isinstance(tool, dict):
            tool = dict(tool)
        problem = tool_problem(tool)
        if problem:
            raise InvalidToolsError(index, f"tool {index} {problem} (a tool definition is {FORMS})")
        out.append(tool)
    return out


def openai_tool(tool: ToolSpec) -> ToolSpec:
    """`tool` in the OpenAI form (a flat definition wrapped; one in that form as it is), for
    backends whose request model takes only that form (vLLM, Dynamo, SGLang's `Tool`)."""
    if "function" in tool:
        return tool
    return {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}

"""Schema-typed parameter values, shared by the XML-ish formats (qwen3_coder, seed_oss, glm45, minimax_m2, …).

These formats write each argument as raw text between tags, so the text's
JSON type comes from the tool's schema:

* P declared with types that include "null" (``["string", "null"]``, ``anyOf``, OpenAPI's
  ``nullable: true``), and the text ``null`` in any case → null: what both vLLM and SGLang read,
  and what most of these formats' chat templates write for a Python ``None`` (Qwen3-Coder's writes
  ``None``, its ``str()``: where the parser says so, `none_is_null`, that text is null there too);
* P declared with a JSON-schema type that includes "string" → the text as is;
* P declared with other types (integer, number, boolean, object, array, null) → ``json.loads``
  of the stripped text when it is valid JSON, else the text as a string; a Python literal
  (``True``/``False``/``None``, as models trained on Python write them) is the boolean or null
  it names where the schema allows that type (``boolean``, ``null``), a signed integer (``+5``)
  the number where it allows ``integer`` or ``number`` (both servers read it so), and a Python list
  or dict literal of JSON values (``['a', 'b']``, ``{'k': True}``) the array or object where it
  allows that type (SGLang's reading; where both servers keep it text, "servers" does:
  `servers_containers_are_text`);
* a schema without a ``type`` takes the types of its ``enum``/``const`` values and its ``allOf``
  parts (``{"enum": ["1", "2"]}`` is a string, ``{"enum": [true, false]}`` a boolean), as vLLM
  and SGLang read Qwen3-Coder, GLM and MiniMax-M2 (`schema_types`; where both servers type by
  ``type`` alone, "servers" does: `servers_types_by_type`);
* P undeclared (or declared without any type) → obvious JSON literals (numbers, true/false/null,
  objects, arrays) are decoded, anything else stays a string; where a format's servers keep such
  a value text (`servers_untyped_strings`, under conventions="servers") the parser passes the
  types ``{"string"}`` or `TEXT_OR_NULL` instead.

NaN/Infinity are never decoded (they are not JSON).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from typing import Any

from ....protocol.parsers import ToolSpec
from .scan import is_invalid, loads_or_none

_OBVIOUS = re.compile(r"-?\d|[\[{]|(?:true|false|null)\Z")
#: An integer JSON does not read (a plus sign) but Python's ``int`` does.
_SIGNED_INTEGER = re.compile(r"\+\d+")
_CONTAINER_TYPES = {list: "array", dict: "object"}

#: Python's literals → (the JSON-schema type that admits them, their value).
_PYTHON_LITERALS: dict[str, tuple[str, Any]] = {
    "True": ("boolean", True),
    "False": ("boolean", False),
    "None": ("null", None),
}

#: What a parameter no schema declares is read as where a format's servers keep it text but for the
#: text ``null`` (in any case), which they read as null before they look at any schema (dots).
TEXT_OR_NULL: frozenset[str] = frozenset({"text or null"})

#: function name → parameter → declared JSON-schema types (empty set: declared, no type).
ParamTypes = dict[str, dict[str, frozenset[str]]]


def schema_types(tools: Sequence[ToolSpec], infer: bool = True) -> ParamTypes:
    """function name → parameter → declared JSON-schema types (empty set: declared, no type).
    With `infer`, a schema without a ``type`` takes the types of its ``enum``/``const`` values
    (``{"enum": ["1", "2"]}`` is a string) and of its ``allOf`` parts, as vLLM and SGLang type
    Qwen3-Coder's, GLM's and MiniMax-M2's values; without, it has none (Step-3's and MiniCPM 5's
    servers)."""
    out: ParamTypes = {}
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        params = fn.get("parameters")
        props = params.get("properties") if isinstance(params, dict) else None
        types: dict[str, frozenset[str]] = {}
        for pname, schema in (props or {}).items() if isinstance(props, dict) else ():
            types[str(pname)] = _types_of(schema, infer)
        out[fn["name"]] = types
    return out


#: The JSON-schema type of an ``enum`` or ``const`` value (bool before int: True is an int too).
_VALUE_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))


def _types_of(schema: Any, infer: bool = True) -> frozenset[str]:
    if not isinstance(schema, dict):
        return frozenset()
    t = schema.get("type")
    found: set[str] = set()
    if isinstance(t, str):
        found.add(t)
    elif isinstance(t, list):
        found.update(x for x in t if isinstance(x, str))
    if schema.get("nullable") is True:  # OpenAPI 3.0's spelling of an optional value
        found.add("null")
    for key in ("anyOf", "oneOf", *(("allOf",) if infer else ())):
        for sub in schema.get(key) or ():
            found |= _types_of(sub, infer)
    if infer and not found:
        enum = schema.get("enum")
        values: list[Any] = list(enum) if isinstance(enum, list) else []
        if "const" in schema:
            values.append(schema["const"])
        for value in values:
            kind = (
                "null"
                if value is None
                else next((t for c, t in _VALUE_TYPES if isinstance(value, c)), "object")
            )
            found.add(kind)
    return frozenset(found)


def is_string_typed(types: frozenset[str] | None) -> bool:
    """Declared as a string (and not null, whose text ``null`` is no string): its text is the value
    and can stream as a JSON string."""
    return bool(types) and "string" in (types or ()) and "null" not in (types or ())


def is_null_text(stripped: str, types: frozenset[str] | None) -> bool:
    """The (stripped) text ``null``, in any case, where the schema allows null (the first rule of
    the module docstring: it holds for every format that types text by the schema)."""
    return bool(types) and "null" in (types or ()) and stripped.lower() == "null"


def convert_value(
    text: str,
    types: frozenset[str] | None,
    python_none: bool = True,
    python_containers: bool = True,
    none_is_null: bool = False,
) -> Any:
    """A parameter's text → its JSON value, by the module docstring's rule (without `python_none`,
    Python's ``None`` stays text: the reading of servers that know only its two booleans; without
    `python_containers`, a Python list or dict literal stays text, as servers that know only JSON read it;
    with `none_is_null`, for a format whose template writes null as ``None``, that text is null wherever
    the schema allows null, a string type beside it or not)."""
    stripped = text.strip()
    if is_null_text(stripped, types) or (
        none_is_null and python_none and stripped == "None" and bool(types) and "null" in (types or ())
    ):
        return None
    if types and "string" in types:
        return text
    if types == TEXT_OR_NULL:
        return None if stripped.lower() == "null" else text
    if not types:
        if not _OBVIOUS.match(stripped):
            return text
        value = loads_or_none(stripped)
        return text if is_invalid(value) or isinstance(value, str) else value
    value = loads_or_none(stripped)
    if not is_invalid(value):
        return value
    literal = _PYTHON_LITERALS.get(stripped)
    if literal is not None:
        allowed = literal[0] in types and (literal[1] is not None or python_none)
        return literal[1] if allowed else text
    if _SIGNED_INTEGER.fullmatch(stripped) and types & {"integer", "number"}:
        return int(stripped)  # (``+5``: JSON has no plus sign; both servers read it as 5)
    if python_containers and stripped[:1] in "[{" and types & {"array", "object"}:
        container = python_container(stripped)
        if container is not None and _CONTAINER_TYPES[type(container)] in types:
            return container
    return text


def python_container(text: str) -> list[Any] | dict[str, Any] | None:
    """A Python list or dict literal (``['a', 'b']``, ``{'k': True}``, a trailing comma) whose
    contents are JSON values, as models trained on Python write one; None for anything else."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (list, dict)) and _json_like(value) else None


def _json_like(value: Any, depth: int = 0) -> bool:
    if depth > 100:
        return False
    if isinstance(value, list):
        return all(_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return (
        value is None
        or isinstance(value, (str, bool, int))
        or (isinstance(value, float) and math.isfinite(value))
    )

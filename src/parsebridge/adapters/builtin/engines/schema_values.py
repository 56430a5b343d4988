"""Schema-typed parameter values, shared by the XML-ish formats (qwen3_coder, seed_oss, glm45, minimax_m2, …).

These formats write each argument as raw text between tags, so the text's
JSON type comes from the tool's schema:

* P declared with types that include "null" (``["string", "null"]``, ``anyOf``, OpenAPI's
  ``nullable: true``), and the text ``null`` in any case → null: what both vLLM and SGLang read,
  and what these formats' chat templates write for a Python ``None``;
* P declared with a JSON-schema type that includes "string" → the text as is;
* P declared with other types (integer, number, boolean, object, array, null) → ``json.loads``
  of the stripped text when it is valid JSON, else the text as a string; a Python literal
  (``True``/``False``/``None``, as models trained on Python write them) is the boolean or null
  it names where the schema allows that type (``boolean``, ``null``);
* P undeclared (or declared without a type) → obvious JSON literals (numbers, true/false/null,
  objects, arrays) are decoded, anything else stays a string; where a format's servers keep such
  a value text (`servers_untyped_strings`, under conventions="servers") the parser passes the
  types ``{"string"}`` or `TEXT_OR_NULL` instead.

NaN/Infinity are never decoded (they are not JSON).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ....protocol.parsers import ToolSpec
from .scan import is_invalid, loads_or_none

_OBVIOUS = re.compile(r"-?\d|[\[{]|(?:true|false|null)\Z")

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


def schema_types(tools: Sequence[ToolSpec]) -> ParamTypes:
    """function name → parameter → declared JSON-schema types (empty set: declared, no type)."""
    out: ParamTypes = {}
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        params = fn.get("parameters")
        props = params.get("properties") if isinstance(params, dict) else None
        types: dict[str, frozenset[str]] = {}
        for pname, schema in (props or {}).items() if isinstance(props, dict) else ():
            types[str(pname)] = _types_of(schema)
        out[fn["name"]] = types
    return out


def _types_of(schema: Any) -> frozenset[str]:
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
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            found |= _types_of(sub)
    return frozenset(found)


def is_string_typed(types: frozenset[str] | None) -> bool:
    """Declared as a string (and not null, whose text ``null`` is no string): its text is the value
    and can stream as a JSON string."""
    return bool(types) and "string" in (types or ()) and "null" not in (types or ())


def is_null_text(stripped: str, types: frozenset[str] | None) -> bool:
    """The (stripped) text ``null``, in any case, where the schema allows null (the first rule of
    the module docstring: it holds for every format that types text by the schema)."""
    return bool(types) and "null" in (types or ()) and stripped.lower() == "null"


def convert_value(text: str, types: frozenset[str] | None, python_none: bool = True) -> Any:
    """A parameter's text → its JSON value, by the module docstring's rule (without `python_none`,
    Python's ``None`` stays text: the reading of servers that know only its two booleans)."""
    stripped = text.strip()
    if is_null_text(stripped, types):
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
    if is_invalid(value):
        literal = _PYTHON_LITERALS.get(stripped)
        if literal is None or literal[0] not in types or (literal[1] is None and not python_none):
            return text
        return literal[1]
    return value

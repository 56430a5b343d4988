"""The part of JSON Schema tool parameters use, checked the way a client's validator would.

`problems(value, schema)` lists where `value` breaks `schema` (empty: it validates): ``type``
(one or a list), ``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``
(``false`` or a schema) and ``items``. Keywords outside this set are not checked (the probe's own
tools use none of them); a schema that is not an object accepts everything, as JSON Schema says.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def problems(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Where `value` does not validate against `schema` (JSON paths and what is wrong)."""
    if not isinstance(schema, dict):
        return []
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, str(n)) for n in names):
            return [f"{path}: expected {' or '.join(map(str, names))}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} is not {schema['const']!r}")
    if isinstance(value, dict):
        out += _object_problems(value, schema, path)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            out += problems(item, schema["items"], f"{path}[{i}]")
    return out


def _object_problems(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    props = schema.get("properties") or {}
    out = [f"{path}: missing required {key!r}" for key in schema.get("required") or [] if key not in value]
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            out += problems(item, props[key], f"{path}.{key}")
        elif extra is False:
            out.append(f"{path}: {key!r} is not a declared property")
        elif isinstance(extra, dict):
            out += problems(item, extra, f"{path}.{key}")
    return out

"""Tool arguments checked against the tool's JSON Schema, as a client's validator checks them.

`problems(value, schema)` lists where `value` breaks `schema` (empty: it validates), each as a
JSON path and jsonschema's message. The schema's own ``$schema`` picks the draft (default 2020-12);
a schema that is itself invalid is one problem saying so.
"""

from __future__ import annotations

from typing import Any


def problems(value: Any, schema: Any) -> list[str]:
    """Where `value` does not validate against `schema` (JSON paths and what is wrong)."""
    import jsonschema  # a dependency, but ~40 ms to import: only when a probe checks arguments

    if not isinstance(schema, dict):
        return []
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return [f"the tool's schema is not valid JSON Schema: {exc.message}"]
    errors = sorted(cls(schema).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]

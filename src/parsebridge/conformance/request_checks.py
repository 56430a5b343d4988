"""Checks of one reading against the request and the other token groupings (beside `checks`).

`checks` compares a reading with the correct one and with the same parser's
one-shot reading. These look at what a client relies on beyond that:

* ``split_variant`` — split invariance: every token grouping of one output
  gives the same reading (compared with the 1-token reading);
* ``arguments_schema`` — a call's arguments validate against the JSON Schema
  of the tool the request declared (`jsonschema`), where the correct
  reading's arguments do (a model that broke the schema is not the parser's
  fault);
* ``unknown_tool`` — a call names a tool the request offered, where the
  correct reading does;
* ``parallel_calls`` — streamed calls arrive in order: each new call's index
  is the next one (no gap, no going back);
* ``truncation_lost`` — for ``finish_reason: length``, the outcome a backend
  gives (`truncation_outcome`: ``call``, ``flagged call``, ``content`` or
  ``lost``) against the policy (docs/tokens.md): the cut output's text
  must stay somewhere, in a call or in content.

All are ``invariant`` differences (status ``diverge`` unless documented).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from .checks import Difference, compare_readings
from .classes import DivergenceClass as DC
from .observation import Observation
from .transcripts import Transcript

#: How many characters of a cut output's end must show up in the reading (not whitespace).
TAIL = 12


def offered_tools(tools: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Tool name → its parameters schema (None: none declared), from OpenAI-style tools."""
    out: dict[str, dict[str, Any] | None] = {}
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            out[fn["name"]] = params if isinstance(params, dict) else None
    return out


def _jsonschema() -> Any:
    """jsonschema, imported on the first argument check.

    A dependency, but about 100 ms to import with what it brings (attrs, referencing, rpds): only a
    conformance run checks arguments, and `compare` imports this module through the runner.
    """
    import jsonschema  # heavy: see the docstring

    return jsonschema


@functools.lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    jsonschema = _jsonschema()
    schema = json.loads(schema_json)
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None  # a tool whose schema is itself invalid: nothing to validate against
    return cls(schema)


def schema_problem(schema: dict[str, Any] | None, arguments: Any) -> str | None:
    """Why `arguments` break `schema` (None: they validate, or there is no usable schema)."""
    if schema is None:
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return None
    error = _jsonschema().exceptions.best_match(validator.iter_errors(arguments))
    return None if error is None else error.message


def _call_checks(t: Transcript, obs: Observation) -> list[Difference]:
    offered = offered_tools(t.tools)
    if not offered:
        return []
    expected = t.expected.normalized()["tool_calls"] if t.expected is not None else None
    out: list[Difference] = []
    for i, call in enumerate(obs.tool_calls):
        name = call.get("name")
        ref = expected[i] if expected is not None and i < len(expected) else None
        if name not in offered:
            if ref is None or ref.get("name") != name:
                out.append(Difference(DC.UNKNOWN_TOOL, f"call {i}: {name!r} was not offered", "invariant"))
            continue
        if "arguments" not in call:
            continue
        problem = schema_problem(offered[name], call["arguments"])
        ref_ok = ref is None or (
            "arguments" in ref and schema_problem(offered[name], ref["arguments"]) is None
        )
        if problem is not None and ref_ok:
            out.append(Difference(DC.ARGUMENTS_SCHEMA, f"call {i} {name!r}: {problem}", "invariant"))
    return out


def _order_check(obs: Observation) -> list[Difference]:
    order = obs.call_order
    if order and order != list(range(len(order))):
        return [Difference(DC.PARALLEL_CALLS, f"calls streamed in index order {order}", "invariant")]
    return []


def truncation_outcome(output: str, obs: Observation) -> str:
    """What a backend made of an output the token limit cut: ``call``, ``flagged call``, ``content``
    (the cut text kept as content or reasoning) or ``lost``."""
    if any("invalid_arguments" in c for c in obs.tool_calls):
        return "flagged call"
    if obs.tool_calls:
        return "call"
    tail = "".join(output.split())[-TAIL:]
    kept = "".join(((obs.content or "") + (obs.reasoning or "")).split())
    return "content" if tail in kept else "lost"


def _truncation_check(t: Transcript, obs: Observation) -> list[Difference]:
    if t.finish_reason != "length":
        return []
    obs.truncation = truncation_outcome(t.output, obs)
    if obs.truncation != "lost":
        return []
    return [
        Difference(
            DC.TRUNCATION_LOST, "the cut output's last text is in no call and not in content", "invariant"
        )
    ]


def split_check(reference: Observation | None, obs: Observation) -> list[Difference]:
    """How a token grouping's reading differs from the 1-token one (none when either errored)."""
    if reference is None or reference is obs or reference.error or obs.error:
        return []
    diffs = compare_readings(reference.reading(), obs.reading(), exact=True, source="invariant")
    if not diffs:
        return []
    detail = "; ".join(f"{d.cls.value}: {d.detail}" for d in diffs[:3])
    return [Difference(DC.SPLIT_VARIANT, f"vs {reference.chunking}: {detail}", "invariant")]


def request_checks(t: Transcript, obs: Observation, reference: Observation | None = None) -> list[Difference]:
    """Every check above for one observation (`reference`: the 1-token reading, for split invariance)."""
    if obs.error is not None:
        return []
    return [
        *_call_checks(t, obs),
        *(_order_check(obs) if obs.mode == "stream" else []),
        *_truncation_check(t, obs),
        *split_check(reference, obs),
    ]

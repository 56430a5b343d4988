"""A call a framework's server does not read because the request declares no such tool.

Dynamo's frontend and SGLang's chat server run their tool parser only for a request that declares
tools; smg's gateway streams a call only to a tool the request declares
(`Backend.undeclared_tools_rule`). Compared on a log whose records declare no tools, their
readings lack calls the others read: that is what their servers do, not a parse error, so
compare names it: such a `call_missing` (or `extra_call`, seen from the other side) becomes
`tools_undeclared`, its detail the server's rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..adapters.registry import get_backend, resolve
from ..conformance.classes import DivergenceClass
from ..conformance.observation import Observation
from ..conformance.transcripts import Transcript
from ..protocol import ParsebridgeError
from ..protocol.spec import ParserSpec

_CALLS = {DivergenceClass.CALL_MISSING.value, DivergenceClass.EXTRA_CALL.value}
_LEAKED = DivergenceClass.MARKER_LEAKED.value


def _rule(label: str, mode: str, readings: Mapping[str, Observation], any_declared: bool) -> str | None:
    """The server rule that explains fewer calls in `label`'s reading at `mode` ("SPEC" or "R + T":
    its tool parser's backend and name), or None. Where the rule holds for streams only (smg), it
    explains a stream only when the same spec's one-shot reading read more calls."""
    tool = label.split(" + ")[-1].strip()
    try:
        backend, name = resolve("tool", tool)
    except Exception:  # (a framework raises what it raises) not installed here: the spec as written
        try:
            spec = ParserSpec.parse(tool)
            backend, name = get_backend(spec.backend), spec.name
        except ParsebridgeError:  # not a spec of a known backend: no rule
            return None
    kind = "oneshot" if mode == "oneshot" else "stream"
    rule = backend.undeclared_tools_rule(name, kind, any_declared=any_declared)
    if rule is None:
        return None
    if "oneshot" not in backend.undeclared_tools_modes:
        one, this = readings.get("oneshot"), readings.get(mode)
        if one is None or this is None or len(one.tool_calls) <= len(this.tool_calls):
            return None
    return rule


def _declared(t: Transcript) -> set[str]:
    return {str((tool.get("function") or tool).get("name")) for tool in t.tools or ()}


def name_undeclared(
    t: Transcript, differences: Iterable[dict[str, str]], observed: Mapping[str, Mapping[str, Observation]]
) -> None:
    """Rename (in place) the call differences whose missing side is a server that reads no call to
    a tool this transcript does not declare, and the markers that side then shows as text."""
    declared = _declared(t)
    called = {str(c.get("name")) for modes in observed.values() for o in modes.values() for c in o.tool_calls}
    called |= {c.name for c in (t.expected.tool_calls if t.expected is not None else ())}
    if not called - declared:
        return
    differences = list(differences)
    sides: set[str] = set()
    for d in differences:
        if d["class"] not in _CALLS:
            continue
        for side in (d["a"], d["b"]):
            label, _, mode = side.rpartition("/")
            readings = observed.get(label, {})
            obs = readings.get(mode)
            rule = _rule(label, mode, readings, bool(declared)) if obs is not None else None
            if rule and obs is not None and len(obs.tool_calls) < len(called):
                d["class"] = DivergenceClass.TOOLS_UNDECLARED.value
                d["detail"] = f"{label}: {rule}; this transcript declares " + (
                    "none" if not declared else f"only {', '.join(sorted(declared))}"
                )
                sides.add(side)
                break
    for d in differences:  # the call's markers, left in that side's text
        if d["class"] == _LEAKED and (d["a"] in sides or d["b"] in sides):
            d["class"] = DivergenceClass.TOOLS_UNDECLARED.value

"""Record today's disagreements in ``consensus.yaml``, grouped by reason, keeping what was reviewed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...adapters import get_backend
from .check import Outcome, Reviewed
from .corpus import FRAMEWORKS

HEADER = """\
# The consensus check's reviewed list (see parsebridge.conformance.consensus).
#
# Where vLLM and SGLang agree on the one-shot reading of a consensus-corpus
# case, builtin must give the same reading. Every case where it does not is
# named here, pinned to the difference classes builtin shows there (other
# classes on a listed case fail the check):
#   exceptions: the servers contradict themselves (their one-shot reading differs
#               from what their own stream already showed a client) and builtin
#               reads what the streams showed; `verify` names the check
#               (consensus/verify.py) that re-runs both frameworks' streams on
#               every case. The cases count toward a cap (tests/conformance).
#   divergences: both servers agree on a reading builtin's own rules call wrong
#               (a call that is not whole returned as a call; the rules are in
#               docs/builtin-parsers.md), and builtin keeps its rule; `verify`
#               re-checks both frameworks' readings on every case.
#   baseline:   disagreements still to be fixed, with the reason each exists.
#               To be removed by fixes, never added to by hand.
# Regenerate the baseline with `python -m parsebridge.conformance.consensus
# --write-baseline` (reasons already reviewed are kept).
"""


def framework_versions() -> dict[str, str]:
    out = {}
    for name in FRAMEWORKS:
        try:
            out[name] = get_backend(name).version() or "?"
        except Exception:
            out[name] = "?"
    return out


def baseline_rows(outcomes: Sequence[Outcome], reviewed: Reviewed) -> list[dict[str, object]]:
    """Disagreements not covered by an exception or a divergence, grouped, each group with its (kept) reason."""
    reasons = {e.group: e.reason for e in reviewed.baseline if e.group}
    for e in reviewed.baseline:  # a reviewed reason stays with the cases it named
        reasons.update({c: e.reason for c in e.cases})
    groups: dict[str, dict[str, list[str]]] = {}
    for o in outcomes:
        if o.disagrees and not any(e.matches(o.id) for e in (*reviewed.exceptions, *reviewed.divergences)):
            reason = reasons.get(o.id, reasons.get(o.group, "unreviewed"))
            groups.setdefault(reason, {})[o.id] = sorted(o.classes)
    return [{"reason": r, "cases": dict(sorted(pins.items()))} for r, pins in groups.items()]


def write_baseline(path: Path, outcomes: Sequence[Outcome], reviewed: Reviewed) -> None:
    import yaml  # type: ignore[import-untyped,unused-ignore]

    exceptions = [
        {"reason": e.reason, "verify": e.verify, "cases": {c: list(cls) for c, cls in e.pins}}
        for e in reviewed.exceptions
    ]
    divergences = [
        {"reason": e.reason, "verify": e.verify, "cases": {c: list(cls) for c, cls in e.pins}}
        for e in reviewed.divergences
    ]
    body = {
        "versions": framework_versions(),
        "exceptions": exceptions,
        "divergences": divergences,
        "baseline": baseline_rows(outcomes, reviewed),
    }
    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=120)
    path.write_text(HEADER + text, encoding="utf-8")

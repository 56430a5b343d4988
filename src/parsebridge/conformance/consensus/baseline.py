"""Record today's disagreements in ``consensus.yaml``, grouped by reason, keeping what was reviewed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .check import Outcome, Reviewed
from .corpus import FRAMEWORKS

HEADER = """\
# The consensus check's reviewed list (see parsebridge.conformance.consensus).
#
# Where vLLM and SGLang agree on the one-shot reading of a consensus-corpus
# case, builtin must give the same reading. Every case where it does not is
# named here:
#   exceptions: builtin differs on purpose; each with a reason a user would accept.
#   baseline:   today's disagreements, grouped by "variant: how builtin differs",
#               each group with the reason it exists. These are to be removed
#               (by fixes and the conventions= option), never added to by hand.
# Regenerate the baseline with `python -m parsebridge.conformance.consensus
# --write-baseline` (group reasons already reviewed are kept).
"""


def framework_versions() -> dict[str, str]:
    from ...adapters import get_backend

    out = {}
    for name in FRAMEWORKS:
        try:
            out[name] = get_backend(name).version() or "?"
        except Exception:
            out[name] = "?"
    return out


def baseline_rows(outcomes: Sequence[Outcome], reviewed: Reviewed) -> list[dict[str, object]]:
    """Disagreements not covered by an exception, grouped, each group with its (kept) reason."""
    reasons = {e.group: e.reason for e in reviewed.baseline if e.group}
    groups: dict[str, list[str]] = {}
    for o in outcomes:
        if o.disagrees and not any(e.matches(o.id) for e in reviewed.exceptions):
            groups.setdefault(o.group, []).append(o.id)
    return [
        {"group": g, "reason": reasons.get(g, "unreviewed"), "cases": sorted(ids)}
        for g, ids in sorted(groups.items())
    ]


def write_baseline(path: Path, outcomes: Sequence[Outcome], reviewed: Reviewed) -> None:
    import yaml  # type: ignore[import-untyped,unused-ignore]

    exceptions = [{"reason": e.reason, "cases": list(e.cases)} for e in reviewed.exceptions]
    body = {
        "versions": framework_versions(),
        "exceptions": exceptions,
        "baseline": baseline_rows(outcomes, reviewed),
    }
    text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=120)
    path.write_text(HEADER + text, encoding="utf-8")

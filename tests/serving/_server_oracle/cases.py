"""Oracle cases from the bundled conformance fixtures: every transcript a framework has parsers for."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import parsebridge as pb


@dataclass(frozen=True)
class Case:
    """One transcript with the framework's own parser names for its families."""

    framework: str
    transcript: Any
    reasoning: str | None
    tool: str | None

    @property
    def id(self) -> str:
        return f"{self.framework}-{self.transcript.id}"

    @property
    def specs(self) -> tuple[str | None, str | None]:
        fw = self.framework
        return (
            f"{fw}:{self.reasoning}" if self.reasoning else None,
            f"{fw}:{self.tool}" if self.tool else None,
        )


@functools.cache
def _names(framework: str, kind: str) -> frozenset[str]:
    try:
        return frozenset(pb.normalize_name(n) for n in pb.parser_names(framework, kind))  # type: ignore[arg-type]
    except Exception:
        return frozenset()


def _own(framework: str, family: Any, kind: str) -> str | None:
    if family is None:
        return None
    own = family.parser_for(framework)
    if own is None or pb.normalize_name(own) not in _names(framework, kind):
        return None
    return str(own)


def cases(framework: str) -> list[Case]:
    """Every bundled transcript whose families `framework` has parsers for (its own names)."""
    from parsebridge.conformance.transcripts import bundled_transcripts

    table = pb.family_table()
    out = []
    for t in bundled_transcripts():
        tool_family = t.resolve_family(table) if t.kind == "tool" else None
        reasoning_family = t.resolve_reasoning_family(table)
        tool = _own(framework, tool_family, "tool")
        reasoning = _own(framework, reasoning_family, "reasoning")
        if (t.kind == "tool" and tool is None) or (reasoning_family is not None and reasoning is None):
            continue
        out.append(Case(framework, t, reasoning, tool))
    return out

"""Shared test corpus: every bundled tool transcript a builtin tool parser reads on its own."""

from __future__ import annotations


def builtin_tool_cases() -> list[tuple[str, str]]:
    """(builtin spec, output) of every bundled tool transcript a builtin parser reads (no reasoning)."""
    from parsebridge.adapters.builtin import TOOL_PARSERS
    from parsebridge.conformance.transcripts import bundled_transcripts

    cases = []
    for t in bundled_transcripts():
        fam = t.resolve_family()
        name = fam.parser_for("builtin") if fam is not None else None
        if name in TOOL_PARSERS and t.kind != "reasoning" and not t.reasoning_family:
            cases.append((f"builtin:{name}", t.output))
    return cases

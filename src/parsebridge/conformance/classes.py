"""The divergence classes: the names every report, compare and fixture uses.

Its own module so that transcripts (which validate known-divergence class
names) and checks (which find the differences) both depend on it, not on
each other.
"""

from __future__ import annotations

from enum import StrEnum

from ..formats import hermes, think


class DivergenceClass(StrEnum):
    """A named way two readings of one output differ (used by reports, compare and fixtures)."""

    CONTENT_LOST = "content_lost"
    CONTENT_DUPLICATED = "content_duplicated"
    CONTENT_DIFFERS = "content_differs"
    WHITESPACE_ONLY = "whitespace_only"
    REASONING_LOST = "reasoning_lost"
    REASONING_MISPLACED = "reasoning_misplaced"
    REASONING_DIFFERS = "reasoning_differs"
    MARKER_LEAKED = "marker_leaked"
    CALL_MISSING = "call_missing"
    EXTRA_CALL = "extra_call"
    NAME_DIFFERS = "name_differs"
    ARGUMENTS_DIFFER = "arguments_differ"
    ARGUMENTS_INVALID = "arguments_invalid"
    ID_PROTOCOL = "id_protocol"
    FINISH_DIFFERS = "finish_differs"
    BACKEND_ERROR = "backend_error"
    SPLIT_VARIANT = "split_variant"
    ARGUMENTS_SCHEMA = "arguments_schema"
    UNKNOWN_TOOL = "unknown_tool"
    PARALLEL_CALLS = "parallel_calls"
    TRUNCATION_LOST = "truncation_lost"
    TOOLS_UNDECLARED = "tools_undeclared"

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self]


DESCRIPTIONS: dict[DivergenceClass, str] = {
    DivergenceClass.CONTENT_LOST: "content text present in the reference is missing",
    DivergenceClass.CONTENT_DUPLICATED: "content text appears more often than in the reference",
    DivergenceClass.CONTENT_DIFFERS: "content differs from the reference (not only lost or duplicated)",
    DivergenceClass.WHITESPACE_ONLY: "content or reasoning differs only in surrounding whitespace",
    DivergenceClass.REASONING_LOST: "reasoning text present in the reference is missing",
    DivergenceClass.REASONING_MISPLACED: "reasoning landed in content, or content in reasoning",
    DivergenceClass.REASONING_DIFFERS: "reasoning differs from the reference",
    DivergenceClass.MARKER_LEAKED: f"format marker text ({hermes.START}, {think.END}, …) shows up in content/reasoning",
    DivergenceClass.CALL_MISSING: "a tool call of the reference is missing",
    DivergenceClass.EXTRA_CALL: "a tool call the reference does not have",
    DivergenceClass.NAME_DIFFERS: "a tool call has a different function name",
    DivergenceClass.ARGUMENTS_DIFFER: "a tool call's arguments differ",
    DivergenceClass.ARGUMENTS_INVALID: "a tool call's arguments are not a JSON object where the reference's are",
    DivergenceClass.ID_PROTOCOL: "a streamed call without exactly one id and one name (OpenAI delta convention)",
    DivergenceClass.FINISH_DIFFERS: "stream.finish() disagrees with what the streamed deltas assemble to",
    DivergenceClass.BACKEND_ERROR: "the backend raised instead of returning a result",
    DivergenceClass.SPLIT_VARIANT: "the reading changes with the token grouping (it differs from the 1-token reading)",
    DivergenceClass.ARGUMENTS_SCHEMA: "a call's arguments do not validate against the declared tool's JSON Schema "
    "(where the correct reading's do)",
    DivergenceClass.UNKNOWN_TOOL: "a call names a tool the request did not offer (where the correct reading does not)",
    DivergenceClass.PARALLEL_CALLS: "streamed calls out of order or with a gap, or a call whose argument fragments "
    "do not assemble to its arguments",
    DivergenceClass.TRUNCATION_LOST: "output cut by the token limit (finish_reason length) lost text: no call "
    "holds it and content does not (docs/tokens.md, truncated output)",
    DivergenceClass.TOOLS_UNDECLARED: "a tool call not read because the request declares no such tool, "
    "as that engine's server does (Dynamo, SGLang: no tools at all; smg streamed: not that tool)",
}

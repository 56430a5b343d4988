"""The per-spec "stream = one-shot" column counts what it says: transcripts on which every stream
of the spec read what its own one-shot read.

It counted every difference within the spec instead, so a finding about each reading alone (a
call to a tool the record does not offer: `unknown_tool`, in the one-shot and every stream
alike) made a spec whose streams equal its one-shot show 0/1.
"""

from __future__ import annotations

import io
from typing import Any

import parsebridge as pb
from parsebridge.comparison.models import TranscriptComparison
from parsebridge.comparison.render import _specs_table
from parsebridge.comparison.summary import SummaryBuilder
from parsebridge.terminal import console

OFFERED = [{"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}]
CALL = 'Hi <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
MODES = {"oneshot": "oneshot", "stream": "token"}


def _stats(result: Any) -> dict[str, Any]:
    return {st.spec: st for st in result.summary.specs}


def test_a_finding_of_each_reading_alone_is_not_a_stream_difference() -> None:
    """builtin:hermes reads the call to `f` (not offered) one-shot and streamed alike; pythonic reads
    no call, so the two specs' one-shots differ, and each spec's streams still equal its one-shot."""
    result = pb.compare(
        {"output": CALL, "tools": OFFERED}, ["builtin:hermes", "builtin:pythonic"], chunkings=["token"]
    )
    (comparison,) = result.comparisons
    hermes = comparison.results["builtin:hermes"]
    one, streamed = (hermes[m].model_dump(exclude={"chunking", "tokenizer"}) for m in ("oneshot", "stream"))
    assert one == streamed and [c["name"] for c in one["tool_calls"]] == ["f"]
    assert {d.class_ for d in comparison.differences if d.a.startswith("builtin:hermes/")} >= {"unknown_tool"}
    stats = _stats(result)
    assert stats["builtin:hermes"].stream_consistent == 1
    assert stats["builtin:hermes"].classes == {"unknown_tool": 1}  # still said, in its own column
    assert stats["builtin:pythonic"].stream_consistent == 1
    (pair,) = result.summary.pairs
    assert pair.oneshot_agree == 0  # the one-shots' difference is the pair table's
    shown = io.StringIO()
    console(file=shown).print(_specs_table(result.summary))
    rows = [line for line in shown.getvalue().splitlines() if "builtin:" in line]
    assert "stream = one-shot" in shown.getvalue() and all(" 1/1 " in row for row in rows), rows


def _comparison(
    spec: str, statuses: dict[str, str], differences: list[dict[str, str]]
) -> TranscriptComparison:
    return TranscriptComparison.model_validate(
        {
            "transcript": "t",
            "specs": [spec],
            "results": {spec: {mode: {"status": status} for mode, status in statuses.items()}},
            "differences": differences,
        }
    )


def test_what_counts_against_the_column() -> None:
    spec = "x:y"
    builder = SummaryBuilder(MODES)
    ok = {"oneshot": "ok", "stream": "ok"}
    # a finding of the one-shot reading alone, and of each reading alike: stream = one-shot
    builder.add(
        _comparison(spec, ok, [{"class": "unknown_tool", "a": f"{spec}/oneshot", "b": f"{spec}/oneshot"}])
    )
    builder.add(
        _comparison(
            spec,
            ok,
            [
                {"class": "arguments_schema", "a": f"{spec}/oneshot", "b": f"{spec}/oneshot"},
                {"class": "arguments_schema", "a": f"{spec}/stream", "b": f"{spec}/stream"},
            ],
        )
    )
    # the stream reads otherwise, or errors where the one-shot did not: not
    builder.add(
        _comparison(spec, ok, [{"class": "content_lost", "a": f"{spec}/oneshot", "b": f"{spec}/stream"}])
    )
    builder.add(
        _comparison(
            spec,
            {"oneshot": "ok", "stream": "error"},
            [{"class": "backend_error", "a": f"{spec}/stream", "b": f"{spec}/stream"}],
        )
    )
    (st,) = builder.summary().specs
    assert (st.transcripts, st.stream_consistent) == (4, 2)
    assert st.classes == {"unknown_tool": 1, "arguments_schema": 1, "content_lost": 1, "backend_error": 1}

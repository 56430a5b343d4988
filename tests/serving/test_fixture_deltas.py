"""The OpenAI delta convention for every backend × bundled conformance transcript.

Through `OutputProcessor` chunk streams: role first and once; per call a first
delta with a dense index, id, type and name and later ones with neither;
no empty delta but the role and final chunks; `finish_reason` ``tool_calls``
exactly when calls were sent. These are the processor's job and hold for
every backend. Whether a call's argument fragments join to valid JSON depends
on the backend's parser: builtin must always; a framework parser that breaks
it is reported as an expected failure naming the divergence (never hidden),
and fixtures' documented divergences are honoured.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from _convention import check_convention

import parsebridge as pb
from parsebridge.serving import OutputProcessor

try:
    from parsebridge.conformance.transcripts import Transcript, bundled_transcripts

    TRANSCRIPTS: list[Transcript] = bundled_transcripts()
except Exception as exc:  # fixtures missing or mid-edit: say so instead of failing the suite
    TRANSCRIPTS = []
    WHY_NONE = f"bundled fixtures not loadable: {type(exc).__name__}: {exc}"
else:
    WHY_NONE = "no bundled fixtures"

BACKENDS = ["builtin", "vllm", "sglang"]


@functools.cache
def _backend_reason(backend: str) -> str | None:
    try:
        be = pb.get_backend(backend)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return be.unavailable_reason()


def _spec(backend: str, family: Any, kind: str) -> str | None:
    if family is None:
        return None
    own = family.parser_for(backend)
    if own is None:
        return None
    try:
        names = {pb.normalize_name(n) for n in pb.parser_names(backend, kind)}  # type: ignore[arg-type]
    except Exception:
        return None
    return f"{backend}:{own}" if pb.normalize_name(own) in names else None


def _chunkings(
    proc: OutputProcessor, text: str, tools: list[dict[str, Any]]
) -> dict[str, list[tuple[str, Any]]]:
    """Token chunks from the backend's tokenizer where it has one (1 and 5 a step), else characters."""
    out = {
        "tok1": proc.engine_chunks(text, 1, tools),
        "tok5": proc.engine_chunks(text, 5, tools),
        "whole": [(text, None)],
    }
    if out["tok1"] and out["tok1"][0][1] is None:  # no tokenizer: add an odd character chunking
        out["char7"] = proc.engine_chunks(text, 7, tools)
    return out


CASES = [(b, t) for b in BACKENDS for t in TRANSCRIPTS] or [
    pytest.param(None, None, marks=pytest.mark.skip(WHY_NONE))
]


@pytest.mark.parametrize(
    ("backend", "transcript"),
    CASES,
    ids=[f"{c[0]}-{c[1].id}" if isinstance(c, tuple) else "none" for c in CASES],
)
def test_delta_convention(backend: str, transcript: Transcript) -> None:
    why = _backend_reason(backend)
    if why is not None:
        pytest.skip(f"{backend} not usable here: {why}")
    table = pb.family_table()
    tool_family = transcript.resolve_family(table) if transcript.kind == "tool" else None
    reasoning_family = transcript.resolve_reasoning_family(table)
    tool_spec = _spec(backend, tool_family, "tool")
    reasoning_spec = _spec(backend, reasoning_family, "reasoning")
    if (transcript.kind == "tool" and tool_spec is None) or (
        reasoning_family is not None and reasoning_spec is None
    ):
        pytest.skip(
            f"{backend} has no parser for family {transcript.family!r}/{transcript.reasoning_family!r}"
        )
    # fallback: a backend that raises must still leave a well-formed stream (the policy is checked here too)
    try:
        proc = OutputProcessor(reasoning_spec, tool_spec, tools=transcript.tools, on_error="fallback")
    except pb.ParserUnsupportedError as exc:  # e.g. vLLM's harmony stubs cannot run here
        pytest.skip(f"{backend}: {exc}")
    started = transcript.reasoning_started_in_prompt or None
    expected = transcript.expected_for(backend)
    known = {d.backend for d in transcript.known_divergences}
    divergences: list[str] = []
    for name, pieces in _chunkings(proc, transcript.output, transcript.tools).items():
        stream = proc.stream(reasoning_started=started)
        chunks: list[dict[str, Any]] = []
        for text, ids in pieces:
            chunks += stream.feed(text, ids)
        chunks += stream.finish("stop")
        got = check_convention(chunks, valid_json=False)  # the processor's part: always strict
        assert got["finish_reason"] == ("tool_calls" if got["tool_calls"] else "stop"), name
        if stream.choice(0).broken:
            divergences.append(f"{name}: the parser raised; the rest of the output became content")
            continue
        for i, call in enumerate(got["tool_calls"]):
            if isinstance(call["arguments"], dict):
                continue
            want = expected.tool_calls[i] if expected and i < len(expected.tool_calls) else None
            if want is not None and want.invalid_arguments is not None:
                continue  # the output's arguments are malformed on purpose
            divergences.append(
                f"{name}: call {i} ({call['name']}) arguments are not a JSON object: {call['arguments']!r}"
            )
    if divergences:
        if backend == "builtin":
            pytest.fail("; ".join(divergences))
        documented = (
            "documented" if any(k == backend or k.startswith(f"{backend}:") for k in known) else "new"
        )
        pytest.xfail(f"{backend} parser divergence ({documented}): {'; '.join(divergences)[:500]}")


def test_fixture_cases_exist() -> None:
    """Guard against the parametrisation silently collapsing to nothing."""
    if not TRANSCRIPTS:
        pytest.skip(WHY_NONE)
    assert any(t.kind == "tool" for t in TRANSCRIPTS)
    assert json.dumps(TRANSCRIPTS[0].model_dump())  # JSON-serialisable, as the fixtures promise

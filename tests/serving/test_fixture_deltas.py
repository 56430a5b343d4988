"""The OpenAI delta convention for every backend × bundled conformance transcript.

Through `OutputProcessor` chunk streams: role first and once; per call a first
delta with a dense index, id, type and name and later ones with neither;
no empty delta but the role and final chunks; `finish_reason` ``tool_calls``
exactly when calls were sent. These are the processor's job and hold for
every backend. Whether a call's argument fragments join to valid JSON depends
on the backend's parser: builtin must always. A framework parser that breaks
it is an expected failure only when that exact divergence is recorded in
reviewed data: a fixture's `known_divergences` for the backend, or the
baseline `delta_divergences.json` beside this file (per framework release,
transcript and chunking). Any other divergence fails: an adapter change that
broke argument JSON cannot stay green.

The baseline is written by a run with ``PARSEBRIDGE_RECORD_DELTAS=1`` (it adds
what this release shows, keeps the other releases' entries); its diff is
what a reviewer reads before committing it.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _convention import check_convention

import parsebridge as pb
from parsebridge.conformance.transcripts import Transcript, bundled_transcripts
from parsebridge.serving import OutputProcessor

# Loading the bundled fixtures is part of what is tested: an error here fails collection.
TRANSCRIPTS: list[Transcript] = bundled_transcripts()
BASELINE = Path(__file__).with_name("delta_divergences.json")
RECORD = bool(os.environ.get("PARSEBRIDGE_RECORD_DELTAS"))
#: release key ("vllm 0.33.0") → transcript id → divergences seen, filled in record mode.
_RECORDED: dict[str, dict[str, list[str]]] = {}


@functools.cache
def baseline() -> dict[str, dict[str, list[str]]]:
    """The reviewed divergences: release key → transcript id → divergence lines."""
    data: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return data["divergences"]


@functools.cache
def release(backend: str) -> str:
    """The baseline's key for the installed framework: ``"vllm 0.33.0"``."""
    return f"{backend} {pb.get_backend(backend).version()}"


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


CASES = [(b, t) for b in BACKENDS for t in TRANSCRIPTS]


@pytest.mark.parametrize(
    ("backend", "transcript"),
    CASES,
    ids=[f"{b}-{t.id}" for b, t in CASES],
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
            divergences.append(f"{name}: call {i} ({call['name']}) arguments are not a JSON object")
    if not divergences:
        return
    if backend == "builtin":
        pytest.fail("; ".join(divergences))
    judge_divergences(backend, transcript, divergences)


def judge_divergences(backend: str, transcript: Transcript, divergences: list[str]) -> None:
    """Xfail a framework divergence recorded in reviewed data; fail any other (or record it)."""
    known = [
        k for k in transcript.known_divergences if k.backend == backend or k.backend.startswith(f"{backend}:")
    ]
    if known:
        pytest.xfail(
            f"{backend} divergence documented in the fixture ({known[0].reason}): {'; '.join(divergences)[:300]}"
        )
    if RECORD:
        _RECORDED.setdefault(release(backend), {})[transcript.id] = divergences
        pytest.xfail(f"recorded for {release(backend)}: {'; '.join(divergences)[:300]}")
    recorded = baseline().get(release(backend), {}).get(transcript.id, [])
    new = [d for d in divergences if d not in recorded]
    if new:
        pytest.fail(
            f"{release(backend)}: divergence not in {BASELINE.name} (a regression, or record it with "
            f"PARSEBRIDGE_RECORD_DELTAS=1 and have the diff reviewed): {'; '.join(new)[:800]}"
        )
    pytest.xfail(f"{release(backend)} divergence recorded in {BASELINE.name}: {'; '.join(divergences)[:300]}")


@pytest.fixture(scope="module", autouse=True)
def _write_recorded():  # type: ignore[no-untyped-def]
    """In record mode, merge what this run saw into the baseline (each release's entry replaced whole)."""
    yield
    if not RECORD or not _RECORDED:
        return
    data = json.loads(BASELINE.read_text(encoding="utf-8"))
    for key, seen in _RECORDED.items():
        data["divergences"][key] = dict(sorted(seen.items()))
    data["divergences"] = dict(sorted(data["divergences"].items()))
    BASELINE.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_fixture_cases_exist() -> None:
    """Guard against the parametrisation silently collapsing to nothing."""
    assert any(t.kind == "tool" for t in TRANSCRIPTS)
    assert json.dumps(TRANSCRIPTS[0].model_dump())  # JSON-serialisable, as the fixtures promise


def test_baseline_names_only_bundled_transcripts() -> None:
    """The recorded divergences are reviewed data about real transcripts, under releases of real backends."""
    ids = {t.id for t in TRANSCRIPTS}
    for key, per in baseline().items():
        backend, _, version = key.partition(" ")
        assert backend in ("vllm", "sglang") and version, key
        assert set(per) <= ids, f"{key}: unknown transcripts {sorted(set(per) - ids)}"
        assert all(per.values()), key


def test_an_unrecorded_divergence_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge fails a divergence nobody recorded, and xfails only the one the baseline names."""
    monkeypatch.setattr(sys.modules[__name__], "RECORD", False)  # its made-up divergences are never recorded
    t = next(t for t in TRANSCRIPTS if t.kind == "tool" and not t.known_divergences)
    seen = ["tok1: call 0 (x) arguments are not a JSON object"]
    monkeypatch.setattr(sys.modules[__name__], "baseline", lambda: {release("vllm"): {t.id: seen}})
    with pytest.raises(pytest.xfail.Exception, match="recorded in"):
        judge_divergences("vllm", t, seen)
    with pytest.raises(pytest.fail.Exception, match=r"not in delta_divergences\.json.*char7"):
        judge_divergences("vllm", t, [*seen, "char7: the parser raised"])
    monkeypatch.setattr(sys.modules[__name__], "baseline", lambda: {})
    with pytest.raises(pytest.fail.Exception, match="tok1: call 0"):
        judge_divergences("vllm", t, seen)

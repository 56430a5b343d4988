"""The consensus check: where vLLM and SGLang agree, builtin agrees, or the reviewed list says why not."""

from __future__ import annotations

import pytest

from parsebridge.adapters import get_backend
from parsebridge.conformance.consensus import (
    FRAMEWORKS,
    Outcome,
    check,
    consensus_corpus,
    consensus_families,
    load_reviewed,
    run_consensus,
    summary,
)
from parsebridge.conformance.consensus.check import judge
from parsebridge.conformance.transcripts import Transcript

CALL = {"name": "get_weather", "arguments": {"location": "Paris"}}


def _r(content: str | None = None, calls: list[dict] | None = None, reasoning: str | None = None) -> dict:
    return {"reasoning": reasoning, "content": content, "tool_calls": calls or []}


def _t(variant: str = "text-after") -> Transcript:
    return Transcript(
        id=f"tool:hermes/{variant}", family="hermes", kind="tool", output="x", tags=["consensus"]
    )


def test_corpus_is_deterministic_with_unique_ids() -> None:
    a, b = consensus_corpus(["hermes", "qwen3"]), consensus_corpus(["hermes", "qwen3"])
    assert [t.id for t in a] == [t.id for t in b]
    assert [t.output for t in a] == [t.output for t in b]
    assert len({t.id for t in a}) == len(a)
    ids = {t.id for t in a}
    for variant in ("text-after", "text-between", "missing-start", "eos-0", "typed-parameters"):
        assert f"tool:hermes/{variant}" in ids
    assert any(i.startswith("tool:hermes/truncated@") for i in ids)
    assert "reasoning:qwen3/prompt-opened-tool-section-0" in ids
    assert any(i == "tool:hermes/hermes-single" for i in ids)  # a bundled fixture


def test_every_consensus_family_has_a_corpus() -> None:
    corpus = consensus_corpus()
    have = {t.id.split("/", 1)[0] for t in corpus}
    for fam in consensus_families():
        assert f"{fam.kind}:{fam.name}" in have, fam.name


def test_judge_finds_a_consensus_and_builtin_disagreeing() -> None:
    o = judge(_t(), {"vllm": _r(None, [CALL]), "sglang": _r(" ", [CALL]), "builtin": _r("Done.", [CALL])}, {})
    assert o.consensus and o.disagrees and o.classes == ("content_differs",)
    assert o.group == "text-after: content_differs"


def test_judge_without_consensus_or_with_an_error_judges_nothing() -> None:
    split = {"vllm": _r("a"), "sglang": _r("b"), "builtin": _r("c")}
    assert not judge(_t(), split, {}).consensus
    errored = {"vllm": None, "sglang": _r("a"), "builtin": _r("c")}
    assert not judge(_t(), errored, {"vllm": "boom"}).consensus


def test_check_names_unexplained_and_stale_cases() -> None:
    bad = Outcome("tool:hermes/text-after", "tool:hermes", "text-after", {}, consensus=True, agrees=False)
    good = Outcome("tool:hermes/one-call", "tool:hermes", "one-call", {}, consensus=True, agrees=True)
    empty = load_reviewed("exceptions: []\nbaseline: []\n")
    assert [o.id for o in check([bad, good], empty).unexplained] == ["tool:hermes/text-after"]
    listed = load_reviewed("baseline:\n- reason: r\n  cases: ['tool:hermes/text-*', tool:hermes/one-call]\n")
    verdict = check([bad, good], listed)
    assert verdict.unexplained == [] and verdict.stale == ["tool:hermes/one-call"]
    assert not verdict.ok
    assert summary([bad, good]) == {"tool:hermes": {"cases": 2, "consensus": 2, "disagree": 1}}


def test_reviewed_list_is_reviewed() -> None:
    reviewed = load_reviewed()
    assert len(reviewed.exceptions) <= 20
    for entry in reviewed.entries:
        assert entry.reason and entry.reason != "unreviewed", entry
        assert entry.cases


@pytest.mark.xfail(
    strict=True,
    reason="issue 27: under conventions='servers' 12 cases remain in the baseline (Qwen3/GLM-4.5 reasoning start, "
    "two Kimi K3 reasoning bugs)",
)
def test_no_baseline_remains() -> None:
    assert load_reviewed().baseline == ()


def _frameworks_missing() -> str | None:
    for name in FRAMEWORKS:
        reason = get_backend(name).unavailable_reason()
        if reason is not None:
            return f"{name}: {reason}"
    return None


@pytest.mark.framework
def test_builtin_agrees_with_vllm_and_sglang_consensus() -> None:
    missing = _frameworks_missing()
    if missing:
        pytest.skip(f"needs both vLLM and SGLang installed ({missing})")
    reviewed = load_reviewed()
    outcomes = run_consensus(consensus_corpus())
    verdict = check(outcomes, reviewed)
    unexplained = [f"{o.id} [{', '.join(o.classes)}]" for o in verdict.unexplained]
    assert not unexplained, (
        f"builtin differs from a vLLM+SGLang consensus (recorded on {reviewed.versions}) "
        "on cases the reviewed list does not name:\n" + "\n".join(unexplained)
    )
    assert not verdict.stale, f"listed in consensus.yaml but agreeing now (remove them): {verdict.stale}"

"""The consensus check: where vLLM and SGLang agree, builtin agrees, or the reviewed list says why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsebridge.adapters import get_backend
from parsebridge.conformance.consensus import (
    FRAMEWORKS,
    Outcome,
    check,
    consensus_corpus,
    consensus_families,
    frameworks_missing,
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
    bad.classes = ("content_differs",)
    empty = load_reviewed("exceptions: []\nbaseline: []\n")
    assert [o.id for o in check([bad, good], empty).unexplained] == ["tool:hermes/text-after"]
    listed = load_reviewed(
        "baseline:\n- reason: r\n  cases: {tool:hermes/text-after: [content_differs], tool:hermes/one-call: []}\n"
    )
    verdict = check([bad, good], listed)
    assert verdict.unexplained == [] and verdict.stale == ["tool:hermes/one-call"]
    assert not verdict.ok
    assert summary([bad, good]) == {"tool:hermes": {"cases": 2, "consensus": 2, "disagree": 1}}


def test_an_entry_explains_a_case_only_with_the_classes_it_pins() -> None:
    bad = Outcome(
        "tool:hermes/text-after",
        "tool:hermes",
        "text-after",
        {},
        consensus=True,
        agrees=False,
        classes=("content_differs", "extra_call"),
    )
    listed = load_reviewed("exceptions:\n- reason: r\n  cases: {tool:hermes/text-after: [content_differs]}\n")
    verdict = check([bad], listed)
    assert [o.id for o in verdict.unexplained] == ["tool:hermes/text-after"] and not verdict.ok
    assert verdict.changed == [
        "tool:hermes/text-after: pinned ['content_differs'] -> now ['content_differs', 'extra_call']"
    ]
    with pytest.raises(ValueError, match="must map each case id"):
        load_reviewed("exceptions:\n- reason: r\n  cases: [tool:hermes/text-after]\n")


def test_the_docs_page_counts_what_the_run_and_the_list_say() -> None:
    from parsebridge.conformance.consensus.page import render_page

    bad = Outcome("tool:hermes/text-after", "tool:hermes", "text-after", {}, consensus=True, agrees=False)
    good = Outcome("tool:hermes/one-call", "tool:hermes", "one-call", {}, consensus=True, agrees=True)
    split = Outcome("tool:hermes/eos-0", "tool:hermes", "eos-0", {}, consensus=False)
    listed = load_reviewed("exceptions:\n- reason: 'text | after'\n  cases: {tool:hermes/text-after: []}\n")
    page = render_page(
        [bad, good, split], listed, check([bad, good, split], listed), {"vllm": "1", "sglang": "2"}
    )
    assert "(vllm 1, sglang 2)" in page
    assert "| `tool:hermes` | 3 | 2 | 1 | 1 | 0 | 0 |" in page
    assert "1. text \\| after — 1 case (`tool:hermes`)" in page
    assert "This run: 3 cases, 2 with a consensus; builtin agrees on 1, and 1 are named" in page


#: The caps count cases, not entries; they only go down (issue 39: at most 40 exceptions, no baseline).
MAX_EXCEPTION_CASES = 17
MAX_BASELINE_CASES = 0


def test_reviewed_list_is_reviewed() -> None:
    from parsebridge.conformance.consensus.verify import VERIFIERS

    reviewed = load_reviewed()
    assert reviewed.case_count("exception") <= MAX_EXCEPTION_CASES
    assert reviewed.case_count("baseline") <= MAX_BASELINE_CASES
    for entry in reviewed.entries:
        assert entry.reason and entry.reason != "unreviewed", entry
        assert entry.cases and all(cls for _, cls in entry.pins), entry.reason
    for entry in (*reviewed.exceptions, *reviewed.divergences):  # each re-checked on both servers
        assert entry.verify in VERIFIERS, (entry.reason, entry.verify)
    ids = [c for e in reviewed.entries for c in e.cases]
    assert len(ids) == len(set(ids)), "a case is listed twice"


def test_the_verifiers_say_when_the_servers_do_not_contradict_themselves() -> None:
    from parsebridge.conformance.consensus.verify import (
        streams_announce_calls,
        streams_send_reasoning,
        streams_show_call_once,
    )

    call = [{"name": "get_weather", "arguments": {}}]
    assert streams_announce_calls(_r("a"), _r("", call), _r("", call)) is None
    assert "no contradiction" in (streams_announce_calls(_r("", call), _r("", call), _r("", call)) or "")
    assert "announced []" in (streams_announce_calls(_r("a"), _r("a"), _r("", call)) or "")
    said, shown = _r("x", reasoning="I should."), _r("x", reasoning="Hi. I should.")
    assert streams_send_reasoning(said, shown, _r("x", reasoning="Hi. <x>I should.")) is None
    assert "lacks ['Hi']" in (streams_send_reasoning(said, shown, said) or "")
    assert "no contradiction" in (streams_send_reasoning(shown, shown, shown) or "")
    head, text = "function call:", 'function call:{"name": "get_weather", "arguments": {}}'
    assert streams_show_call_once(_r(text, call), _r(head, call), _r(head, call)) is None
    assert "no contradiction" in (
        streams_show_call_once(_r(head, call), _r(head, call), _r(head, call)) or ""
    )
    assert "no contradiction" in (
        streams_show_call_once(_r(head + " Done.", call), _r(head, call), _r(head, call)) or ""
    )
    assert "builtin's is None" in (
        streams_show_call_once(_r(text, call), _r(head, call), _r(None, call)) or ""
    )
    assert "calls:" in (streams_show_call_once(_r(text), _r(head, call), _r(head, call)) or "")


@pytest.fixture(scope="module")
def consensus_run():  # type: ignore[no-untyped-def]
    """One run of the whole corpus through the three backends (~20 s), shared by the tests below."""
    missing = frameworks_missing()
    if missing:
        pytest.skip(f"needs both vLLM and SGLang installed ({missing})")
    from parsebridge.conformance.consensus.voices import add_voices

    reviewed = load_reviewed()
    corpus = consensus_corpus()
    outcomes = run_consensus(corpus)
    add_voices(outcomes, corpus)  # Dynamo's and smg's readings beside them, where installed
    return outcomes, reviewed, check(outcomes, reviewed)


@pytest.mark.framework
def test_builtin_agrees_with_vllm_and_sglang_consensus(consensus_run) -> None:  # type: ignore[no-untyped-def]
    _, reviewed, verdict = consensus_run
    unexplained = [f"{o.id} [{', '.join(o.classes)}]" for o in verdict.unexplained]
    assert not unexplained, (
        f"builtin differs from a vLLM+SGLang consensus (recorded on {reviewed.versions}) "
        "on cases the reviewed list does not name:\n" + "\n".join(unexplained)
    )
    assert not verdict.stale, f"listed in consensus.yaml but agreeing now (remove them): {verdict.stale}"
    assert not verdict.changed, f"listed cases that now differ in other classes: {verdict.changed}"


@pytest.mark.framework
def test_every_exception_is_a_contradiction_of_the_servers_streams() -> None:
    """Each exception's stated server behaviour, re-checked case by case on both frameworks' streams."""
    missing = frameworks_missing()
    if missing:
        pytest.skip(f"needs both vLLM and SGLang installed ({missing})")
    from parsebridge.conformance.consensus.verify import verify_exceptions

    reviewed = load_reviewed()
    entries = (*reviewed.exceptions, *reviewed.divergences)
    wanted = sorted({c.split("/", 1)[0].split(":", 1)[1] for e in entries for c in e.cases})
    problems = verify_exceptions(reviewed, consensus_corpus(wanted))
    assert not problems, "reviewed exceptions whose reason does not hold:\n" + "\n".join(problems)


@pytest.mark.framework
def test_the_docs_page_is_this_runs(consensus_run) -> None:  # type: ignore[no-untyped-def]
    from parsebridge.conformance.consensus.baseline import framework_versions
    from parsebridge.conformance.consensus.page import COMMAND, render_page
    from parsebridge.conformance.consensus.voices import voice_versions

    voices = voice_versions()
    if missing := [name for name, version in voices.items() if version is None]:
        # (the page is generated where every voice reads the cases too: the tox env `all`)
        pytest.skip(f"the page holds Dynamo's and smg's readings; not installed here: {missing}")
    outcomes, reviewed, verdict = consensus_run
    page = Path(__file__).resolve().parents[2] / "docs" / "consensus.md"
    want = render_page(outcomes, reviewed, verdict, framework_versions(), voices)
    assert page.read_text(encoding="utf-8") == want, f"docs/consensus.md is stale: run `{COMMAND}`"


K3_TEXT_BEFORE_OPENER = (
    "Hi. <|open|>think<|sep|>I should check the weather.<|close|>think<|sep|>"
    "<|open|>response<|sep|>It is sunny.<|close|>response<|sep|><|close|>message<|sep|>"
)


@pytest.mark.framework
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_kimi_k3_exception_reason_still_holds(framework: str) -> None:
    """The reviewed Kimi K3 exception says each server's one-shot reading drops the text before a later
    think opener while its own stream sends it as reasoning; builtin streams what it parses."""
    backend = get_backend(framework)
    reason = backend.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{framework}: {reason}")
    if "kimi_k3" not in backend.reasoning_parser_names():
        pytest.skip(f"{framework} {backend.version()} has no kimi_k3 reasoning parser (it came later)")
    import parsebridge as pb

    text = K3_TEXT_BEFORE_OPENER
    for spec, want in ((f"{framework}:kimi_k3", "I should check the weather."), ("builtin:kimi_k3", None)):
        parser = pb.get_reasoning_parser(spec)
        one_shot = parser.parse(text).reasoning
        stream = parser.stream()
        streamed = "".join(stream.feed(text[i : i + 3]).reasoning or "" for i in range(0, len(text), 3))
        if want is not None:  # the server: the one-shot drops "Hi. ", the stream has sent it
            assert one_shot == want and streamed.startswith("Hi. "), (spec, one_shot, streamed)
        else:  # builtin: the stream's whole reading is its one-shot reading, nothing dropped
            assert stream.finish().reasoning == one_shot and streamed.startswith("Hi. ")
            assert one_shot is not None and one_shot.startswith("Hi. ")


def test_the_command_without_both_frameworks_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from parsebridge.conformance.consensus import __main__ as command

    monkeypatch.setattr(command, "frameworks_missing", lambda: "vllm: module 'vllm' is not installed")
    page = tmp_path / "consensus.md"
    assert command.main(["--markdown", str(page)]) == 2
    err = capsys.readouterr().err
    assert "vllm: module 'vllm' is not installed" in err and "parsebridge install-framework all" in err
    assert not page.exists()  # no page of zero consensus cases


@pytest.mark.framework
def test_the_conformance_report_has_the_consensus_column(tmp_path: Path) -> None:
    missing = frameworks_missing()
    if missing:
        pytest.skip(f"needs both vLLM and SGLang installed ({missing})")
    import json

    from parsebridge.cli import main

    rep = tmp_path / "rep"
    args = [
        "conformance",
        "-q",
        "--family",
        "hermes",
        "--family",
        "qwen3",
        "--chunking",
        "oneshot",
        "--report",
        str(rep),
    ]
    assert main(args) == 0
    report = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    hermes, qwen3 = report["consensus"]["tool:hermes"], report["consensus"]["reasoning:qwen3"]
    # every hermes case builtin reads otherwise than the servers is a reviewed one (consensus.yaml: a call
    # whose arguments are not a JSON object, which both servers return and builtin does not)
    assert hermes["consensus"] > 0 and not hermes["unexplained"]
    assert hermes["agrees"] + hermes["reviewed"] == hermes["consensus"]
    # qwen3's no-think fixture expects the lossless reading (content); both servers and builtin's default read reasoning
    assert qwen3["agrees"] == qwen3["consensus"] > 0 and not qwen3["unexplained"]
    md = (rep / "report.md").read_text(encoding="utf-8")
    cell = f"{hermes['agrees']}/{hermes['consensus']}" + (
        f" ({hermes['reviewed']} reviewed)" if hermes["reviewed"] else ""
    )
    assert "consensus (builtin default)" in md and f"| {cell} |" in md


@pytest.mark.framework
def test_the_column_reuses_the_runs_framework_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's column takes vLLM's and SGLang's one-shot readings from the run: only builtin
    (read lossless by the run, servers by the column) is read again, and the column is the same."""
    missing = frameworks_missing()
    if missing:
        pytest.skip(f"needs both vLLM and SGLang installed ({missing})")
    from parsebridge.conformance.consensus import column
    from parsebridge.conformance.runner import Runner, run_conformance
    from parsebridge.conformance.transcripts import bundled_transcripts

    transcripts = bundled_transcripts(["hermes", "qwen3", "deepseek_r1"])
    results = run_conformance(["builtin", *FRAMEWORKS], transcripts, ["oneshot", "char"])
    fresh = column.consensus_column(transcripts)
    read_again: list[str] = []
    original = Runner.run_transcript

    def counting(self: Runner, target, transcript, chunkings=None, **kw):  # type: ignore[no-untyped-def]
        read_again.append(target.backend)
        return original(self, target, transcript, chunkings, **kw)

    monkeypatch.setattr(Runner, "run_transcript", counting)
    reused = column.consensus_column(transcripts, results)
    assert reused == fresh and fresh["tool:hermes"]["consensus"] > 0
    assert set(read_again) == {"builtin"} and len(read_again) == len(transcripts)
    # a run without a one-shot chunking holds no one-shot readings: the frameworks are read again
    streamed = [r for r in results if r.chunking == "char"]
    read_again.clear()
    assert column.consensus_column(transcripts, streamed) == fresh
    assert read_again.count("vllm") == read_again.count("sglang") == len(transcripts)


# ---------------------------------------------------------------- Dynamo and smg: the third and fourth voices


def _voiced(variant: str, consensus: bool, agrees: bool, **readings: dict) -> Outcome:
    return Outcome(
        f"tool:hermes/{variant}", "tool:hermes", variant, dict(readings), consensus=consensus, agrees=agrees
    )


def test_voices_stances_count_agreement_difference_and_siding_with_builtin() -> None:
    from parsebridge.conformance.consensus.voices import stances

    call, text = _r(None, [CALL]), _r("Done.", [CALL])
    outcomes = [
        _voiced("a", True, True, vllm=call, sglang=call, builtin=call, dynamo=call, smg=text),
        _voiced("b", True, False, vllm=call, sglang=call, builtin=text, dynamo=text, smg=None),
        _voiced("c", False, True, vllm=call, sglang=text, builtin=call, dynamo=text),
    ]
    got = stances(outcomes)
    dyn, smg = got["dynamo"]["tool:hermes"], got["smg"]["tool:hermes"]
    assert (dyn.read, dyn.consensus, dyn.agrees, dyn.against) == (3, 2, 1, 1)
    assert dyn.with_builtin == ["tool:hermes/b"] and dict(dyn.differs) == {"content_differs": 1}
    assert (dyn.split, dyn.split_vllm, dyn.split_sglang) == (1, 0, 1)
    assert (smg.read, smg.errors, smg.consensus, smg.agrees, smg.with_builtin) == (2, 1, 1, 0, [])


def test_the_page_names_a_missing_voice_and_renders_the_same_without_it() -> None:
    from parsebridge.conformance.consensus.page import render_page

    good = _voiced("one-call", True, True, vllm=_r(None, [CALL]), sglang=_r(None, [CALL]))
    listed = load_reviewed("exceptions: []\n")
    args = ([good], listed, check([good], listed), {"vllm": "1", "sglang": "2"})
    page = render_page(*args, {"dynamo": None, "smg": None})
    assert page == render_page(*args, {"dynamo": None, "smg": None})
    assert "Dynamo is not installed where this page was generated" in page
    assert "smg is not installed where this page was generated" in page
    assert "## Dynamo and smg" not in render_page(*args)  # no voices asked for: no section


def test_the_consensus_env_has_both_voices() -> None:
    """tox's `all` env installs Dynamo and smg beside vLLM and SGLang: the page's voices are never missing there."""
    import os

    if os.environ.get("TOX_ENV_NAME") != "all":
        pytest.skip("only the tox env `all` promises every framework")
    from parsebridge.conformance.consensus.voices import voice_versions

    assert all(voice_versions().values()), voice_versions()

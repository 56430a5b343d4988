"""OutputProcessor in-process: one-shot messages, the chunk convention, tool_choice, failure policy."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from _convention import TOOLS, check_convention, norm_calls, norm_text

import parsebridge as pb
from parsebridge import BackendError, ReasoningParserConfig, ToolCallParserConfig
from parsebridge.serving import (
    SSE_DONE,
    EngineOutput,
    OutputProcessor,
    RequiredArrayStage,
    from_args,
)

HERE = Path(__file__).parent
TRANSCRIPTS = {
    t["id"]: t
    for t in (json.loads(line) for line in (HERE / "transcripts.jsonl").read_text().splitlines() if line)
}
TAG = "python:pbserving_testparsers:TagTool"
BOMB = "python:pbserving_testparsers:Bomb"


def _builtin_hermes_available() -> bool:
    try:
        pb.get_tool_parser("builtin:hermes")
    except Exception:
        return False
    return True


#: Tool parsers of the builtin/python backends to run the convention checks with.
TOOL_SPECS = [TAG] + (["builtin:hermes"] if _builtin_hermes_available() else [])
CHUNKINGS = [1, 3, 7, 20, 10_000]


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def run_stream(
    proc: OutputProcessor, text: str, size: int, finish: str | None = None, **req: Any
) -> list[dict]:
    stream = proc.stream(**req)
    out: list[dict] = []
    for piece in chunks_of(text, size):
        out += stream.feed(piece)
    out += stream.finish(finish)
    return out


def expected_of(tid: str) -> dict[str, Any]:
    exp = TRANSCRIPTS[tid]["expected"]
    return {
        "reasoning": norm_text(exp["reasoning"]),
        "content": norm_text(exp["content"]),
        "calls": [(c["name"], c["arguments"]) for c in exp["tool_calls"]],
    }


AUTO_IDS = ["sv-weather-reasoning", "sv-two-calls", "sv-plain-answer", "sv-started-in-prompt"]


# ----------------------------------------------------------------------------- one-shot


@pytest.mark.parametrize("tool", TOOL_SPECS)
@pytest.mark.parametrize("tid", AUTO_IDS)
def test_oneshot_message(tool: str, tid: str) -> None:
    t = TRANSCRIPTS[tid]
    proc = OutputProcessor("builtin:qwen3", tool, tools=TOOLS)
    out = proc.parse(t["output"], reasoning_started=t.get("reasoning_started_in_prompt"))
    msg = out.message
    exp = expected_of(tid)
    assert msg["role"] == "assistant"
    assert norm_text(msg["content"]) == exp["content"]
    assert norm_text(msg.get("reasoning_content")) == exp["reasoning"]
    if exp["reasoning"] == "":
        assert "reasoning_content" not in msg
    calls = msg.get("tool_calls") or []
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == exp["calls"]
    assert all(c["type"] == "function" and c["id"] for c in calls)
    assert isinstance(calls[0]["function"]["arguments"], str) if calls else True
    assert out.finish_reason == ("tool_calls" if calls else "stop")


def test_response_dict_shape() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, model="m1")
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    body = proc.response(TRANSCRIPTS["sv-two-calls"]["output"], usage=usage, request_id="chatcmpl-x")
    assert body["id"] == "chatcmpl-x" and body["object"] == "chat.completion" and body["model"] == "m1"
    assert isinstance(body["created"], int) and body["usage"] == usage
    assert [c["index"] for c in body["choices"]] == [0]
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert "usage" not in proc.response("hi")


def test_length_passes_through() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    t = TRANSCRIPTS["sv-truncated"]
    out = proc.parse(t["output"], "length")
    assert out.finish_reason == "length" and out.message["reasoning_content"] == "Long thought that never"
    chunks = run_stream(proc, TRANSCRIPTS["sv-two-calls"]["output"], 5, "length")
    assert check_convention(chunks)["finish_reason"] == "length"


# ----------------------------------------------------------------------------- streaming convention


@pytest.mark.parametrize("tool", TOOL_SPECS)
@pytest.mark.parametrize("size", CHUNKINGS)
@pytest.mark.parametrize("tid", AUTO_IDS)
def test_stream_convention(tool: str, size: int, tid: str) -> None:
    t = TRANSCRIPTS[tid]
    proc = OutputProcessor("builtin:qwen3", tool, tools=TOOLS)
    chunks = run_stream(proc, t["output"], size, reasoning_started=t.get("reasoning_started_in_prompt"))
    got = check_convention(chunks)
    exp = expected_of(tid)
    assert norm_text(got["content"]) == exp["content"]
    assert norm_text(got["reasoning"]) == exp["reasoning"]
    assert norm_calls(got["tool_calls"]) == exp["calls"]
    assert got["finish_reason"] == ("tool_calls" if exp["calls"] else "stop")
    # one-shot and streamed agree
    one = proc.parse(t["output"], reasoning_started=t.get("reasoning_started_in_prompt")).message
    assert norm_text(one["content"]) == norm_text(got["content"])


def test_chunk_envelope_and_role_once() -> None:
    proc = OutputProcessor(None, TAG, tools=TOOLS, model="m2")
    stream = proc.stream(request_id="chatcmpl-abc")
    first = stream.feed("Hel")
    assert first[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert first[1]["choices"][0]["delta"] == {"content": "Hel"}
    for c in first:
        assert c["id"] == "chatcmpl-abc" and c["model"] == "m2" and c["object"] == "chat.completion.chunk"
    assert stream.feed("") == []  # nothing new: no chunk at all
    (lo,) = stream.feed("lo")
    assert lo["choices"][0]["delta"] == {"content": "lo"} and lo["choices"][0]["finish_reason"] is None
    final = stream.finish()
    assert final[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert stream.finish() == []  # idempotent
    assert stream.finished


def test_role_chunk_even_when_output_is_empty() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    chunks = proc.stream().finish()
    assert [c["choices"][0]["delta"] for c in chunks] == [{"role": "assistant", "content": ""}, {}]


def test_normalises_a_sloppy_backend() -> None:
    """A fragment before the name, the id sent twice, a sparse index: the client still sees the convention."""
    proc = OutputProcessor(None, "python:pbserving_testparsers:Sloppy", tools=TOOLS)
    stream = proc.stream()
    chunks = []
    for piece in ['{"a"', ": 1", ', "b": 2', "}"]:
        chunks += stream.feed(piece)
    chunks += stream.finish()
    got = check_convention(chunks)
    assert got["tool_calls"][0]["name"] == "f" and got["tool_calls"][0]["arguments"] == {"a": 1, "b": 2}
    assert got["tool_calls"][0]["id"] == "call_x"


def test_n_choices_have_separate_state() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    stream = proc.stream(n=2)
    text_a = TRANSCRIPTS["sv-weather-reasoning"]["output"]
    text_b = TRANSCRIPTS["sv-plain-answer"]["output"]
    chunks: list[dict] = stream.start()
    for i in range(max(len(text_a), len(text_b))):
        chunks += stream.feed(text_a[i : i + 1], index=0)
        chunks += stream.feed(text_b[i : i + 1], index=1)
    chunks += stream.finish("stop")
    a, b = check_convention(chunks, 0), check_convention(chunks, 1)
    assert norm_calls(a["tool_calls"]) == expected_of("sv-weather-reasoning")["calls"]
    assert a["finish_reason"] == "tool_calls"
    assert norm_text(b["content"]) == "The capital of France is Paris." and b["tool_calls"] == []
    assert b["finish_reason"] == "stop"


def test_cumulative_engine() -> None:
    text = TRANSCRIPTS["sv-weather-reasoning"]["output"]
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, cumulative=True)
    stream = proc.stream()
    chunks: list[dict] = []
    for end in range(0, len(text) + 5, 5):
        chunks += stream.feed(text[:end])
    chunks += stream.finish()
    got = check_convention(chunks)
    assert norm_calls(got["tool_calls"]) == expected_of("sv-weather-reasoning")["calls"]
    assert norm_text(got["content"]) == "Let me check."


def test_sse_driver_with_usage() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    text = TRANSCRIPTS["sv-two-calls"]["output"]
    outputs = [EngineOutput(p) for p in chunks_of(text, 6)]
    lines = list(
        proc.stream().sse(outputs, usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3})
    )
    assert lines[-1] == SSE_DONE and all(
        line.startswith("data: ") and line.endswith("\n\n") for line in lines
    )
    objs = [json.loads(line[6:]) for line in lines[:-1]]
    assert objs[-1]["choices"] == [] and objs[-1]["usage"]["total_tokens"] == 3
    assert len(check_convention(objs[:-1])["tool_calls"]) == 2


# ----------------------------------------------------------------------------- reasoning start state


def test_reasoning_started_derived_from_prompt() -> None:
    t = TRANSCRIPTS["sv-started-in-prompt"]
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    opened = proc.parse(t["output"], prompt="<|im_start|>assistant\n<think>\n").message
    assert opened["reasoning_content"] == "I should search for it."
    closed = proc.parse(t["output"], prompt="<|im_start|>assistant\n<think>\n\n</think>\n\n").message
    assert "reasoning_content" not in closed
    assert proc.resolve_reasoning_started(True, "<think></think>") is True
    chunks = run_stream(proc, t["output"], 4, prompt="...<think>\n")
    assert check_convention(chunks)["reasoning"] == "I should search for it."
    # A prompt with neither marker says nothing: the parser's default decides. Under
    # conventions="servers" (the default) Qwen3 starts inside reasoning, as vLLM's and
    # SGLang's qwen3 parsers do; under "lossless", where its template does not open it.
    assert proc.resolve_reasoning_started(None, "no markers here") is True
    assert (
        proc.parse(t["output"], prompt="no markers here").message["reasoning_content"]
        == "I should search for it."
    )
    lossless = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, conventions="lossless")
    assert lossless.resolve_reasoning_started(None, "no markers here") is False
    assert "reasoning_content" not in lossless.parse(t["output"], prompt="no markers here").message


def test_request_chat_template_kwargs_reach_the_parsers() -> None:
    """A request's chat_template_kwargs decide the start state as the processor's own would; None and the
    processor's own value keep the processor; each other value builds one processor, reused."""
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    off = {"enable_thinking": False}
    assert proc.parse("plain answer").message["reasoning_content"] == "plain answer"
    assert proc.parse("plain answer", chat_template_kwargs=off).message["content"] == "plain answer"
    assert (
        proc.request(chat_template_kwargs=off).processor is proc.request(chat_template_kwargs=off).processor
    )
    assert proc.request(chat_template_kwargs=None).processor is proc
    own = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, chat_template_kwargs=off)
    assert own.request(chat_template_kwargs=dict(off)).processor is own
    assert own.parse("x", chat_template_kwargs={"enable_thinking": True}).message["reasoning_content"] == "x"


# ----------------------------------------------------------------------------- tool_choice


def test_tool_choice_none_means_no_tool_parsing() -> None:
    t = TRANSCRIPTS["sv-weather-reasoning"]
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    msg, finish = proc.message(t["output"], tool_choice="none")
    assert "tool_calls" not in msg and "<tool_call>" in msg["content"] and finish == "stop"
    assert msg["reasoning_content"] == "The user wants the weather. I'll call the tool."
    got = check_convention(run_stream(proc, t["output"], 5, tool_choice="none"))
    assert got["tool_calls"] == [] and "<tool_call>" in got["content"]


def test_no_tools_in_request_means_no_tool_parsing() -> None:
    t = TRANSCRIPTS["sv-two-calls"]
    proc = OutputProcessor("builtin:qwen3", TAG)
    msg, finish = proc.message(t["output"])
    assert "tool_calls" not in msg and finish == "stop"


@pytest.mark.parametrize("size", CHUNKINGS)
def test_tool_choice_required(size: int) -> None:
    t = TRANSCRIPTS["sv-required-json"]  # thinking turned off by the template (its prompt)
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    got = check_convention(run_stream(proc, t["output"], size, tool_choice="required", prompt=t["prompt"]))
    exp = expected_of("sv-required-json")
    assert norm_calls(got["tool_calls"]) == exp["calls"] and got["content"] is None
    assert got["finish_reason"] == "tool_calls"
    msg, finish = proc.message(t["output"], tool_choice="required", prompt=t["prompt"])
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg["tool_calls"]
    ] == exp["calls"]
    assert msg["content"] is None and finish == "tool_calls"


@pytest.mark.parametrize("size", CHUNKINGS)
def test_tool_choice_named(size: int) -> None:
    t = TRANSCRIPTS["sv-named-json"]
    choice = {"type": "function", "function": {"name": "get_weather"}}
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    got = check_convention(run_stream(proc, t["output"], size, tool_choice=choice))
    exp = expected_of("sv-named-json")
    assert norm_calls(got["tool_calls"]) == exp["calls"] and got["content"] is None
    assert got["reasoning"] == "Berlin, metric." and got["finish_reason"] == "tool_calls"
    msg, finish = proc.message(t["output"], tool_choice=choice)
    assert msg["tool_calls"][0]["function"]["name"] == "get_weather" and finish == "tool_calls"
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"city": "Berlin", "unit": "celsius"}
    stop = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, named_finish_reason="stop")
    assert stop.message(t["output"], tool_choice=choice)[1] == "stop"


def test_named_tool_must_be_declared() -> None:
    proc = OutputProcessor(None, TAG, tools=TOOLS)
    with pytest.raises(ValueError, match="not among"):
        proc.request(tool_choice={"type": "function", "function": {"name": "nope"}})
    with pytest.raises(ValueError, match="tool_choice"):
        proc.request(tool_choice="sometimes")
    with pytest.raises(ValueError, match="needs the request's tools"):
        proc.request(tools=[], tool_choice="required")


def test_named_empty_output_is_no_call() -> None:
    proc = OutputProcessor(None, None, tools=TOOLS)
    choice = {"type": "function", "function": {"name": "get_time"}}
    msg, finish = proc.message("  \n", tool_choice=choice)
    assert "tool_calls" not in msg and finish == "stop"


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ('[{"name": "a", "parameters": {"x": [1, {"y": "}"}]}}]', [("a", {"x": [1, {"y": "}"}]})], None),
        ('  [ {"parameters": {"k": 1}, "name": "b"} ]  ', [("b", {"k": 1})], None),
        ("I won't call a tool.", [], "I won't call a tool."),
        ('[{"name": "a", "parameters": {}}] trailing', [("a", {})], " trailing"),
        ('[{"name": "a", "parameters": null}]', [("a", {})], None),
        ("[]", [], None),
    ],
)
def test_required_array_stage(text: str, calls: list, content: str | None) -> None:
    for size in (1, 2, 5, len(text)):
        proc = OutputProcessor(None, None, tools=TOOLS)
        out = proc.parse(text, tool_choice="required")
        assert [(c.name, c.arguments) for c in out.result.tool_calls] == calls
        assert out.result.content == content
        stream = RequiredArrayStage()
        acc = pb.DeltaAccumulator()
        for piece in chunks_of(text, size):
            acc.add(stream.feed(piece))
        acc.add(stream.flush())
        assert [(c.name, c.arguments) for c in acc.tool_calls()] == calls
        assert acc.content == content


def test_required_truncated_call_is_kept_flagged() -> None:
    proc = OutputProcessor(None, None, tools=TOOLS)
    out = proc.parse('[{"name": "get_weather", "parameters": {"city": "Par', "length", tool_choice="required")
    (call,) = out.result.tool_calls
    assert call.name == "get_weather" and call.invalid_arguments == '{"city": "Par'
    assert out.finish_reason == "length"


def test_native_forced_format_uses_the_tool_parser() -> None:
    t = TRANSCRIPTS["sv-two-calls"]
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS, forced_format="native")
    msg, finish = proc.message(t["output"], tool_choice="required")
    assert [c["function"]["name"] for c in msg["tool_calls"]] == ["get_weather", "get_time"]
    assert finish == "tool_calls"


# ----------------------------------------------------------------------------- failure policy


def test_fallback_keeps_the_stream_usable(caplog: pytest.LogCaptureFixture) -> None:
    t = TRANSCRIPTS["sv-bomb"]
    proc = OutputProcessor(None, BOMB, tools=TOOLS, on_error="fallback")
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        chunks = run_stream(proc, t["output"], 6, request_id="chatcmpl-bomb")
    got = check_convention(chunks)
    assert got["finish_reason"] == "stop" and got["tool_calls"] == []
    assert got["content"] == t["output"]  # every byte lands in the content
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "chatcmpl-bomb" in messages and "python:bomb" in messages
    # one-shot: the whole output is content
    msg, finish = proc.message(t["output"])
    assert msg["content"] == t["output"] and finish == "stop"


def test_raise_ends_the_stream_in_band() -> None:
    t = TRANSCRIPTS["sv-bomb"]
    proc = OutputProcessor(None, BOMB, tools=TOOLS, on_error="raise")
    stream = proc.stream(request_id="chatcmpl-r")
    with pytest.raises(BackendError) as info:
        for piece in chunks_of(t["output"], 6):
            stream.feed(piece)
    assert info.value.backend == "python"
    lines = list(proc.stream(request_id="chatcmpl-r2").sse(chunks_of(t["output"], 6)))
    assert lines[-1] == SSE_DONE
    err = json.loads(lines[-2][6:])
    assert err["error"]["backend"] == "python" and err["error"]["request_id"] == "chatcmpl-r2"
    assert "bomb went off" in err["error"]["message"]
    first = json.loads(lines[0][6:])
    assert first["choices"][0]["delta"]["role"] == "assistant"  # what was parsed before the error was sent
    with pytest.raises(BackendError):
        proc.parse(t["output"])


def test_processor_is_shareable_across_requests() -> None:
    proc = OutputProcessor("builtin:qwen3", TAG, tools=TOOLS)
    a, b = proc.stream(), proc.stream()
    text = TRANSCRIPTS["sv-weather-reasoning"]["output"]
    ca, cb = [], []
    for piece in chunks_of(text, 3):
        ca += a.feed(piece)
        cb += b.feed(piece)
    ca += a.finish()
    cb += b.finish()
    assert norm_calls(check_convention(ca)["tool_calls"]) == norm_calls(check_convention(cb)["tool_calls"])
    # per-request tools build (and cache) a parser for that tool list
    other = [TOOLS[0]]
    assert proc.request(tools=other).tools == other


# ----------------------------------------------------------------------------- construction


def test_accepts_configs_and_parser_objects() -> None:
    rcfg = ReasoningParserConfig(backend="builtin", parser_name="qwen3")
    tcfg = ToolCallParserConfig(
        backend="python", python_module="pbserving_testparsers", python_class="TagTool"
    )
    a = OutputProcessor(rcfg, tcfg, tools=TOOLS)
    b = OutputProcessor(pb.get_reasoning_parser("builtin:qwen3"), pb.get_tool_parser(TAG, TOOLS), tools=TOOLS)
    text = TRANSCRIPTS["sv-weather-reasoning"]["output"]
    assert a.message(text)[0]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert b.message(text)[0]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert a.specs == ("builtin:qwen3", TAG)


def test_from_args() -> None:
    ap = argparse.ArgumentParser()
    pb.add_parser_arguments(ap)
    ns = ap.parse_args(
        ["--reasoning-parser", "qwen3", "--tool-call-parser", TAG, "--parser-on-error", "fallback"]
    )
    proc = OutputProcessor.from_args(ns, tools=TOOLS)
    assert proc.on_error == "fallback" and proc.specs == ("builtin:qwen3", TAG)
    assert from_args(ns, tools=TOOLS, tool_choice="required").tool_choice == "required"
    none = OutputProcessor.from_args(ap.parse_args([]))
    assert none.message("<think>x</think>y") == (
        {"role": "assistant", "content": "<think>x</think>y"},
        "stop",
    )


def test_lazy_export() -> None:
    assert pb.OutputProcessor is OutputProcessor


def test_repr_names_the_specs_like_a_parser() -> None:
    """It was the default `<parsebridge.serving.processor.OutputProcessor object at 0x…>`."""
    both = pb.OutputProcessor("builtin:qwen3", "builtin:hermes")
    assert repr(both) == "<OutputProcessor reasoning=builtin:qwen3 tool=builtin:hermes on_error=raise>"
    assert repr(pb.OutputProcessor(tool="builtin:hermes", on_error="fallback")) == (
        "<OutputProcessor tool=builtin:hermes on_error=fallback>"
    )
    assert (
        repr(pb.get_tool_parser("builtin:hermes")) == "<builtin:hermes on_error=raise>"
    )  # the style matched

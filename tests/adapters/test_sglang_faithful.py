"""`sglang:NAME` through parsebridge gives what SGLang gives when driven the server's way.

For each format, the same model output goes through parsebridge (one-shot,
and streamed at several chunkings: per character, 5 characters, seeded
random, whole, and per token) and through SGLang directly (`_sglang_direct`,
which does not use the adapter). Results must be equal. Whether they are
*correct* is the conformance suite's question; a known framework quirk shows
up identically on both sides (see `test_known_streaming_divergence`).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("sglang", reason="SGLang is not installed (parsebridge install-framework sglang-latest)")

import _sglang_direct as direct
from _sglang_cases import CHUNKINGS, REASONING_OUTPUTS, TOOL_OUTPUTS, TOOLS

import parsebridge as pb
from parsebridge.protocol import UnsupportedOptionError

pytestmark = pytest.mark.framework


def _pb_normal(result: Any) -> direct.Normal:
    calls = [
        (c.name, c.arguments if c.valid else c.invalid_arguments) for c in getattr(result, "tool_calls", [])
    ]
    return direct.normal(getattr(result, "reasoning", None), result.content, calls)


def _streamed(parser: Any, chunks: list[str], **kw: Any) -> Any:
    stream = parser.stream(**kw)
    for c in chunks:
        stream.feed(c)
    return stream.finish()


def _sg_tokenizer(parser: Any) -> Any:
    """The tokenizer parsebridge hands SGLang (only where the release's parsers take one)."""
    engine = parser.inner.engine if hasattr(parser, "inner") else parser.engine
    return engine._sglang_tokenizer()


@pytest.mark.parametrize("name", sorted(TOOL_OUTPUTS))
def test_tool_parser_matches_sglang(name: str) -> None:
    if name not in direct.tool_names():
        pytest.skip(f"SGLang here has no tool parser {name!r}")
    text = TOOL_OUTPUTS[name]
    tp = pb.get_tool_parser(f"sglang:{name}", tools=TOOLS)
    tok = _sg_tokenizer(tp)
    oneshot = _pb_normal(tp.parse(text))
    assert oneshot == direct.oneshot(name, None, TOOLS, text, tokenizer=tok)
    assert oneshot[2], f"{name}: the one-shot parse found no call in its own format"
    splits = {k: f(text) for k, f in CHUNKINGS.items()}
    splits["1-token"] = [c.text for c in tp.chunks(text, 1)]
    for label, chunks in splits.items():
        got = _pb_normal(_streamed(tp, chunks))
        assert got == direct.stream(name, None, TOOLS, chunks, tokenizer=tok), label


@pytest.mark.parametrize("name", sorted(REASONING_OUTPUTS))
def test_reasoning_parser_matches_sglang(name: str) -> None:
    if name not in direct.reasoning_names():
        pytest.skip(f"SGLang here has no reasoning parser {name!r}")
    text = REASONING_OUTPUTS[name]
    rp = pb.get_reasoning_parser(f"sglang:{name}")
    tok = _sg_tokenizer(rp)
    result = rp.parse(text)
    assert _pb_normal(result) == direct.oneshot(None, name, [], text, tokenizer=tok)
    assert result.reasoning, f"{name}: no reasoning found in its own format"
    if result.block is not None and result.block.located:
        b = result.block
        assert text[b.start_index : b.end_index] == (b.start_marker or "") + b.content + (b.end_marker or "")
    splits = {k: f(text) for k, f in CHUNKINGS.items()}
    splits["1-token"] = [c.text for c in rp.chunks(text, 1)]
    for label, chunks in splits.items():
        got = _pb_normal(_streamed(rp, chunks))
        assert got == direct.stream(None, name, [], chunks, tokenizer=tok), label


@pytest.mark.parametrize("started", [True, False])
@pytest.mark.parametrize("name", ["qwen3", "deepseek-r1"])
def test_reasoning_started_matches_sglang(name: str, started: bool) -> None:
    """reasoning_started=True is the template forcing reasoning; False leaves the request's decision."""
    text = "The user wants the weather.</think>It is sunny."
    rp = pb.get_reasoning_parser(f"sglang:{name}")
    engine = rp.inner.engine
    tok = _sg_tokenizer(rp)
    try:
        force = engine.force_reasoning(started)
    except UnsupportedOptionError:
        # Refused before parsing: SGLang's parser reads the text the same whether the request says
        # reasoning started or not, so "not started" cannot be expressed. Checked on SGLang itself.
        assert not started
        with pytest.raises(UnsupportedOptionError):
            rp.parse(text, reasoning_started=False)
        assert direct.oneshot(None, name, [], text, force=False, tokenizer=tok) == direct.oneshot(
            None, name, [], text, force=True, tokenizer=tok
        )
        return
    if started:
        assert force is True or "force_reasoning" not in engine.api.rp_accepts
    assert _pb_normal(rp.parse(text, reasoning_started=started)) == direct.oneshot(
        None, name, [], text, force=force, tokenizer=tok
    )
    for label, split in CHUNKINGS.items():
        chunks = split(text)
        got = _pb_normal(_streamed(rp, chunks, reasoning_started=started))
        assert got == direct.stream(None, name, [], chunks, force=force, tokenizer=tok), label


def test_reasoning_started_in_prompt() -> None:
    """A prompt ending in <think> starts the output inside reasoning (where the release can be told)."""
    rp = pb.get_reasoning_parser("sglang:qwen3")
    if "force_reasoning" not in rp.inner.engine.api.rp_accepts:
        pytest.skip("this SGLang release cannot be told that reasoning started in the prompt")
    text = "still thinking</think>answer"
    res = rp.parse(text, reasoning_started=True)
    assert (res.reasoning, res.content) == ("still thinking", "answer")
    assert res.block is not None and res.block.start_marker is None and res.block.end_marker == "</think>"
    streamed = _streamed(rp, list(text), reasoning_started=True)
    assert (streamed.reasoning, streamed.content) == ("still thinking", "answer")


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
def test_pipeline_matches_sglang_chain(chunking: str) -> None:
    """Reasoning then tools per chunk, as SGLang's server chains them."""
    text = "<think>Need the weather.</think>" + TOOL_OUTPUTS["qwen25"]
    pipe = pb.get_pipeline("sglang:qwen3", "sglang:qwen25", tools=TOOLS)
    assert type(pipe.inner).__name__ == "SglangPipeline"  # the native chain, under the failure policy
    tok = pipe.engine._sglang_tokenizer()
    assert _pb_normal(pipe.parse(text)) == direct.oneshot("qwen25", "qwen3", TOOLS, text, tokenizer=tok)
    chunks = CHUNKINGS[chunking](text)
    assert _pb_normal(_streamed(pipe, chunks)) == direct.stream(
        "qwen25", "qwen3", TOOLS, chunks, tokenizer=tok
    )


def test_stream_deltas_follow_openai_convention() -> None:
    """First delta of a call: index, id, name; later ones: argument fragments only."""
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    stream = tp.stream()
    deltas = [stream.feed(c) for c in TOOL_OUTPUTS["qwen25"]] + [stream.flush()]
    calls = [d for delta in deltas for d in delta.tool_calls]
    assert calls and calls[0].id and calls[0].name == "get_weather" and calls[0].index == 0
    assert all(d.id is None and d.name is None for d in calls[1:])
    assert not stream.accumulator.anomalies


def test_known_streaming_divergence() -> None:
    """Text right before a chunk that splits the call marker: recorded as SGLang behaves, on both sides."""
    text = TOOL_OUTPUTS["qwen25"]
    cut = text.index("<tool_call>") + 4
    chunks = [text[:cut], text[cut:]]
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    got = _pb_normal(_streamed(tp, chunks))
    assert got == direct.stream("qwen25", None, TOOLS, chunks, tokenizer=_sg_tokenizer(tp))


def test_call_ids_and_invalid_arguments() -> None:
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    res = tp.parse(TOOL_OUTPUTS["qwen25"].split("\n", 1)[1])
    assert res.content is None  # SGLang's "" or None both read as None
    (call,) = res.tool_calls
    assert call.id.startswith("call_") and call.arguments == {"city": "Paris", "days": 2}
    kimi = pb.get_tool_parser("sglang:kimi_k2", tools=TOOLS)
    (kcall,) = kimi.parse(TOOL_OUTPUTS["kimi_k2"]).tool_calls
    api = kimi.inner.engine.api
    assert (
        kcall.id.startswith("functions.get_weather:")
        if api.serving.kimi_ids
        else kcall.id.startswith("call_")
    )
    # Arguments that are no JSON object are flagged, not dropped.
    res = tp.parse('<tool_call>\n{"name": "get_weather", "arguments": "Paris"}\n</tool_call>')
    for c in res.tool_calls:
        assert c.valid or c.invalid_arguments


def test_no_tools_means_no_tool_parsing_unless_the_detector_says_so() -> None:
    tp = pb.get_tool_parser("sglang:qwen25")
    res = tp.parse(TOOL_OUTPUTS["qwen25"])
    assert _pb_normal(res) == direct.oneshot("qwen25", None, [], TOOL_OUTPUTS["qwen25"])


def test_end_of_stream_modes() -> None:
    tp = pb.get_tool_parser("sglang:qwen25", tools=TOOLS)
    text = TOOL_OUTPUTS["qwen25"]
    for mode in ("last_chunk", "empty_chunk"):
        got = _streamed(tp, list(text), end_of_stream=mode)
        assert [c.name for c in got.tool_calls] == ["get_weather"], mode
    with pytest.raises((ValueError, pb.BackendError)):
        tp.stream(end_of_stream="never")


def test_request_options_decide_when_the_prompt_is_unknown() -> None:
    """reasoning_started=None with chat_template_kwargs: the release's request-side decision."""
    on = pb.get_reasoning_parser("sglang:qwen3", chat_template_kwargs={"enable_thinking": True})
    off = pb.get_reasoning_parser("sglang:qwen3", chat_template_kwargs={"enable_thinking": False})
    plain = pb.get_reasoning_parser("sglang:qwen3")
    if on.engine.api.serving.request_force is None:
        pytest.skip("this SGLang release's server passes no force_reasoning flag")
    # No options: what the release's server decides for a request without chat_template_kwargs
    # (0.5.1 reads only the flags; 0.5.10's table and 0.5.23's reasoning_default turn qwen3 on).
    mode = on.engine.api.serving.request_force
    assert plain.engine.force_reasoning(None) is {"enable_thinking": False}.get(mode, True)
    assert on.engine.force_reasoning(None) is True and off.engine.force_reasoning(None) is False
    text = "The user wants the weather.</think>It is sunny."
    assert on.parse(text).reasoning == "The user wants the weather."
    assert off.parse(text).reasoning is None
    for rp, force in ((on, True), (off, False)):
        tok = _sg_tokenizer(rp)
        assert _pb_normal(rp.parse(text)) == direct.oneshot(
            None, "qwen3", [], text, force=force, tokenizer=tok
        )
        chunks = CHUNKINGS["random-7"](text)
        assert _pb_normal(_streamed(rp, chunks)) == direct.stream(
            None, "qwen3", [], chunks, force=force, tokenizer=tok
        )

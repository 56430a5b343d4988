"""Every parser vLLM registers constructs through parsebridge and runs a transcript.

Parsers that cannot work without something this machine cannot have are
listed in `NEEDS` with the reason; for those the test checks that the
failure is a typed `BackendError` naming backend, parser and call.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed (parsebridge install-framework vllm-latest)")

import parsebridge as pb
from parsebridge.adapters.vllm._driver import ServingFlushError
from parsebridge.protocol import BackendError

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
TOOL_TEXT = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
REASONING_TEXT = "<think>The user wants the weather.</think>It is sunny."

#: Parsers that cannot run here, and why (a property of the parser, not of parsebridge).
NEEDS: dict[str, str] = {
    # 0.33+: generic parsers configured by a checkpoint's tokenizer_config.json
    # (`response_template`); no default tokenizer can carry a model's template.
    # Pass tokenizer="path/to/checkpoint" to use them.
    "hf": "TypeError at construction: needs `response_template` metadata from a real checkpoint's tokenizer config",
    "beam": "TypeError at construction: needs `response_template` metadata from a real checkpoint's tokenizer config",
    # gpt-oss (Harmony) parsing needs openai_harmony's o200k vocabulary, which it
    # downloads on first use (HarmonyError: error downloading or loading vocab file);
    # in 0.33 the registered classes are stubs that point to HarmonyParser, refused at
    # creation with ParserUnsupportedError (vLLM's reason in the message).
    "openai": "Harmony: the encoding's vocab is downloaded at run time (no network here); 0.33's class is a stub",
    "openai_gptoss": "Harmony: the encoding's vocab is downloaded at run time; 0.33's class does boundary detection only",
}

_RESULTS: list[dict[str, object]] = []


def _names(kind: str) -> list[str]:
    be = pb.get_backend("vllm")
    return sorted(be.tool_parser_names() if kind == "tool" else be.reasoning_parser_names())


def _record(kind: str, name: str, **fields: object) -> None:
    _RESULTS.append({"kind": kind, "name": name, **fields})
    out = os.environ.get("REPORT_DIR")
    if out:
        path = Path(out) / "vllm-parsers.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_RESULTS, indent=1, default=str))


def _run(parser, text: str) -> tuple[object, object]:  # type: ignore[no-untyped-def]
    oneshot = parser.parse(text)
    stream = parser.stream()
    try:
        for chunk in parser.chunks(text, 1):
            stream.feed(chunk.text, chunk.token_ids)
        streamed: object = stream.finish()
    except BackendError as exc:
        # vLLM's own serving code raises at the end of this stream (reproduced, not
        # a parsebridge crash): record it as the streamed result.
        if not isinstance(exc.__cause__, ServingFlushError):
            raise
        streamed = {"server_error": str(exc)}
    return oneshot, streamed


def _dump(result: object) -> object:
    return result.model_dump() if hasattr(result, "model_dump") else result


def test_listing_and_shape() -> None:
    info = pb.get_backend("vllm").info()
    assert info.available and info.version
    assert info.tool_parsers and info.reasoning_parsers
    assert "hermes" in info.tool_parsers
    assert info.api_shape and info.version in info.api_shape


@pytest.mark.framework
@pytest.mark.parametrize("name", _names("tool"))
def test_every_tool_parser(name: str) -> None:
    try:
        tp = pb.get_tool_parser(f"vllm:{name}", tools=TOOLS)
        oneshot, streamed = _run(tp, TOOL_TEXT)
    except pb.ParserUnsupportedError as exc:  # a harmony stub: refused at creation, with vLLM's reason
        assert name in NEEDS and exc.parser == name and "HarmonyParser" in str(exc)
        _record("tool", name, error=str(exc))
        pytest.skip(f"{name}: {exc}")
    except BackendError as exc:
        assert exc.backend == "vllm" and exc.parser == name and exc.call and exc.__cause__ is not None
        _record("tool", name, error=str(exc))
        if name in NEEDS:
            pytest.skip(f"{name}: {NEEDS[name]}")
        raise
    _record("tool", name, oneshot=_dump(oneshot), stream=_dump(streamed))


@pytest.mark.framework
@pytest.mark.parametrize("name", _names("reasoning"))
def test_every_reasoning_parser(name: str) -> None:
    try:
        rp = pb.get_reasoning_parser(f"vllm:{name}")
        oneshot, streamed = _run(rp, REASONING_TEXT)
    except pb.ParserUnsupportedError as exc:  # a harmony stub: refused at creation, with vLLM's reason
        assert name in NEEDS and exc.parser == name and "HarmonyParser" in str(exc)
        _record("reasoning", name, error=str(exc))
        pytest.skip(f"{name}: {exc}")
    except BackendError as exc:
        assert exc.backend == "vllm" and exc.parser == name and exc.call and exc.__cause__ is not None
        _record("reasoning", name, error=str(exc))
        if name in NEEDS:
            pytest.skip(f"{name}: {NEEDS[name]}")
        raise
    _record("reasoning", name, oneshot=_dump(oneshot), stream=_dump(streamed))


def test_errors_are_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside vLLM becomes a BackendError naming backend, parser and call."""
    with pytest.raises(pb.UnknownParserError):
        pb.get_tool_parser("vllm:no_such_parser")
    tp = pb.get_tool_parser("vllm:hermes", tools=TOOLS)
    vllm_cls = tp.inner.engine.tool_cls

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(vllm_cls, "extract_tool_calls", boom)
    monkeypatch.setattr(vllm_cls, "extract_tool_calls_streaming", boom)
    with pytest.raises(BackendError) as info:
        tp.parse(TOOL_TEXT)
    assert info.value.backend == "vllm" and info.value.parser == "hermes"
    assert isinstance(info.value.__cause__, RuntimeError)
    stream = tp.stream()
    with pytest.raises(BackendError):
        for chunk in tp.chunks(TOOL_TEXT, 1):
            stream.feed(chunk.text, chunk.token_ids)
        stream.flush()
    # Under the fallback policy the stream goes on as plain content.
    lenient = pb.get_tool_parser("vllm:hermes", tools=TOOLS, on_error="fallback")
    stream = lenient.stream()
    for chunk in lenient.chunks(TOOL_TEXT, 1):
        stream.feed(chunk.text, chunk.token_ids)
    assert stream.finish().content == TOOL_TEXT


def test_user_tokenizer_path(tmp_path: Path) -> None:
    tp = pb.get_tool_parser("vllm:hermes", tools=TOOLS)
    tp.tokenizer.backend_tokenizer.save(str(tmp_path / "tokenizer.json"))
    from_file = pb.get_tool_parser("vllm:hermes", tools=TOOLS, tokenizer=tmp_path / "tokenizer.json")
    from_dir = pb.get_tool_parser("vllm:hermes", tools=TOOLS, tokenizer=str(tmp_path))
    want = [(c.name, c.arguments) for c in tp.parse(TOOL_TEXT).tool_calls]
    for other in (from_file, from_dir):
        assert [(c.name, c.arguments) for c in other.parse(TOOL_TEXT).tool_calls] == want
    obj = pb.get_tool_parser("vllm:hermes", tools=TOOLS, tokenizer=tp.tokenizer)
    assert obj.tokenizer is tp.tokenizer


@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize("ids", [5, "ab", ["a"], [1.5]])
@pytest.mark.parametrize("end_of_stream", ["last_chunk", "empty_chunk"])
def test_stream_token_ids_that_are_not_ids_are_the_callers_mistake(
    end_of_stream: str, ids: object, policy: str
) -> None:
    """A caller's bad ids were `BackendError` blaming vLLM's parser (5), or went to it as other ids
    ("ab" as ["a", "b"]); under fallback the stream then fell back, and the call after them was
    content. Now `InvalidInputError`, whatever the policy, and the stream goes on as it was."""
    parser = pb.get_tool_parser("vllm:hermes", tools=TOOLS, on_error=policy)
    stream = parser.stream(end_of_stream=end_of_stream)
    with pytest.raises(
        pb.InvalidInputError, match=r"stream.feed\(\) takes token_ids as a list of ints or None"
    ):
        stream.feed("Hello", ids)  # type: ignore[arg-type]
    stream.feed("Hello ")
    for i in range(0, len(TOOL_TEXT), 4):  # (older vLLMs miss a whole call given in one delta)
        stream.feed(TOOL_TEXT[i : i + 4])
    result = stream.finish()
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert "Hello" in (result.content or "") and "<tool_call>" not in (result.content or "")


def test_stream_translates_every_shape_of_call_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    """One vLLM call per chunk is built inline; several calls, a call without a function and a
    parser's own objects take the generic path: all arrive as the same `ToolCallDelta`s."""
    from types import SimpleNamespace

    from parsebridge.protocol import ToolCallDelta

    tp = pb.get_tool_parser("vllm:hermes", tools=TOOLS)
    if not tp.inner.engine.native:
        pytest.skip(
            "this vLLM release has no ChatStreamProcessor: its streams step the serving-loop restatement"
        )
    api = tp.inner.engine.api
    tool, fn = api.DeltaToolCall, api.DeltaFunctionCall
    script = [
        [tool(index=0, id="call_a", function=fn(name="get_weather", arguments=""))],  # one, inline
        [tool(index=0, function=fn(arguments='{"city": "Paris"}'))],
        [  # two in one chunk
            tool(index=1, id="call_b", function=fn(name="get_weather", arguments='{"city"')),
            tool(index=1, function=fn(arguments=': "Rome"}')),
        ],
        [tool(index=2, id="call_c", function=None)],  # no function
        [SimpleNamespace(index=2, id=None, function=SimpleNamespace(name="f", arguments="{}"))],  # foreign
    ]
    steps = iter(script)

    def fake_step(self: object, *args: object, **kwargs: object) -> object:
        calls = next(steps, None)
        return SimpleNamespace(delta=SimpleNamespace(content=None, reasoning=None, tool_calls=calls))

    monkeypatch.setattr(api.ChatStreamProcessor, "step", fake_step)
    stream = tp.stream(end_of_stream="empty_chunk")
    got = [d for chunk in ("a", "b", "c", "d", "e") for d in stream.feed(chunk, [1]).tool_calls]
    assert got == [
        ToolCallDelta(index=0, id="call_a", name="get_weather", arguments=""),
        ToolCallDelta(index=0, arguments='{"city": "Paris"}'),
        ToolCallDelta(index=1, id="call_b", name="get_weather", arguments='{"city"'),
        ToolCallDelta(index=1, arguments=': "Rome"}'),
        ToolCallDelta(index=2, id="call_c"),
        ToolCallDelta(index=2, name="f", arguments="{}"),
    ]
    assert all(type(d) is ToolCallDelta for d in got)

"""parsebridge parsers inside vLLM's real chat server, through the plugin.

vLLM's `OpenAIServingChat.chat_completion_stream_generator` is driven with a
scripted engine (tests/serving/_server_oracle), configured as
``--tool-call-parser pb:…`` / ``--reasoning-parser pb:…`` after vLLM loaded
`parsebridge.plugins.vllm` through its own plugin loader. What the client
assembles from the SSE stream must equal parsebridge's own reading of the
same output, at 1, 3 and 20 characters and one token a step.
"""

from __future__ import annotations

import sys

import pytest

import parsebridge as pb

pytest.importorskip("vllm", reason="vLLM is not installed (the vllm plugin needs it)")

from _plugin_cases import (
    CHUNKINGS,
    HERMES,
    IQUEST,
    THINK,
    TOOLS,
    Case,
    chunks,
    client_message,
    parsebridge_oneshot,
    parsebridge_reading,
    tokenizer,
)
from _server_oracle import vllm as vllm_server
from _server_oracle.common import Script

from parsebridge.adapters.vllm._compat import get_api

try:
    vllm_server.serving_module()
except Exception as exc:  # the harness says why this release's server cannot be driven
    pytest.skip(f"vLLM's serving module does not import here: {exc}", allow_module_level=True)

TAG_TOOL = "python:pbserving_testparsers:TagTool"
BUILTIN_CASES = [
    Case("builtin-hermes", None, "builtin:hermes", HERMES),
    Case("builtin-qwen3-reasoning", "builtin:qwen3", None, THINK + "The answer is 4."),
    Case("builtin-qwen3-hermes", "builtin:qwen3", "builtin:hermes", THINK + HERMES),
    # a format vLLM has no parser for (SGLang and parsebridge do)
    Case("builtin-iquest_q1", None, "builtin:iquest_q1", IQUEST),
    # a parser of a user's own (PARSEBRIDGE_PLUGIN_PARSERS) that streams arguments in fragments, the
    # last of them with the closing tag, in the output's last delta
    Case("python-tagtool", None, TAG_TOOL, HERMES),
]
SGLANG_CASES = [
    Case("sglang-qwen25", None, "sglang:qwen25", HERMES),
    Case("builtin-qwen3-sglang-qwen25", "builtin:qwen3", "sglang:qwen25", THINK + HERMES),
]


#: Recorded in docs/plugins.md ("Serve any parser from vLLM or SGLang"): before 0.33 vLLM's serving loop never
#: calls parsers at the end of output (held text is not shown) and ends reasoning by token ids.
#: Measured on 0.11.0: these 2 runs differ, the other 18 agree (each is a strict xfail there, so a
#: run that starts agreeing, or one more that stops, fails).
PRE_DRIVER_DIFFERS = {
    ("builtin-qwen3-hermes", "char1"),
    ("builtin-qwen3-hermes", "char3"),
}


@pytest.fixture(scope="module")
def tok():
    return tokenizer()


@pytest.fixture(scope="module", autouse=True)
def plugin():
    from parsebridge.adapters.vllm._compat import get_api
    from parsebridge.plugins.probe import vllm_plugin_argument

    api = get_api()
    with pytest.MonkeyPatch.context() as mp:  # registered under its pb: name as the plugin loads
        mp.setenv("PARSEBRIDGE_PLUGIN_PARSERS", TAG_TOOL)
        api.ToolParserManager.import_tool_parser(vllm_plugin_argument())  # the module, or the file on 0.11
        if "parsebridge.plugins.vllm" not in sys.modules:
            api.ReasoningParserManager.import_reasoning_parser(vllm_plugin_argument())


def _serve(case: Case, tok, chunking: str) -> tuple[dict, dict, str | None]:
    steps = chunks(tok, case.output, chunking)
    reasoning, tool = case.names()
    run = vllm_server.run(
        reasoning,
        tool,
        tok,
        Script(chunks=steps),
        tools=TOOLS if tool else None,
        tool_choice="auto" if tool else None,
    )
    return client_message(run), parsebridge_reading(case, steps), run.finish_reason


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("case", BUILTIN_CASES, ids=lambda c: c.id)
def test_vllm_server_serves_builtin_parsers(tok, case, chunking, request):
    if not get_api().has_parser_driver and (case.id, chunking) in PRE_DRIVER_DIFFERS:
        reason = "vLLM before 0.33 has no end-of-output call to parsers (docs/plugins.md)"
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    got, streamed, finish = _serve(case, tok, chunking)
    assert got == streamed == parsebridge_oneshot(case)
    assert finish == ("tool_calls" if got["tool_calls"] else "stop")


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("case", SGLANG_CASES, ids=lambda c: c.id)
def test_vllm_server_serves_sglang_parsers(tok, case, chunking):
    """SGLang's reading inside vLLM: what parsebridge's `sglang:` stream shows for the same chunks."""
    pytest.importorskip("sglang", reason="SGLang is not installed (no sglang: parsers to serve)")
    got, streamed, _ = _serve(case, tok, chunking)
    lost = RECHUNKED.get((case.id, chunking))
    if lost is not None:  # the recorded divergence, exactly: the server lost `lost`, nothing else differs
        assert {**got, "content": got["content"] + lost} == streamed
        return
    assert got == streamed


#: (case, chunking) → the text vLLM's server loses where parsebridge's pipeline keeps it. SGLang's
#: qwen25 detector drops normal text that arrives in the same chunk as the start of `<tool_call>`
#: (".\n<"). vLLM hands the tool parser its raw delta once reasoning ended; parsebridge's pipeline
#: hands it what the builtin:qwen3 reasoning stream releases: ".\n", then "<tool_call>…" (that
#: stream holds a "<" that could start a stray "</think>", which Qwen3's reading drops).
RECHUNKED = {("builtin-qwen3-sglang-qwen25", "char3"): ".\n"}


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_vllm_serving_sglang_qwen25_matches_sglangs_own_server(tok, chunking):
    """Cross check: vLLM's server with ``pb:sglang:qwen25`` gives what SGLang's server gives with ``qwen25``."""
    pytest.importorskip("sglang", reason="SGLang is not installed")
    from _server_oracle import sglang as sglang_server

    try:
        sglang_server.serving_module()
    except Exception as exc:
        pytest.skip(f"SGLang's serving module does not import here: {exc}")
    case = SGLANG_CASES[0]
    steps = chunks(tok, case.output, chunking)
    in_vllm = vllm_server.run(
        None, "pb:sglang:qwen25", tok, Script(chunks=steps), tools=TOOLS, tool_choice="auto"
    )
    in_sglang = sglang_server.run(None, "qwen25", tok, Script(chunks=steps), tools=TOOLS, tool_choice="auto")
    assert client_message(in_vllm) == client_message(in_sglang)
    assert in_vllm.finish_reason == in_sglang.finish_reason


def test_vllm_server_reasoning_started_in_the_prompt(tok):
    """A prompt ending in ``<think>`` (the template opened reasoning): vLLM passes the prompt ids,
    the plugin reads them, and the output's bare ``</think>`` ends reasoning."""
    output = "pondering the question</think>The answer is 4."
    steps = chunks(tok, output, "char3")
    prompt = tok.encode("<|im_start|>assistant\n<think>\n", add_special_tokens=False)
    run = vllm_server.run("pb:builtin:qwen3", None, tok, Script(chunks=steps, prompt_token_ids=prompt))
    want = pb.get_reasoning_parser("builtin:qwen3").parse(output, reasoning_started=True)
    assert (run.message["reasoning"], run.message["content"]) == (want.reasoning, want.content)
    assert want.reasoning == "pondering the question"


#: vLLM before 0.33 neither passes chat_template_kwargs to reasoning parsers nor reads untagged
#: output as reasoning in its qwen3 parser; builtin's conventions="servers" follows 0.33 and SGLang 0.5.23.
PRE_DRIVER_QWEN3 = pytest.mark.xfail(
    not get_api().has_parser_driver,
    reason="vLLM before 0.33: qwen3 reads output without <think> as content, and no chat_template_kwargs "
    "reach a reasoning parser",
    strict=True,
)


@PRE_DRIVER_QWEN3
@pytest.mark.parametrize(
    "kwargs", [None, {"enable_thinking": False}], ids=["thinking-default", "thinking-off"]
)
@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_thinking_toggle_reads_as_vllms_own_qwen3(tok, kwargs, chunking):
    """Output without <think>: reasoning by default, content when the request turns thinking off,
    through the plugin exactly as through vLLM's own qwen3 parser."""
    steps = chunks(tok, "The answer is 4.", chunking)
    ours = vllm_server.run("pb:builtin:qwen3", None, tok, Script(chunks=steps), chat_template_kwargs=kwargs)
    theirs = vllm_server.run("qwen3", None, tok, Script(chunks=steps), chat_template_kwargs=kwargs)
    assert client_message(ours) == client_message(theirs)
    assert bool(client_message(ours)["reasoning"]) == (kwargs is None)

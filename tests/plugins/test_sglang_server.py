"""parsebridge parsers inside SGLang's real chat server, through the plugin.

SGLang's `OpenAIServingChat._generate_chat_stream` is driven with a scripted
engine (tests/serving/_server_oracle), configured as
``--tool-call-parser pb:…`` / ``--reasoning-parser pb:…`` after
`parsebridge.plugins.sglang.register_all` (what SGLang's plugin entry point
runs) filled its tables. What the client assembles from the SSE stream must
equal parsebridge's own reading of the same output, at 1, 3 and 20
characters and one token a step.
"""

from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("sglang", reason="SGLang is not installed (the sglang plugin needs it)")

from _plugin_cases import (
    CHUNKINGS,
    HERMES,
    THINK,
    TOOLS,
    Case,
    chunks,
    client_message,
    parsebridge_oneshot,
    parsebridge_reading,
    tokenizer,
)
from _server_oracle import sglang as sglang_server
from _server_oracle.common import Script

try:
    sglang_server.serving_module()
except Exception as exc:  # the harness says why this release's server cannot be driven
    pytest.skip(f"SGLang's serving module does not import here: {exc}", allow_module_level=True)

HAS_VLLM = importlib.util.find_spec("vllm") is not None
BUILTIN_CASES = [
    Case("builtin-hermes", None, "builtin:hermes", HERMES),
    Case("builtin-qwen3-reasoning", "builtin:qwen3", None, THINK + "The answer is 4."),
    Case("builtin-qwen3-hermes", "builtin:qwen3", "builtin:hermes", THINK + HERMES),
]
VLLM_CASES = [
    Case("vllm-hermes", None, "vllm:hermes", HERMES),
    Case("builtin-qwen3-vllm-hermes", "builtin:qwen3", "vllm:hermes", THINK + HERMES),
]


@pytest.fixture(scope="module")
def tok():
    return tokenizer()


@pytest.fixture(scope="module", autouse=True)
def plugin():
    from parsebridge.plugins import sglang as plugin

    plugin.register_all(["builtin", "vllm"] if HAS_VLLM else ["builtin"])


def _serve(case: Case, tok, chunking: str) -> tuple[dict, dict, str | None]:
    steps = chunks(tok, case.output, chunking)
    reasoning, tool = case.names()
    run = sglang_server.run(
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
def test_sglang_server_serves_builtin_parsers(tok, case, chunking):
    got, streamed, finish = _serve(case, tok, chunking)
    assert got == streamed == parsebridge_oneshot(case)
    assert finish == ("tool_calls" if got["tool_calls"] else "stop")


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("case", VLLM_CASES, ids=lambda c: c.id)
def test_sglang_server_serves_vllm_parsers(tok, case, chunking):
    """vLLM's reading inside SGLang: what parsebridge's `vllm:` stream shows for the same chunks."""
    if not HAS_VLLM:
        pytest.skip("vLLM is not installed (no vllm: parsers to serve)")
    got, streamed, _ = _serve(case, tok, chunking)
    assert got == streamed


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_sglang_serving_vllm_hermes_matches_vllms_own_server(tok, chunking):
    """Cross check: SGLang's server with ``pb:vllm:hermes`` gives what vLLM's server gives with ``hermes``."""
    if not HAS_VLLM:
        pytest.skip("vLLM is not installed")
    from _server_oracle import vllm as vllm_server

    case = VLLM_CASES[0]
    steps = chunks(tok, case.output, chunking)
    in_sglang = sglang_server.run(
        None, "pb:vllm:hermes", tok, Script(chunks=steps), tools=TOOLS, tool_choice="auto"
    )
    in_vllm = vllm_server.run(None, "hermes", tok, Script(chunks=steps), tools=TOOLS, tool_choice="auto")
    assert client_message(in_sglang) == client_message(in_vllm)


@pytest.mark.parametrize(
    "kwargs", [None, {"enable_thinking": False}], ids=["thinking-default", "thinking-off"]
)
@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_thinking_toggle_reads_as_sglangs_own_qwen3(tok, kwargs, chunking):
    """Output without <think>: reasoning by default, content when the request turns thinking off,
    through the plugin exactly as through SGLang's own qwen3 detector (the plugin's detector says
    its parser starts inside reasoning unless enable_thinking is false, as SGLang's does)."""
    steps = chunks(tok, "The answer is 4.", chunking)
    ours = sglang_server.run("pb:builtin:qwen3", None, tok, Script(chunks=steps), chat_template_kwargs=kwargs)
    theirs = sglang_server.run("qwen3", None, tok, Script(chunks=steps), chat_template_kwargs=kwargs)
    assert client_message(ours) == client_message(theirs)
    assert bool(client_message(ours)["reasoning"]) == (kwargs is None)

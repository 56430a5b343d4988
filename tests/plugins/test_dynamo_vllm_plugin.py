"""NVIDIA Dynamo's vLLM chat processor serving a parsebridge parser through the vLLM plugin.

Dynamo's frontend (`dynamo.frontend.vllm_processor`, ai-dynamo 1.6.1) looks its
parsers up by name in vLLM's `ToolParserManager` / `ReasoningParserManager`,
checks the reasoning class with `_ensure_reasoning_parser_output_capable`,
and parses each engine delta in `prepost.StreamingPostProcessor.process_output`.
These tests do exactly that with a scripted engine (no GPU, no cluster, no
runtime): the names resolve to the plugin's classes, and what Dynamo's
chunks assemble to equals parsebridge's own reading.

ai-dynamo is optional and not a dependency of parsebridge; the tests skip
without it. CI runs them in ``python3 -m tox -e dynamo-plugin`` (vLLM 0.33 and
SGLang 0.5.23 parsers-only, then ai-dynamo, ai-dynamo-runtime 1.6.1 and redis
from ``src/parsebridge/_frameworks/requirements/plugin-dynamo-vllm.txt``, all
``--no-deps``); by hand, into an env with vLLM (and SGLang for ``pb:sglang:*``)::

    pip install --no-deps -r src/parsebridge/_frameworks/requirements/plugin-dynamo-vllm.txt
    pytest tests/plugins/test_dynamo_vllm_plugin.py

ai-dynamo 1.6.1 pins vLLM 0.31.0 and imports `vllm.entrypoints.chat_utils`,
which vLLM 0.33 moved to `vllm.renderers.chat_utils` (same functions); when
the old path is missing the tests alias it, and nothing else is patched.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed (Dynamo's vLLM processor needs it)")
if importlib.util.find_spec("dynamo") is None or importlib.util.find_spec("dynamo.frontend") is None:
    pytest.skip("ai-dynamo is not installed (see this module's docstring to run it)", allow_module_level=True)

if importlib.util.find_spec("vllm.entrypoints.chat_utils") is None:  # Dynamo 1.6.1 was built on vLLM 0.31
    sys.modules["vllm.entrypoints.chat_utils"] = importlib.import_module("vllm.renderers.chat_utils")

vp = pytest.importorskip(
    "dynamo.frontend.vllm_processor", reason="Dynamo's vLLM processor does not import here"
)
prepost = importlib.import_module("dynamo.frontend.prepost")

import parsebridge as pb  # noqa: E402
from parsebridge.adapters import _tokenizers  # noqa: E402
from parsebridge.adapters.vllm._compat import get_api  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
OUTPUTS = {
    "tools": "Let me check.\n" + CALL,
    "reasoning+tools": "<think>the user wants weather</think>Sure." + CALL,
    "reasoning only": "<think>just thinking</think>The answer is 4.",
}


@pytest.fixture(scope="module")
def tokenizer():
    return _tokenizers.build_tokenizer(["<tool_call>", "</tool_call>", "<think>", "</think>"], "qwen")


@pytest.fixture(scope="module", autouse=True)
def plugin():
    vp.ToolParserManager.import_tool_parser("parsebridge.plugins.vllm")
    vp.ReasoningParserManager.import_reasoning_parser("parsebridge.plugins.vllm")


def _resolve(tool_name, reasoning_name, tokenizer):
    """What `VllmProcessor` does at setup with ``--tool-call-parser`` / ``--reasoning-parser``."""
    tool_cls = vp.ToolParserManager.get_tool_parser(tool_name) if tool_name else None
    reasoning_cls = None
    if reasoning_name:
        reasoning_cls = vp.ReasoningParserManager.get_reasoning_parser(reasoning_name)
        vp._ensure_reasoning_parser_output_capable(reasoning_name, reasoning_cls, tokenizer, {}, None)
    return tool_cls, reasoning_cls


def _serve(text, pieces, tool_cls, reasoning_cls, tokenizer):
    """Dynamo's per-choice post-processor over a scripted engine; what its chunks assemble to."""
    request = get_api().make_request(TOOLS, "auto")
    post = prepost.StreamingPostProcessor(
        tokenizer=tokenizer,
        request_for_sampling=request,
        sampling_params=vp.SamplingParams(),
        prompt_token_ids=tokenizer.encode("user: weather?\nassistant:", add_special_tokens=False),
        tool_parser=tool_cls(tokenizer, request.tools) if tool_cls else None,
        reasoning_parser_class=reasoning_cls,
        chat_template_kwargs={},
    )
    reasoning, content, calls = [], [], {}
    for i, piece in enumerate(pieces):
        output = SimpleNamespace(
            index=0,
            text=piece,
            token_ids=tokenizer.encode(piece, add_special_tokens=False),
            finish_reason="stop" if i == len(pieces) - 1 else None,
            logprobs=None,
        )
        choice = post.process_output(output)
        if not choice:
            continue
        delta = choice["delta"]
        reasoning.append(delta.get("reasoning_content") or "")
        content.append(delta.get("content") or "")
        for tc in delta.get("tool_calls") or ():
            call = calls.setdefault(tc["index"], {"name": None, "arguments": ""})
            fn = tc.get("function") or {}
            call["name"] = fn.get("name") or call["name"]
            call["arguments"] += fn.get("arguments") or ""
    got_calls = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    return "".join(reasoning) or None, "".join(content) or None, got_calls


def test_dynamo_resolves_the_plugins_names(tokenizer):
    tool_cls, reasoning_cls = _resolve("pb:builtin:hermes", "pb:builtin:qwen3", tokenizer)
    assert tool_cls.pb_spec == "builtin:hermes" and reasoning_cls.pb_spec == "builtin:qwen3"
    assert issubclass(tool_cls, vp.ToolParser) and issubclass(reasoning_cls, vp.ReasoningParser)


def _pieces(text, per, tokenizer):
    if per == "token":
        return [c.text for c in _tokenizers.token_chunks(tokenizer, text, 1)]
    return [text[i : i + per] for i in range(0, len(text), per)]


def _client_view(reasoning, content, calls):
    return reasoning or None, content or None, [(c.name, c.arguments) for c in calls]


def _dynamo_reading(pieces, tool_spec, marker="<tool_call>"):
    """What Dynamo's `process_output` makes of parsebridge's streams, by the rule its source states.

    Reasoning runs until the chunk where it shows content (the plugin then confirms the end of
    reasoning); the rest of that chunk, with what the reasoning stream still held, goes to the
    tool parser only when it holds a whole tool-start marker (buffered, then `extract_tool_calls`
    once the output ends); otherwise it is content as is. Later chunks stream through the tool
    parser.
    """
    tools = pb.get_tool_parser(tool_spec, TOOLS)
    end = _end_of_reasoning(pieces)
    if end is None:  # reasoning never ends: all of it is the reasoning stream's
        stream = pb.get_reasoning_parser("builtin:qwen3").stream()
        deltas = [stream.feed(piece) for piece in pieces] + [stream.flush()]
        return _client_view("".join(d.reasoning for d in deltas), "".join(d.content for d in deltas), [])
    k, reasoning, head = end
    rest = pieces[k + 1 :]
    if marker in head:
        result = tools.parse(head + "".join(rest))
        return _client_view(reasoning, result.content, result.tool_calls)
    tool_stream = tools.stream()
    for later in rest:
        tool_stream.feed(later)
    result = tool_stream.finish()
    return _client_view(reasoning, head + (result.content or ""), result.tool_calls)


def _end_of_reasoning(pieces):
    """Where Dynamo sees reasoning end: the index of the chunk where the reasoning stream first
    shows content, the reasoning so far, and that chunk's content with what the stream still
    held (the plugin flushes it there); None when no chunk shows content."""
    stream = pb.get_reasoning_parser("builtin:qwen3").stream()
    reasoning = ""
    for k, piece in enumerate(pieces):
        delta = stream.feed(piece)
        reasoning += delta.reasoning
        if delta.content:
            held = stream.flush()
            return k, reasoning + held.reasoning, delta.content + held.content
    return None


def _transition_holds_partial_marker(pieces, marker="<tool_call>"):
    """Whether the text Dynamo shows where reasoning ends stops inside `marker`."""
    end = _end_of_reasoning(pieces)
    if end is None:
        return False
    head = end[2]
    return marker not in head and any(head.endswith(marker[:k]) for k in range(1, len(marker)))


@pytest.mark.parametrize("name", list(OUTPUTS))
@pytest.mark.parametrize("per", [1, 3, 12, 20, "token"])
@pytest.mark.parametrize("tool", ["pb:builtin:hermes", "pb:sglang:qwen25"])
def test_dynamo_streams_the_plugins_parsers(tokenizer, name, per, tool):
    """Every chunking: Dynamo's chunks assemble to parsebridge's streams under Dynamo's rule."""
    if tool.startswith("pb:sglang:"):
        pytest.importorskip("sglang", reason="SGLang is not installed")
    pieces = _pieces(OUTPUTS[name], per, tokenizer)
    tool_cls, reasoning_cls = _resolve(tool, "pb:builtin:qwen3", tokenizer)
    got = _serve(OUTPUTS[name], pieces, tool_cls, reasoning_cls, tokenizer)
    assert got == _dynamo_reading(pieces, tool.removeprefix("pb:"))


@pytest.mark.parametrize("name", list(OUTPUTS))
@pytest.mark.parametrize("per", [1, 3, 12, 20, "token"])
def test_dynamo_serves_parsebridges_reading(tokenizer, name, per):
    """Builtin parsers through Dynamo read as parsebridge reads the whole output, unless the chunk
    that ends reasoning stops inside a tool marker (next test)."""
    text = OUTPUTS[name]
    pieces = _pieces(text, per, tokenizer)
    want = pb.get_pipeline("builtin:qwen3", "builtin:hermes", tools=TOOLS).parse(text)
    tool_cls, reasoning_cls = _resolve("pb:builtin:hermes", "pb:builtin:qwen3", tokenizer)
    got = _serve(text, pieces, tool_cls, reasoning_cls, tokenizer)
    if _transition_holds_partial_marker(pieces):
        assert got != _client_view(want.reasoning, want.content, want.tool_calls)
    else:
        assert got == _client_view(want.reasoning, want.content, want.tool_calls)


def _serve_vllm(pieces, tokenizer):
    """vLLM 0.33's own per-request parser driver (`vllm.parser`) over the same chunks."""
    from parsebridge.plugins.vllm import parser_class

    request = get_api().make_request(TOOLS, "auto")
    parser = parser_class(reasoning="pb:builtin:qwen3", tool="pb:builtin:hermes")(tokenizer, request.tools)
    prompt = tokenizer.encode("user: weather?\nassistant:", add_special_tokens=False)
    reasoning, content, calls = [], [], {}
    for i, piece in enumerate(pieces):
        ids = tokenizer.encode(piece, add_special_tokens=False)
        delta = parser.parse_delta(
            piece, ids, request, prompt_token_ids=prompt, finished=i == len(pieces) - 1
        )
        if delta is None:
            continue
        reasoning.append(delta.reasoning or "")
        content.append(delta.content or "")
        for tc in delta.tool_calls:
            call = calls.setdefault(tc.index, {"name": None, "arguments": ""})
            call["name"] = (tc.function.name if tc.function else None) or call["name"]
            call["arguments"] += (tc.function.arguments if tc.function else None) or ""
    got_calls = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    return "".join(reasoning) or None, "".join(content) or None, got_calls


def test_dynamo_shows_text_after_reasoning_in_the_same_chunk_as_content(tokenizer):
    """Dynamo's processor, not the plugin: when reasoning ends in a chunk, the rest of that chunk
    reaches the tool parser only if it holds a whole tool-start marker (`process_output` then
    buffers it for `extract_tool_calls`); otherwise it is shown as content, and a call that
    starts in it is lost. vLLM's own parser driver hands that text to the tool parser. Here the
    12-character chunk that ends reasoning is ``>Sure.<tool_``: it shows ``Sure.<tool_``."""
    text = OUTPUTS["reasoning+tools"]
    pieces = _pieces(text, 12, tokenizer)
    assert pieces[3] == ">Sure.<tool_" and _transition_holds_partial_marker(pieces)
    tool_cls, reasoning_cls = _resolve("pb:builtin:hermes", "pb:builtin:qwen3", tokenizer)
    got = _serve(text, pieces, tool_cls, reasoning_cls, tokenizer)
    assert got == ("the user wants weather", "Sure." + CALL, [])
    # vLLM's own driver over the same chunks reads as parsebridge reads the whole output
    want = pb.get_pipeline("builtin:qwen3", "builtin:hermes", tools=TOOLS).parse(text)
    assert _serve_vllm(pieces, tokenizer) == _client_view(want.reasoning, want.content, want.tool_calls)
    assert want.tool_calls and want.content == "Sure."

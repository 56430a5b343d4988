"""The plugin layer without a framework: names, the registration table, and the error when absent."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parsebridge import plugins
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS

SRC = str(Path(plugins.__file__).resolve().parents[2])


def test_plugin_name_is_pb_and_the_spec_lower_cased():
    assert plugins.plugin_name("builtin:hermes") == "pb:builtin:hermes"
    assert plugins.plugin_name("hermes") == "pb:builtin:hermes"  # a bare name is builtin, as in specs
    assert plugins.plugin_name("sglang:deepseek-r1") == "pb:sglang:deepseek-r1"
    assert plugins.plugin_name("python:my_pkg.mod:MyParser") == "pb:python:my_pkg.mod:myparser"


def test_builtin_parsers_are_all_registered_without_any_framework():
    regs = plugins.enumerate_registrations("vllm", ["builtin"])
    # every parser under its own name, then the family names and aliases (issue 40: pb:builtin:qwen25)
    assert {f"pb:builtin:{n}" for n in TOOL_PARSERS} <= set(plugins.describe(regs, "tool"))
    assert {f"pb:builtin:{n}" for n in REASONING_PARSERS} <= set(plugins.describe(regs, "reasoning"))
    assert all(r.spec == r.name.removeprefix("pb:") for r in regs)


def test_bare_builtin_names_are_served_as_config_strings_read_them():
    """``pb:`` + a config string, and a bare name is builtin (``hermes`` is ``builtin:hermes``): each
    ``pb:builtin:NAME`` (aliases too) has its ``pb:NAME``; before, ``pb:hermes`` was not registered."""
    regs = plugins.enumerate_registrations("vllm", ["builtin"])
    by_name = {(r.name, r.kind): r.spec for r in regs}
    for r in (r for r in regs if r.name.startswith("pb:builtin:")):
        bare = r.name.removeprefix("pb:builtin:")
        assert by_name[(f"pb:{bare}", r.kind)] == r.spec.removeprefix("builtin:")
    assert by_name[("pb:hermes", "tool")] == "hermes" and by_name[("pb:qwen25", "tool")] == "qwen25"
    assert by_name[("pb:qwen3", "reasoning")] == "qwen3"


def test_a_plugin_never_enumerates_its_own_framework_into_itself():
    assert plugins.enumerate_registrations("vllm", ["vllm", "python"]) == []
    assert plugins.default_backends("vllm") == ["builtin", "sglang"]
    assert plugins.default_backends("sglang") == ["builtin"]  # SGLang loads it everywhere: no vLLM import


def test_backends_env_restricts_what_is_enumerated(monkeypatch):
    monkeypatch.setenv(plugins.ENV_BACKENDS, "builtin")
    assert plugins.default_backends("vllm") == ["builtin"]


def test_env_parsers_with_and_without_names(monkeypatch):
    monkeypatch.setenv(plugins.ENV_PARSERS, "mine=python:_userparsers:CallLine, python:_userparsers:Colon ,")
    assert plugins.parse_env_parsers() == [
        ("mine", "python:_userparsers:CallLine"),
        (None, "python:_userparsers:Colon"),
    ]
    regs = plugins.registrations("vllm", backends=[])
    assert [(r.name, r.kind, r.spec) for r in regs] == [
        ("mine", "tool", "python:_userparsers:CallLine"),
        ("pb:python:_userparsers:colon", "reasoning", "python:_userparsers:Colon"),
    ]


def test_kind_of_reads_builtin_names_and_python_classes():
    assert plugins.kind_of("builtin:hermes") == "tool"
    assert plugins.kind_of("builtin:qwen3") == "reasoning"
    assert plugins.kind_of("python:_userparsers:CallLine") == "tool"
    assert plugins.kind_of("python:_userparsers:Colon") == "reasoning"
    with pytest.raises(plugins.InvalidSpecError):
        plugins.kind_of("builtin:not_a_parser")


def test_on_error_policy_defaults_to_fallback(monkeypatch):
    assert plugins.on_error_policy() == "fallback"
    monkeypatch.setenv(plugins.ENV_ON_ERROR, "raise")
    assert plugins.on_error_policy() == "raise"
    monkeypatch.setenv(plugins.ENV_ON_ERROR, "ignore")
    with pytest.raises(plugins.InvalidSpecError):
        plugins.on_error_policy()


def test_tool_dicts_accept_models_dicts_and_flat_responses_tools():
    class Model:
        def model_dump(self, exclude_none: bool = False) -> dict:
            return {"type": "function", "function": {"name": "a", "parameters": {}}}

    flat = {"type": "function", "name": "b", "parameters": {"type": "object"}, "strict": None}
    out = plugins.tool_dicts([Model(), flat])
    assert out == [
        {"type": "function", "function": {"name": "a", "parameters": {}}},
        {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}, "strict": None}},
    ]
    assert plugins.tool_dicts(None) is None and plugins.tool_indices(out) == {"a": 0, "b": 1}


def test_reasoning_marker_helpers():
    assert plugins.reasoning_closed("sys <think>x</think>", "<think>", "</think>")
    assert not plugins.reasoning_closed("sys <think>x</think><think>", "<think>", "</think>")
    assert plugins.reasoning_open("user ...<think>\n", "<think>", "</think>")
    assert not plugins.reasoning_open("<think></think>", "<think>", "</think>")
    assert not plugins.reasoning_open("no markers", "<think>", "</think>")


def test_parser_cache_shares_objects_per_tools_and_is_bounded():
    cache = plugins.ParserCache(size=2)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    a = cache.get("tool", "builtin:hermes", tools)
    assert cache.get("tool", "builtin:hermes", [dict(t) for t in tools]) is a
    assert cache.get("tool", "builtin:hermes", None) is not a
    cache.get("reasoning", "builtin:qwen3")
    assert cache.get("tool", "builtin:hermes", tools) is not a  # evicted (size 2)


@pytest.mark.parametrize("plugin", ["vllm", "sglang"])
def test_plugin_module_without_its_framework_fails_with_an_install_hint(plugin):
    """In a Python without the framework (here: made unimportable), importing the plugin says what to install."""
    code = (
        f"import sys; sys.modules[{plugin!r}] = None\n"
        "try:\n"
        f"    import parsebridge.plugins.{plugin}\n"
        "except ImportError as exc:\n"
        "    import json; print(json.dumps([type(exc).__name__, str(exc), exc.name]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": SRC}
    )
    kind, message, name = json.loads(out.stdout)
    assert kind == "FrameworkMissingError" and name == plugin
    assert f"pip install {plugin}" in message and f"parsebridge.plugins.{plugin}" in message


def test_importing_the_plugin_package_imports_no_framework():
    code = "import sys, json, parsebridge.plugins; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": SRC}
    )
    assert not set(json.loads(out.stdout)) & {"vllm", "sglang", "torch", "transformers"}


def test_support_table_has_a_plugin_column_from_the_reports(tmp_path):
    from parsebridge.conformance.support import support_table

    def report(version: str, probes: dict | None) -> dict:
        rep = {
            "parsebridge": "0.1.0",
            "backends": {"vllm": version},
            "api_shapes": {},
            "parsers": {},
            "results": [],
        }
        if probes is not None:
            rep["plugins"] = probes
        return rep

    served = {"available": True, "end_of_output_flush": True, "loaded_by": "--tool-parser-plugin x"}
    no_flush = {**served, "end_of_output_flush": False}
    broken = {"available": False, "detail": "ImportError: a | b"}
    for version, probes in (
        ("0.33.0", {"vllm": served}),
        ("0.13.0", {"vllm": no_flush}),
        ("0.11.0", {"vllm": broken}),
        ("0.10.2", None),
    ):
        (tmp_path / f"vllm-{version}").mkdir()
        (tmp_path / f"vllm-{version}" / "report.json").write_text(json.dumps(report(version, probes)))
    md = support_table([tmp_path])
    header = next(line for line in md.splitlines() if line.startswith("| framework |"))
    column = header.split(" | ").index("serves parsebridge parsers (plugin)")
    cells = {}
    for line in md.splitlines():
        if line.startswith("| vllm | "):
            row = re.split(r"(?<!\\) \| ", line)  # an escaped "\|" inside a cell does not split it
            cells[row[1]] = row[column]
    assert cells["0.33.0"] == "yes (--tool-parser-plugin x)"
    assert cells["0.13.0"].endswith("text a stream holds at the end is lost)")
    assert cells["0.11.0"] == "no: ImportError: a \\| b"
    assert cells["0.10.2"] == "not probed"


def test_probe_without_the_framework_says_so():
    from parsebridge.plugins.probe import cell, probe

    for framework in ("vllm", "sglang"):
        if importlib.util.find_spec(framework) is None:
            assert probe(framework) == {"available": False, "detail": f"{framework} is not installed"}
    assert cell(None) == "not probed"


def test_env_parsers_giving_one_name_two_parsers_is_refused(monkeypatch):
    """The later entry replaced the earlier in the server's table without a word (names are
    lower-cased, so ``Mine`` is ``mine``); one parser given twice is harmless and kept."""
    both = "mine=python:_userparsers:CallLine, Mine=python:_userparsers:ReturnsDict"
    monkeypatch.setenv(plugins.ENV_PARSERS, both)
    with pytest.raises(
        plugins.PluginConfigError, match="'mine' is already given to 'python:_userparsers:CallLine'"
    ):
        plugins.registrations("vllm", backends=[])
    monkeypatch.setenv(
        plugins.ENV_PARSERS, "mine=python:_userparsers:CallLine,mine=python:_userparsers:CallLine"
    )
    assert [r.name for r in plugins.registrations("vllm", backends=[])] == ["mine", "mine"]
    # a tool and a reasoning parser under one name live in two tables: both are kept
    monkeypatch.setenv(
        plugins.ENV_PARSERS, "mine=python:_userparsers:CallLine,mine=python:_userparsers:Colon"
    )
    assert [r.kind for r in plugins.registrations("vllm", backends=[])] == ["tool", "reasoning"]


def test_env_parser_whose_constructor_raises_stops_the_start(monkeypatch):
    """Its class loaded, so it was registered, and every request naming it then failed in the
    server; the entry cannot be loaded, so the start stops naming the variable and the entry."""
    monkeypatch.setenv(plugins.ENV_PARSERS, "mine=python:_userparsers:FailsToBuild")
    with pytest.raises(
        plugins.PluginConfigError, match=r"entry 'mine=python:_userparsers:FailsToBuild'.*grammar file"
    ):
        plugins.registrations("vllm", backends=[])


@pytest.mark.parametrize("module", ["no_such_server_xyz", "no_such_pkg.frontend"])
def test_plugins_run_says_a_module_it_cannot_find_before_registering(module):
    """A misspelt server module imported both frameworks first (seconds), then ended in runpy's
    ImportError traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "parsebridge.plugins.run", module, "--port", "1"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"error: no module named {module!r} to run (as python -m {module} would)"
    assert "Traceback" not in proc.stderr


def test_plugins_run_says_a_setting_it_cannot_use_without_a_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "parsebridge.plugins.run", "json.tool"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, "PARSEBRIDGE_PLUGIN_ON_ERROR": "ignore"},
        timeout=300,
        input="{}",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: PARSEBRIDGE_PLUGIN_ON_ERROR")

"""The examples of docs/plugins.md ("Serve any parser from vLLM or SGLang"), run through the servers' own startup code.

A model server cannot start here (no GPU, no model), so each command line is
taken from that page and given to the framework's own argument parser and
plugin loading — everything `vllm serve` / `sglang serve` do with these
flags before loading a model — in a fresh process, as the command would run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The page of those examples, and the one defining `my_parsers.py`, which they serve.
SECTION = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
README = SECTION + (ROOT / "docs" / "own-parsers.md").read_text(encoding="utf-8")
SRC = str(ROOT / "src")


def _command(program: str) -> list[str]:
    """The arguments of the README's ``PROGRAM serve …`` line (continuations joined)."""
    text = SECTION.replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith(f"{program} serve "))
    return shlex.split(line)[2:]


def _block(first_line: str) -> str:
    for code in re.findall(r"```python\n(.*?)```", README, re.S):
        if code.splitlines()[0].strip() == first_line:
            return code
    raise LookupError(first_line)


def _run(code: str, **env: str) -> str:
    full = {**os.environ, "PYTHONPATH": SRC, "PARSEBRIDGE_PLUGIN_BACKENDS": "builtin", **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_section_names_the_commands_and_the_environment():
    assert _command("vllm")[:1] == ["Qwen/Qwen3-8B"] and "--tool-parser-plugin" in _command("vllm")
    assert "--tool-call-parser" in _command("sglang")
    for name in ("PARSEBRIDGE_PLUGIN_PARSERS", "PARSEBRIDGE_PLUGIN_BACKENDS", "PARSEBRIDGE_PLUGIN_ON_ERROR"):
        assert name in SECTION


def _newest_release(fw: str) -> str:
    """The release the README's commands are written for: the newest supported one."""
    from parsebridge._frameworks.install import available

    return available()[fw][-1]


def _readme_release(fw: str) -> None:
    """Skip unless the installed release is the one the README's examples are written for (older
    vLLM takes the plugin file and has other import paths: test_vllm_plugin covers it there)."""
    pytest.importorskip(fw, reason=f"{fw} is not installed")
    import importlib.metadata

    installed, newest = importlib.metadata.version(fw), _newest_release(fw)
    if installed != newest:
        pytest.skip(f"the README's {fw} examples are written for {fw} {newest}, not {installed}")


def test_readme_vllm_serve_command():
    _readme_release("vllm")
    code = f"""
import json
from vllm.utils.argparse_utils import FlexibleArgumentParser
from vllm.entrypoints.common.cli_args import (
    init_parser_plugin, make_arg_parser, validate_api_server_args, validate_parsed_serve_args)
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager
args = make_arg_parser(FlexibleArgumentParser()).parse_args({_command("vllm")!r})
validate_parsed_serve_args(args)
init_parser_plugin(args)
validate_api_server_args(args)
print(json.dumps([ToolParserManager.get_tool_parser(args.tool_call_parser).pb_spec,
                  ReasoningParserManager.get_reasoning_parser(args.reasoning_parser).pb_spec]))
"""
    assert json.loads(_run(code, VLLM_TARGET_DEVICE="cpu")) == ["builtin:hermes", "builtin:qwen3"]


def test_readme_sglang_serve_command():
    """SGLang's plugin loader runs parsebridge's entry point, then its own parser reads the command."""
    _readme_release("sglang")
    _readme_release("vllm")  # the README's SGLang command serves a vllm: parser
    code = f"""
import argparse, json
import importlib.metadata as md
import sglang.srt.plugins as plugins
ep = md.EntryPoint(name="parsebridge", value="parsebridge.plugins.sglang:register_all", group="sglang.srt.plugins")
plugins.entry_points = lambda group: [ep] if group == plugins.GENERAL_PLUGINS_GROUP else []
plugins.load_plugins()
from sglang.srt.server_args import ServerArgs
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
args = parser.parse_args({_command("sglang")!r})
print(json.dumps([FunctionCallParser.ToolCallParserEnum[args.tool_call_parser].pb_spec,
                  ReasoningParser.DetectorMap[args.reasoning_parser].pb_spec]))
"""
    # the entry point's default enumerates vLLM too: the command names a vllm: parser
    assert json.loads(_run(code, PARSEBRIDGE_PLUGIN_BACKENDS="builtin,vllm")) == [
        "vllm:hermes",
        "builtin:qwen3",
    ]


def test_readme_own_parser_plugin_file(tmp_path):
    """``my_plugin.py`` from the README, given to vLLM as a plugin *file*, serves ``my_parsers.LineParser``."""
    _readme_release("vllm")
    (tmp_path / "my_parsers.py").write_text(_block("# my_parsers.py"), encoding="utf-8")
    (tmp_path / "my_plugin.py").write_text(_block("# my_plugin.py"), encoding="utf-8")
    code = f"""
import sys; sys.path.insert(0, {str(tmp_path)!r})
from vllm.tool_parsers import ToolParserManager
ToolParserManager.import_tool_parser({str(tmp_path / "my_plugin.py")!r})
cls = ToolParserManager.get_tool_parser("my-tools")
from parsebridge.adapters.vllm._compat import get_api
result = cls(None).extract_tool_calls('Hi\\nCALL get_time {{"tz": "UTC"}}\\n', get_api().make_request(None, "auto"))
print(cls.pb_spec, result.content.strip(), result.tool_calls[0].function.name, result.tool_calls[0].function.arguments)
"""
    assert _run(code) == 'python:my_parsers:LineParser Hi get_time {"tz": "UTC"}'


def test_readme_environment_variable_for_own_parsers(tmp_path):
    _readme_release("vllm")
    (tmp_path / "my_parsers.py").write_text(_block("# my_parsers.py"), encoding="utf-8")
    setting = re.search(r'`PARSEBRIDGE_PLUGIN_PARSERS="([^"]+)"`', SECTION).group(1)
    code = """
from vllm.tool_parsers import ToolParserManager
ToolParserManager.import_tool_parser("parsebridge.plugins.vllm")
print(ToolParserManager.get_tool_parser("my-tools").pb_spec)
"""
    got = _run(code, PARSEBRIDGE_PLUGIN_PARSERS=setting, PYTHONPATH=os.pathsep.join([SRC, str(tmp_path)]))
    assert got == "python:my_parsers:LineParser"

"""`parsebridge.plugins.vllm` as vLLM loads it: its own plugin loader, its managers, its parser driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed (the vllm plugin needs it)")

from vllm.reasoning import ReasoningParser, ReasoningParserManager

import parsebridge as pb
from parsebridge.adapters import _tokenizers
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS
from parsebridge.adapters.vllm._compat import get_api
from parsebridge.formats import UnknownFormatError, tool_format
from parsebridge.plugins.probe import vllm_plugin_argument
from parsebridge.protocol import normalize_name

API = get_api()
ToolParser, ToolParserManager = API.tool_module.ToolParser, API.ToolParserManager
SRC = str(Path(pb.__file__).resolve().parents[1])
#: What `--tool-parser-plugin` takes on this release: the module name, or the plugin file (vLLM 0.11).
PLUGIN = vllm_plugin_argument()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
HERMES = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture(scope="module", autouse=True)
def loaded():
    """The plugin loaded the way `vllm serve --tool-parser-plugin/--reasoning-parser-plugin` loads it."""
    ToolParserManager.import_tool_parser(PLUGIN)
    ReasoningParserManager.import_reasoning_parser(PLUGIN)
    return sys.modules["parsebridge.plugins.vllm"]


@pytest.fixture(scope="module")
def tokenizer():
    return _tokenizers.build_tokenizer(["<tool_call>", "</tool_call>", "<think>", "</think>"], "qwen")


def _request(tools=TOOLS, tool_choice="auto"):
    return API.make_request(tools, tool_choice)


def test_every_builtin_parser_resolves_through_vllms_managers():
    for name in TOOL_PARSERS:
        cls = ToolParserManager.get_tool_parser(f"pb:builtin:{name}")
        assert issubclass(cls, ToolParser) and cls.pb_spec == f"builtin:{name}"
    for name in REASONING_PARSERS:
        cls = ReasoningParserManager.get_reasoning_parser(f"pb:builtin:{name}")
        assert issubclass(cls, ReasoningParser) and cls.pb_spec == f"builtin:{name}"


def test_a_bare_builtin_name_resolves_as_its_config_string_does(tokenizer):
    """``--tool-call-parser pb:hermes`` (``hermes`` is ``builtin:hermes`` as a config string) was
    vLLM's KeyError naming nothing; it serves the builtin parser now, as ``pb:builtin:hermes`` does."""
    cls = ToolParserManager.get_tool_parser("pb:hermes")
    assert issubclass(cls, ToolParser) and pb.get_tool_parser(cls.pb_spec).spec == "builtin:hermes"
    result = cls(tokenizer).extract_tool_calls(HERMES, _request())
    assert [c.function.name for c in result.tool_calls] == ["get_weather"]
    reasoning = ReasoningParserManager.get_reasoning_parser("pb:qwen3")
    assert pb.get_reasoning_parser(reasoning.pb_spec).spec == "builtin:qwen3"


def test_every_sglang_parser_resolves_when_sglang_is_installed():
    pytest.importorskip("sglang", reason="SGLang is not installed (no sglang: parsers to serve)")
    # SGLang's own names (in a process that also loaded the SGLang plugin, its pb: names are not SGLang's)
    tool_names = [n for n in pb.parser_names("sglang", "tool") if not n.startswith("pb:")]
    reasoning_names = [n for n in pb.parser_names("sglang", "reasoning") if not n.startswith("pb:")]
    assert "qwen25" in tool_names and "deepseek-r1" in reasoning_names
    for name in tool_names:
        assert ToolParserManager.get_tool_parser(f"pb:sglang:{name}").pb_spec == f"sglang:{name}"
    for name in reasoning_names:
        assert ReasoningParserManager.get_reasoning_parser(f"pb:sglang:{name}").pb_spec == f"sglang:{name}"


def test_sglang_tool_classes_declare_their_formats_opening_marker(tokenizer):
    """`tool_call_start_token` (Dynamo reads it to spot a call arriving with the end of reasoning)
    is declared for SGLang's parsers too: the first marker of the format their family writes."""
    pytest.importorskip("sglang", reason="SGLang is not installed (no sglang: parsers to serve)")
    served = {normalize_name(n) for n in pb.parser_names("sglang", "tool")}
    got, want = {}, {}
    for family in pb.family_table().of_kind("tool"):
        name = family.parser_for("sglang")
        if name is None or normalize_name(name) not in served:
            continue
        try:
            want[name] = next(m for m in tool_format(family.format or family.name).markers if m)
        except UnknownFormatError:  # a framework-only family: parsebridge knows no markers for it
            continue
        cls = ToolParserManager.get_tool_parser(f"pb:sglang:{name}")
        got[name] = cls(tokenizer, TOOLS).tool_call_start_token
    assert got["qwen25"] == "<tool_call>" and len(got) > 10
    assert got == want


def test_names_are_listed_where_vllm_validates_the_command_line():
    assert {"pb:builtin:hermes", "hermes"} <= set(API.tool_parser_names())  # vLLM's own are untouched
    assert "pb:builtin:qwen3" in API.reasoning_parser_names()


#: What `vllm serve` does with its parser flags before loading a model, on 0.33 (`init_parser_plugin`)
#: and on 0.11 (inline in `run_server`, no reasoning plugin flag); the release decides which runs.
SERVE_FLAGS = """
import sys
try:
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from vllm.entrypoints.common import cli_args
    init, validate = cli_args.init_parser_plugin, cli_args.validate_api_server_args
    flags = ["--reasoning-parser-plugin", sys.argv[1]]
except ImportError:  # 0.11
    from vllm.utils import FlexibleArgumentParser
    from vllm.entrypoints.openai import cli_args
    try:
        from vllm.entrypoints.openai.api_server import validate_api_server_args as validate
    except ModuleNotFoundError as exc:  # the server's own dependencies, not in a parsers-only install
        print("SKIP", exc.name)
        sys.exit(0)
    from vllm.entrypoints.openai.tool_parsers import ToolParserManager
    init = lambda args: ToolParserManager.import_tool_parser(args.tool_parser_plugin)
    flags = []
from vllm.reasoning import ReasoningParserManager
args = cli_args.make_arg_parser(FlexibleArgumentParser()).parse_args([
    "some/model", "--enable-auto-tool-choice",
    "--tool-parser-plugin", sys.argv[1], "--tool-call-parser", "pb:builtin:hermes",
    "--reasoning-parser", "pb:builtin:qwen3", *flags])
cli_args.validate_parsed_serve_args(args)
init(args)
validate(args)
print(ReasoningParserManager.get_reasoning_parser(args.reasoning_parser).pb_spec)
"""


def test_vllm_serve_command_line_accepts_the_names():
    """`vllm serve`'s own argument parser, plugin loading and name validation, in a fresh process."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "VLLM_TARGET_DEVICE": "cpu",
        "PARSEBRIDGE_PLUGIN_BACKENDS": "builtin",
    }
    cmd = [sys.executable, "-c", SERVE_FLAGS, PLUGIN]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    last = out.stdout.strip().splitlines()[-1]
    if last.startswith("SKIP "):
        pytest.skip(f"vLLM {API.version}'s api_server needs {last[5:]}, which is not installed")
    assert last == "builtin:qwen3"


def test_unknown_names_are_still_refused_by_vllm():
    with pytest.raises(KeyError):
        ToolParserManager.get_tool_parser("pb:builtin:no_such_parser")


def test_python_parser_registered_by_function(loaded):
    name = loaded.register("python:_userparsers:CallLine", name="my-call-line")
    assert name == "my-call-line"
    cls = ToolParserManager.get_tool_parser("my-call-line")
    result = cls(None).extract_tool_calls('hi\nCALL get_weather {"city": "Oslo"}\n', _request())
    assert result.tools_called and result.content == "hi\n"
    assert [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert loaded.register("python:_userparsers:Colon") == "pb:python:_userparsers:colon"
    assert issubclass(
        ReasoningParserManager.get_reasoning_parser("pb:python:_userparsers:colon"), ReasoningParser
    )


def test_python_parser_registered_by_environment_variable():
    """``PARSEBRIDGE_PLUGIN_PARSERS`` adds user parsers when vLLM imports the plugin."""
    code = f"""
from parsebridge.adapters.vllm._compat import get_api
manager = get_api().ToolParserManager
manager.import_tool_parser({PLUGIN!r})
print(manager.get_tool_parser("mine").pb_spec)
"""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([SRC, str(Path(__file__).resolve().parents[1])]),
        "PARSEBRIDGE_PLUGIN_BACKENDS": "builtin",
        "PARSEBRIDGE_PLUGIN_PARSERS": "mine=python:_userparsers:CallLine",
    }
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "python:_userparsers:CallLine"


def _drive(parser, request, chunks, tokenizer, prompt_ids):
    """vLLM 0.33's driver over chunks; what a client assembles."""
    reasoning, content, calls = [], [], {}
    for i, chunk in enumerate(chunks):
        ids = tokenizer.encode(chunk, add_special_tokens=False)
        delta = parser.parse_delta(
            chunk, ids, request, prompt_token_ids=prompt_ids, finished=i == len(chunks) - 1
        )
        if delta is None:
            continue
        reasoning.append(delta.reasoning or "")
        content.append(delta.content or "")
        for tc in delta.tool_calls:
            call = calls.setdefault(tc.index, {"name": None, "arguments": "", "ids": 0})
            call["ids"] += tc.id is not None
            if tc.function and tc.function.name:
                call["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                call["arguments"] += tc.function.arguments
    return "".join(reasoning) or None, "".join(content) or None, calls


def _composed(tool=None, reasoning=None, tokenizer=None):
    if not API.has_parser_driver:
        pytest.skip(f"vLLM {API.version} has no vllm.parser driver (0.33+)")
    from vllm.parser import ParserManager

    return ParserManager.get_parser(
        tool_parser_name=tool, reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer
    )


@pytest.mark.parametrize("per", [1, 3, 20, len(HERMES)])
def test_instances_keep_per_request_state(tokenizer, per):
    """Two requests streamed interleaved through two parser instances: neither sees the other."""
    cls = _composed(tool="pb:builtin:hermes", tokenizer=tokenizer)
    request = _request()
    a, b = cls(tokenizer, request.tools), cls(tokenizer, request.tools)
    chunks = [HERMES[i : i + per] for i in range(0, len(HERMES), per)]
    other = "no call here, just text " * 3
    other_chunks = [other[i : i + per] for i in range(0, len(other), per)]
    got_a, got_b = {}, {}
    for i in range(max(len(chunks), len(other_chunks))):
        for parser, seq, got in ((a, chunks, got_a), (b, other_chunks, got_b)):
            if i < len(seq):
                d = parser.parse_delta(seq[i], [], request, prompt_token_ids=[], finished=i == len(seq) - 1)
                if d is not None:
                    got["content"] = got.get("content", "") + (d.content or "")
                    got["calls"] = got.get("calls", 0) + len(d.tool_calls)
    assert got_a["content"] == "Sure." and got_a["calls"] >= 1
    assert got_b == {"content": other, "calls": 0}


def test_parser_class_helper_composes_vllms_own_parser(loaded, tokenizer):
    if not API.has_parser_driver:
        pytest.skip(f"vLLM {API.version} has no vllm.parser driver (0.33+)")
    cls = loaded.parser_class(reasoning="builtin:qwen3", tool="pb:builtin:hermes")
    parser = cls(tokenizer, _request().tools)
    text = "<think>hmm</think>" + HERMES
    reasoning, content, calls = parser.parse(text, _request(), enable_auto_tools=True)
    assert (reasoning, content) == ("hmm", "Sure.")
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("kwargs", [{"enable_thinking": False}, {"thinking": False}])
def test_chat_template_kwargs_that_turn_thinking_off_reach_the_parser(tokenizer, kwargs):
    """vLLM constructs a reasoning parser per request with the request's chat_template_kwargs, as its
    own qwen3 parser reads them: thinking off means the output starts outside reasoning."""
    cls = ReasoningParserManager.get_reasoning_parser("pb:builtin:qwen3")
    text = "pondering</think>The answer."
    assert cls(tokenizer).extract_reasoning(text, _request(None)) == ("pondering", "The answer.")
    off = cls(tokenizer, chat_template_kwargs=kwargs)
    assert off.extract_reasoning(text, _request(None)) == (None, text)
    on = cls(tokenizer, chat_template_kwargs={"enable_thinking": True})
    assert on.extract_reasoning(text, _request(None)) == ("pondering", "The answer.")


def test_reasoning_token_id_methods(tokenizer):
    cls = ReasoningParserManager.get_reasoning_parser("pb:builtin:qwen3")
    parser = cls(tokenizer)
    enc = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    assert parser.is_reasoning_end(enc("user: hi\nassistant: <think>\n\n</think>\n\n"))
    assert not parser.is_reasoning_end(enc("user: hi\nassistant: <think>\n"))
    assert not parser.is_reasoning_end(enc("user: hi\nassistant:"))
    ids = enc("still thinking</think>the answer")
    assert tokenizer.decode(parser.extract_content_ids(ids)) == "the answer"
    assert parser.extract_content_ids(enc("no end")) == enc("no end")
    head, tail = enc("abc </thi"), enc("nk> done")
    assert parser.is_reasoning_end_streaming(head + tail, tail)
    assert not parser.is_reasoning_end_streaming(head, head[-1:])
    assert (parser.reasoning_start_str, parser.reasoning_end_str) == ("<think>", "</think>")


@pytest.mark.parametrize("prompt", ["user: hi\nassistant: <think>\n", "user: hi\nassistant:"])
def test_reasoning_started_in_the_prompt_is_read_from_prompt_ids(tokenizer, prompt):
    """A template that opened ``<think>`` makes the output start inside reasoning, as parsebridge reads it."""
    cls = _composed(reasoning="pb:builtin:qwen3", tokenizer=tokenizer)
    output = "pondering</think>The answer."
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
    got = _drive(
        cls(tokenizer),
        _request(None),
        [output[i : i + 3] for i in range(0, len(output), 3)],
        tokenizer,
        prompt_ids,
    )
    started = prompt.rstrip().endswith("<think>")
    want = pb.get_reasoning_parser("builtin:qwen3").parse(output, reasoning_started=started or None)
    assert got[:2] == (want.reasoning, want.content)


def test_tool_choice_none_passes_text_through(tokenizer):
    cls = ToolParserManager.get_tool_parser("pb:builtin:hermes")
    parser = cls(tokenizer, None)
    request = _request(tool_choice="none")
    assert parser.extract_tool_calls(HERMES, request).content == HERMES
    delta = parser.extract_tool_calls_streaming("", HERMES, HERMES, [], [], [], request)
    assert delta.content == HERMES and not delta.tool_calls


def test_probe_for_the_support_table():
    from parsebridge.plugins._tables import tables
    from parsebridge.plugins.probe import probe

    before = [dict(t) for t in tables()]  # this module registered pb: names already
    result = probe("vllm")
    assert [dict(t) for t in tables()] == before, "the probe changed vLLM's tables"
    assert result["available"], result
    assert result["end_of_output_flush"] == API.has_parser_driver


def test_a_probe_in_a_fresh_process_leaves_no_pb_names_behind():
    """`parsebridge conformance` probes the plugin in the user's process: vLLM's own tables stay its own."""
    code = (
        "from parsebridge.plugins.probe import probe\n"
        "from parsebridge.plugins._tables import tables\n"
        "assert probe('vllm')['available']\n"
        "print(sorted(str(n) for t in tables() for n in t if str(n).startswith('pb:')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_run_registers_then_runs_a_server_module(tmp_path):
    """`python -m parsebridge.plugins.run MODULE ARGS` (for launchers that never import a plugin)."""
    (tmp_path / "fake_server.py").write_text(
        "import sys\n"
        "from parsebridge.adapters.vllm._compat import get_api\n"
        "print(sys.argv[1:], get_api().ToolParserManager.get_tool_parser(sys.argv[2]).pb_spec)\n",
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)]),
        "PARSEBRIDGE_PLUGIN_BACKENDS": "builtin",
    }
    cmd = [
        sys.executable,
        "-m",
        "parsebridge.plugins.run",
        "fake_server",
        "--tool-call-parser",
        "pb:builtin:hermes",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "['--tool-call-parser', 'pb:builtin:hermes'] builtin:hermes"

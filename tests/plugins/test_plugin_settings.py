"""Issue 40, items 8-11: plugin settings and helpers fail typed, say what they assume, and scale.

What runs without a framework runs here in `core`; what drives vLLM's or SGLang's managers skips
when that framework is absent (the `all` tox env has both).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge import plugins

SRC = str(Path(plugins.__file__).resolve().parents[2])
TESTS = str(Path(__file__).resolve().parents[1])


def _needs(framework: str) -> None:
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed (parsebridge install-framework {framework}-latest)")


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PARSEBRIDGE_PLUGIN")}
    full.update(PYTHONPATH=os.pathsep.join([SRC, TESTS]), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=600)


# ---------------------------------------------------------------- 8: a bad PARSEBRIDGE_PLUGIN_PARSERS entry


@pytest.mark.parametrize(
    ("value", "entry", "reason"),
    [
        ("my-tools=python:nosuch:X", "my-tools=python:nosuch:X", "cannot import module 'nosuch'"),
        ("ok=builtin:hermes, =builtin:qwen3", "=builtin:qwen3", "the name before '=' is empty"),
        (
            "x=builtin:hermez",
            "x=builtin:hermez",
            "names neither a tool nor a reasoning parser of builtin. Did you mean 'builtin:hermes'",
        ),
        (
            "x=python:_userparsers:NoParse",
            "x=python:_userparsers:NoParse",
            "is not a tool or reasoning parser",
        ),
    ],
)
def test_a_bad_env_entry_is_a_typed_error_naming_the_variable_and_entry(
    monkeypatch: pytest.MonkeyPatch, value: str, entry: str, reason: str
) -> None:
    monkeypatch.setenv(plugins.ENV_PARSERS, value)
    with pytest.raises(plugins.PluginConfigError) as info:
        plugins.registrations("vllm", backends=[])
    assert isinstance(info.value, pb.ParsebridgeError)
    assert str(info.value).startswith(f"PARSEBRIDGE_PLUGIN_PARSERS: entry {entry!r}: ")
    assert reason in str(info.value)


@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_loading_a_plugin_with_a_bad_entry_fails_with_that_error(framework: str) -> None:
    _needs(framework)
    code = (
        "import json\n"
        "try:\n"
        f"    import parsebridge.plugins.{framework} as p; p.register_all()\n"
        "except Exception as exc:\n"
        "    print(json.dumps([type(exc).__name__, str(exc)]))\n"
    )
    p = _python(
        code, PARSEBRIDGE_PLUGIN_PARSERS="my-tools=python:nosuch:X", PARSEBRIDGE_PLUGIN_BACKENDS="builtin"
    )
    kind, message = json.loads(p.stdout.strip().splitlines()[-1])
    assert kind == "PluginConfigError", p.stderr
    assert message.startswith("PARSEBRIDGE_PLUGIN_PARSERS: entry 'my-tools=python:nosuch:X': ")


# ---------------------------------------------------------------- 9: family aliases


def test_family_aliases_are_registered_as_config_strings_accept_them() -> None:
    regs = {r.name: r for r in plugins.enumerate_registrations("vllm", ["builtin"])}
    for alias, kind in (("qwen25", "tool"), ("qwen3", "reasoning"), ("r1", "reasoning"), ("llama3", "tool")):
        reg = regs[f"pb:builtin:{alias}"]
        assert reg.kind == kind and reg.spec == f"builtin:{alias}"
        assert pb.get_tool_parser(reg.spec) if kind == "tool" else pb.get_reasoning_parser(reg.spec)
    assert plugins.kind_of("builtin:qwen25") == "tool"


def test_vllm_resolves_a_family_alias_through_its_manager() -> None:
    _needs("vllm")
    code = (
        "import json\n"
        "from parsebridge.adapters.vllm._compat import get_api\n"
        "api = get_api()\n"
        "from parsebridge.plugins.probe import vllm_plugin_argument\n"
        # the module name, or the plugin file on releases that take a file (vLLM 0.11)
        "api.tool_module.ToolParserManager.import_tool_parser(vllm_plugin_argument())\n"
        "cls = api.tool_parser_class('pb:builtin:qwen25')\n"
        "print(json.dumps(cls.pb_spec))\n"
    )
    p = _python(code, PARSEBRIDGE_PLUGIN_BACKENDS="builtin")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == "builtin:qwen25"


# ---------------------------------------------------------------- 10: SGLang's entry point imports no vLLM


def test_sglang_entry_point_registers_builtin_only_unless_asked() -> None:
    assert plugins.default_backends("sglang") == ["builtin"]
    assert plugins.default_backends("vllm") == ["builtin", "sglang"]


def test_sglang_entry_point_does_not_import_vllm_by_default() -> None:
    _needs("sglang")
    code = (
        "import json, sys\n"
        "import parsebridge.plugins.sglang as p\n"
        "names = p.register_all()\n"
        "print(json.dumps(['vllm' in sys.modules, any(n.startswith('pb:vllm:') for n in names)]))\n"
    )
    p = _python(code)
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [False, False], p.stderr
    if importlib.util.find_spec("vllm") is not None:
        asked = _python(code, PARSEBRIDGE_PLUGIN_BACKENDS="builtin,vllm")
        assert json.loads(asked.stdout.strip().splitlines()[-1]) == [True, True], asked.stderr


# ---------------------------------------------------------------- 11: kind_of, markers, decode, offline


class OnlyReasoning:
    def parse_reasoning(self, text: str) -> None:
        return None

    def has_reasoning(self, text: str) -> bool:
        return False


class OnlyHas:
    def has_reasoning(self, text: str) -> bool:
        return False


def test_kind_of_reads_a_dynamo_reasoning_class_as_reasoning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kind_cases", sys.modules[__name__])
    assert plugins.kind_of("python:kind_cases:OnlyReasoning") == "reasoning"
    assert plugins.kind_of("python:kind_cases:OnlyHas") == "reasoning"
    assert plugins.kind_of("python:_userparsers:SeedToolParser") == "tool"
    with pytest.raises(pb.ParserProtocolError):
        plugins.kind_of("python:_userparsers:NoParse")


def test_reasoning_markers_say_when_they_assume_think(caplog: pytest.LogCaptureFixture) -> None:
    class Bare:
        spec = "python:bare:Bare"
        markers = ()

    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        assert plugins.reasoning_markers(Bare()) == ("<think>", "</think>")
        assert plugins.reasoning_markers(Bare()) == ("<think>", "</think>")  # said once per spec
    said = [r.getMessage() for r in caplog.records if "python:bare:Bare" in r.getMessage()]
    assert len(said) == 1 and "declare markers = (START, END)" in said[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        assert plugins.reasoning_markers(pb.get_reasoning_parser("builtin:qwen3")) == ("<think>", "</think>")
    assert not caplog.records  # a parser that declares its markers: nothing to say


class _CountingTokenizer:
    """Each id is one character of text; counts the ids it decodes."""

    def __init__(self, text: str) -> None:
        self.text, self.decoded = text, 0

    def decode(self, ids: list[int]) -> str:
        self.decoded += len(ids)
        return "".join(self.text[i] for i in ids)


def _vllm_reasoning_parser(tokenizer: object) -> object:
    from parsebridge.adapters.vllm._compat import get_api

    get_api().reasoning_module.ReasoningParserManager.import_reasoning_parser("parsebridge.plugins.vllm")
    return get_api().reasoning_parser_class("pb:builtin:qwen3")(tokenizer)


def test_extract_content_ids_decodes_n_log_n_ids_not_n_squared() -> None:
    _needs("vllm")
    n = 4000
    text = "r" * (n // 2) + "</think>" + "c" * (n // 2 - 8)
    tok = _CountingTokenizer(text)
    parser = _vllm_reasoning_parser(tok)
    ids = list(range(len(text)))
    assert parser.extract_content_ids(ids) == ids[n // 2 + 8 :]  # type: ignore[attr-defined]
    assert tok.decoded < 20 * n  # the scan decoded about n*n/4 = 4,000,000 ids here
    assert parser.extract_content_ids(list(range(10))) == list(range(10))  # type: ignore[attr-defined]


class _BrokenTokenizer:
    def decode(self, ids: list[int]) -> str:
        raise IndexError("id out of vocabulary")


def test_decode_failures_follow_the_plugin_policy(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _needs("vllm")
    parser = _vllm_reasoning_parser(_BrokenTokenizer())
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        assert parser.is_reasoning_end([1, 2, 3]) is False  # type: ignore[attr-defined]
    assert any("cannot decode token ids (IndexError" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv(plugins.ENV_ON_ERROR, "raise")
    with pytest.raises(pb.BackendError, match=r"tokenizer\.decode"):
        parser.is_reasoning_end([1, 2, 3])  # type: ignore[attr-defined]


def test_offline_tokenizer_builds_a_plugin_parser_class() -> None:
    _needs("vllm")
    from parsebridge.adapters.vllm._compat import get_api

    api = get_api()
    api.tool_module.ToolParserManager.import_tool_parser("parsebridge.plugins.vllm")
    tok = plugins.offline_tokenizer("builtin:hermes")
    assert len(tok.encode("<tool_call>", add_special_tokens=False)) == 1
    parser = api.tool_parser_class("pb:builtin:hermes")(tok)
    request = api.make_request([{"type": "function", "function": {"name": "f", "parameters": {}}}], "auto")
    got = parser.extract_tool_calls('Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>', request)
    assert got.tools_called and got.tool_calls[0].function.name == "f"


# ---------------------------------------------------------------- a bad BACKENDS or ON_ERROR value


def test_an_unknown_backend_in_the_variable_stops_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo there would otherwise register fewer parsers in silence (a warning nobody sees)."""
    monkeypatch.setenv(plugins.ENV_BACKENDS, "builtin,vlm")
    with pytest.raises(plugins.PluginConfigError) as info:
        plugins.registrations("vllm")
    assert str(info.value).startswith(
        "PARSEBRIDGE_PLUGIN_BACKENDS: entry 'vlm': unknown parser backend 'vlm'."
    )
    assert "Did you mean 'vllm'?" in str(info.value)


def test_an_unknown_policy_stops_registration_not_each_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read when the plugin registers (the server's start), not first when a request builds a parser."""
    monkeypatch.setenv(plugins.ENV_ON_ERROR, "ignore")
    with pytest.raises(plugins.PluginConfigError) as info:
        plugins.registrations("vllm", backends=[])
    assert str(info.value) == (
        "PARSEBRIDGE_PLUGIN_ON_ERROR: entry 'ignore': the failure policy is 'raise' or 'fallback'"
    )

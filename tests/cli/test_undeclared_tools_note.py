"""`parse` says why dynamo:/smg:/sglang: read no call when no tools are declared (their servers' rule),
as it says when reasoning was assumed open; with `--tools` the calls are read and nothing is said."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest
from _cli_run import run

import parsebridge as pb

#: (No prose before the call: SGLang 0.4.10.post2's qwen25 stream misses a call after "Let me check.",
#: with tools declared too; the newest reads it. This test is about the server's rule, not that.)
OUT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]

#: (framework, mode, release) that reads calls with no tools declared, as measured: Dynamo 1.4.2's
#: one-shot frontend does (its stream and 1.6.1's both do not), so `parse` has nothing to explain.
READS_WITHOUT_TOOLS = {("dynamo", "oneshot", "1.4.2")}
RELEASE_PACKAGE = {"dynamo": "ai-dynamo-runtime", "smg": "smg", "sglang": "sglang"}


@pytest.mark.framework
@pytest.mark.parametrize(
    ("spec", "stream"),
    [
        ("dynamo:hermes", False),
        ("dynamo:hermes", True),
        ("smg:hermes", True),
        ("sglang:qwen25", False),
        ("sglang:qwen25", True),
    ],
)
def test_parse_names_the_servers_rule_when_no_tools_are_declared(
    spec: str, stream: bool, tmp_path: Path
) -> None:
    framework = spec.split(":")[0]
    reason = pb.get_backend(framework).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{framework}: {reason} (parsebridge install-framework {framework}-latest)")
    (tmp_path / "out.txt").write_text(OUT, encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    mode = ["--stream"] if stream else []
    bare = run("parse", "--tool-parser", spec, *mode, "out.txt", cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    release = importlib.metadata.version(RELEASE_PACKAGE[framework])
    if (framework, "stream" if stream else "oneshot", release) in READS_WITHOUT_TOOLS:
        assert "get_weather" in bare.stdout and "no tools declared" not in bare.stdout
    else:
        assert "no tools declared:" in bare.stdout and "--tools FILE declares them" in bare.stdout
    declared = run("parse", "--tool-parser", spec, *mode, "--tools", "tools.json", "out.txt", cwd=tmp_path)
    assert declared.returncode == 0, declared.stderr
    assert "get_weather" in declared.stdout and "no tools declared" not in declared.stdout


def test_builtin_reads_calls_without_tools_and_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text(OUT, encoding="utf-8")
    bare = run("parse", "--tool-parser", "builtin:hermes", "out.txt", cwd=tmp_path)
    assert bare.returncode == 0 and "get_weather" in bare.stdout and "no tools declared" not in bare.stdout

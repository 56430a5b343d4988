"""Every engine parsebridge reads is named where a new user looks first: the README's opening,
the package description, `parsebridge --help` and its subcommands' help, install hints that say
what each install brings, and `install-framework --resolve` naming what pip installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from _cli_run import run

from parsebridge._frameworks.install import available, install_hint

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("vLLM", "SGLang", "Dynamo", "smg", "builtin")


def test_the_readme_opens_with_every_engine() -> None:
    first = (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")[1]
    assert all(name in first for name in ENGINES) and "your own" in first, first


def test_the_package_description_names_every_engine() -> None:
    description = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "description"
    ]
    assert all(name in description for name in ENGINES), description


def test_top_level_help_names_dynamo_and_smg(tmp_path: Path) -> None:
    out = run("--help", cwd=tmp_path).stdout
    assert "Dynamo" in out and "smg" in out
    summary = re.search(r"install-framework\s+(.*?)\n\s+conformance", out, re.S)
    assert summary and "Dynamo" in summary[1] and "smg" in summary[1] and "torch" not in summary[1]


@pytest.mark.parametrize("command", ["parse", "compare", "conformance"])
def test_subcommand_help_gives_dynamo_and_smg_examples(command: str, tmp_path: Path) -> None:
    out = " ".join(run(command, "--help", cwd=tmp_path, COLUMNS="200").stdout.split())
    logs = re.search(r"let (vLLM[^()]*?) log \(", out)
    assert logs and "Dynamo" in logs[1] and "smg" in logs[1], out
    if command != "conformance":
        assert "dynamo:" in out and "smg:" in out


def test_install_hints_say_torch_only_where_it_is_installed() -> None:
    assert "CPU torch" in install_hint("vllm") and "CPU torch" in install_hint("sglang")
    assert "torch" not in install_hint("dynamo") and "torch" not in install_hint("smg")


def test_resolve_names_the_distribution_pip_installs(tmp_path: Path) -> None:
    out = run("install-framework", "dynamo-latest", "--resolve", cwd=tmp_path).stdout.strip()
    assert out == f"ai-dynamo-runtime=={available()['dynamo'][-1]}"

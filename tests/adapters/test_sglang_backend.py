"""The SGLang backend without SGLang: lazy import, the install hint, the family table column."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import parsebridge as pb
from parsebridge.adapters import registry


def test_module_imports_no_framework() -> None:
    code = (
        "import sys, parsebridge.adapters.sglang as m; m.SglangBackend();"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'sglang', 'torch', 'transformers'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_not_installed_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def fake(name: str, *args: object, **kwargs: object) -> object:
        return None if name == "sglang" else real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    registry._reset_caches()
    try:
        with pytest.raises(pb.BackendNotInstalledError) as info:
            pb.get_tool_parser("sglang:qwen25")
        assert "parsebridge install-framework sglang-latest" in str(info.value)
        assert "sglang==X" not in str(info.value) and "sglang-X" not in str(info.value)
        assert info.value.backend == "sglang"
        listed = {b.name: b for b in pb.list_backends()}
        assert not listed["sglang"].available and listed["sglang"].install
    finally:
        registry._reset_caches()


def test_family_table_has_sglang_names() -> None:
    from parsebridge.protocol import family_table

    table = family_table()
    expect = {
        ("tool", "hermes"): "qwen25",
        ("tool", "llama3_json"): "llama3",
        ("tool", "deepseek_v3"): "deepseekv3",
        ("tool", "minimax_m2"): "minimax-m2",
        ("reasoning", "deepseek_r1"): "deepseek-r1",
        ("reasoning", "qwen3_thinking"): "qwen3-thinking",
    }
    for (kind, fam), own in expect.items():
        family = table.get(kind, fam)  # type: ignore[arg-type]
        assert family is not None and family.parser_for("sglang") == own

"""Each format is written down once, in `parsebridge.formats`.

No code outside `formats/` spells a family's marker: builtin parsers, the
conformance checks, the adversarial corpus and the benchmarks import the
markers (and renderers) from the family's format module. Docstrings and
comments may still describe a format in prose.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import parsebridge
from parsebridge.formats import (
    reasoning_families,
    reasoning_format,
    tool_families,
    tool_format,
)

ROOT = Path(parsebridge.__file__).resolve().parents[2]
PKG = Path(parsebridge.__file__).resolve().parent


def _markers() -> set[str]:
    found: set[str] = set()
    for family in tool_families():
        found |= set(tool_format(family).markers)
    for family in reasoning_families():
        found |= set(reasoning_format(family).markers)
    return {m for m in found if len(m) >= 4}  # short ones ("[", "{") are not markers of one family


def _docstring_ids(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _literal_markers(path: Path, markers: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_ids(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for m in sorted(markers):
                if m in node.value:
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                    hits.append(f"{where}:{node.lineno}: {m!r}")
    return hits


def _code_files() -> list[Path]:
    files = [p for p in PKG.rglob("*.py") if "formats" not in p.relative_to(PKG).parts]
    bench = ROOT / "benchmarks"
    if bench.is_dir():
        files += sorted(bench.rglob("*.py"))
    return files


def test_marker_strings_live_only_in_formats():
    markers = _markers()
    assert "<tool_call>" in markers and "[TOOL_CALLS]" in markers  # the scan sees real markers
    hits = [h for p in _code_files() for h in _literal_markers(p, markers)]
    assert hits == [], "spell these with the constants of parsebridge.formats:\n" + "\n".join(hits)


def test_scan_finds_a_literal_marker(tmp_path):
    """The scan itself works: a marker in a string literal is found, one in a docstring is not."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""<tool_call> in prose."""\nX = "a <tool_call> b"\n', encoding="utf-8")
    assert _literal_markers(sample, _markers()) == ["sample.py:2: '<tool_call>'"]


@pytest.mark.parametrize("family", tool_families())
def test_every_tool_format_renders_and_knows_its_markers(family):
    fmt = tool_format(family)
    text = fmt.render([("get_weather", {"location": "Paris"})])
    assert "get_weather" in text and "Paris" in text
    assert all(m for m in fmt.markers)
    assert fmt.summary
    if fmt.grammar is not None:
        assert fmt.grammar.markers and "get_weather" in fmt.grammar.calls([("get_weather", '{"a": 1}')])

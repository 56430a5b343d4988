"""Every Python example in the README runs (the README is documentation users copy).

Blocks that need a framework (they name ``vllm:`` or ``sglang:`` specs in
code that runs) are skipped unless that framework is installed; a block
preceded by ``<!-- readme: no-test -->`` is illustration only.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"(<!-- readme: no-test -->\s*)?```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        if m.group(1):
            continue
        out.append((text[: m.start()].count("\n") + 1, m.group(2)))
    return out


def _needs(code: str) -> list[str]:
    live = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
    return [fw for fw in ("vllm", "sglang") if f'"{fw}:' in live or f"'{fw}:" in live]


@pytest.mark.parametrize(("line", "code"), _blocks(), ids=lambda v: f"line{v}" if isinstance(v, int) else "")
def test_readme_python_example_runs(line, code, tmp_path, monkeypatch):
    for fw in _needs(code):
        if importlib.util.find_spec(fw) is None:
            pytest.skip(f"README example at line {line} needs {fw}, which is not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # A block may define a module (a "# my_parsers.py" first line): write it, then import works.
    first = code.splitlines()[0] if code else ""
    m = re.match(r"#\s*([\w/]+\.py)\s*$", first)
    if m:
        (tmp_path / m.group(1)).write_text(code, encoding="utf-8")
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
    os.chdir(tmp_path)  # the example must not have changed directory for good

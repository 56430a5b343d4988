"""Every Python example in the README runs (the README is documentation users copy).

Blocks that need a framework (they name ``vllm:`` or ``sglang:`` specs in
code that runs) are skipped unless that framework is installed; a block
preceded by ``<!-- readme: no-test -->`` is illustration only.

A backend swap the README advertises on a line, ``"builtin:hermes" ...  # or
"vllm:hermes", "sglang:hermes"``, is run too: the block once more with the
line's first spec replaced by each alternative, for every installed backend.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import sys
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


_SPEC = re.compile(r"""["'](\w+:[\w.:-]+)["']""")


def _swaps(code: str) -> list[tuple[str, str]]:
    """(spec, alternative) for each ``# or "A", "B"`` comment after a quoted spec."""
    out = []
    for line in code.splitlines():
        live, sep, comment = line.partition("#")
        if not sep or not comment.strip().startswith("or "):
            continue
        first = _SPEC.search(live)
        alternatives = _SPEC.findall(comment)
        if first and alternatives:
            out.extend((first.group(1), alt) for alt in alternatives)
    return out


def _cases() -> list[tuple[int, str, str | None]]:
    out: list[tuple[int, str, str | None]] = []
    for line, code in _blocks():
        out.append((line, code, None))
        for spec, alt in _swaps(code):
            out.append((line, code.replace(f'"{spec}"', f'"{alt}"', 1), alt))
    return out


def _needs(code: str) -> list[str]:
    live = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
    return [fw for fw in ("vllm", "sglang") if f'"{fw}:' in live or f"'{fw}:" in live]


def _id(value: object) -> str:
    if isinstance(value, int):
        return f"line{value}"
    return value if isinstance(value, str) and ":" in value and "\n" not in value else ""


def test_readme_advertised_swaps_are_found():
    """The swap comments are really picked up (a regex that matched nothing would test nothing)."""
    swaps = [alt for _, _, alt in _cases() if alt]
    assert "vllm:hermes" in swaps and "sglang:hermes" in swaps


def _documented_release(fw: str) -> str:
    """The release the README's swaps describe: the newest supported one (requirements/FW-X.txt)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from install_framework import available

    return available()[fw][-1]


@pytest.mark.parametrize(("line", "code", "swap"), _cases(), ids=_id)
def test_readme_python_example_runs(line, code, swap, tmp_path, monkeypatch):
    for fw in _needs(code):
        if importlib.util.find_spec(fw) is None:
            pytest.skip(f"README example at line {line} needs {fw}, which is not installed")
        installed, documented = importlib.metadata.version(fw), _documented_release(fw)
        if installed != documented:
            # Older releases parse differently (the matrix shows how); the README speaks of the newest.
            pytest.skip(f"README example at line {line} is written for {fw} {documented}, not {installed}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # A block may define a module (a "# my_parsers.py" first line): write it, then import works.
    first = code.splitlines()[0] if code else ""
    m = re.match(r"#\s*([\w/]+\.py)\s*$", first)
    if m:
        (tmp_path / m.group(1)).write_text(code, encoding="utf-8")
    exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
    os.chdir(tmp_path)  # the example must not have changed directory for good

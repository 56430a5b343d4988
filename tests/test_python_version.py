"""From a source checkout on an older Python, `import parsebridge` says which Python it needs
(not ``ImportError: cannot import name 'Self'``): pip's requires-python never ran there."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

import parsebridge
from parsebridge._version import REQUIRES_PYTHON, check_python

ROOT = Path(__file__).resolve().parent.parent
PKG = Path(parsebridge.__file__).parent


def test_an_older_python_gets_a_clear_message() -> None:
    with pytest.raises(
        ImportError, match=r"parsebridge needs Python 3\.11 or newer; this is Python 3\.10\.14"
    ):
        check_python((3, 10, 14, "final", 0))
    check_python((3, 11, 0, "final", 0))
    check_python((3, 13, 1, "final", 0))


def test_the_check_matches_requires_python() -> None:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert spec == ">=" + ".".join(map(str, REQUIRES_PYTHON))


#: Standard-library modules an older Python has, which may run before the check.
_OLD_STDLIB = {
    "__future__",
    "importlib",
    "importlib.abc",
    "importlib.machinery",
    "logging",
    "sys",
    "types",
    "typing",
    "warnings",
}


def _imports(source: str) -> set[str]:
    return set(re.findall(r"^(?:from|import) ([\w.]+)", source, re.M))


def test_what_runs_before_the_check_parses_on_python_3_8() -> None:
    """The package root up to the check, and the modules of ours it imports before it, use no
    newer syntax and import only standard-library modules an older Python has."""
    root = (PKG / "__init__.py").read_text(encoding="utf-8")
    head = root[: root.index("check_python()")]
    ast.parse(head, feature_version=(3, 8))
    ours = {m for m in _imports(head) if m.startswith(".")}
    assert _imports(head) - ours <= _OLD_STDLIB
    modules = [
        PKG / "_version.py",
        *(PKG / f"{name}.py" for name in re.findall(r"^from \. import (\w+)", head, re.M)),
    ]
    for path in modules:
        source = path.read_text(encoding="utf-8")
        ast.parse(source, feature_version=(3, 8))
        assert _imports(source) <= _OLD_STDLIB, (path.name, _imports(source) - _OLD_STDLIB)

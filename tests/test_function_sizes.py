"""Functions a reader can hold: none in src/ over ~60 lines but a reviewed few; modules none over 500.

A function's length runs from its ``def`` line to its last line (docstring,
comments and blank lines included; decorators not), nested functions
counted on their own as well as inside their parent. A new long function
fails here: split it where a name explains the part. The exceptions below
each say why they are long; each may shrink or go away, never grow, and its
cap is its length (so the list tightens as they shrink).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "parsebridge"
LIMIT = 60
MODULE_LIMIT = 500

#: (path under src/parsebridge, qualified name) -> (its length exactly, why it is long). The cap is
#: the length: a function that shrinks fails until its entry follows (or goes, under 60 lines).
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("adapters/builtin/engines/scan.py", "BuiltinToolStream.feed"): (88, "the per-chunk fast path, inline"),
}


def function_lengths(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function in one module."""
    found: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                found.append((name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1))
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), "")
    return found


def test_the_measure_counts_def_to_last_line(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "class A:\n    def f(self):\n        def g():\n            return 1\n\n        return g\n",
        encoding="utf-8",
    )
    assert function_lengths(module) == [("A.f", 2, 5), ("A.f.g", 3, 2)]


def test_no_function_over_the_limit() -> None:
    too_long = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for name, line, length in function_lengths(path):
            allowed = ALLOWED.get((rel, name), (LIMIT, ""))[0]
            if length > allowed:
                too_long.append(f"{rel}:{line} {name}: {length} lines (at most {allowed})")
    assert not too_long, "split these where a name explains the part:\n" + "\n".join(too_long)


def test_each_exception_is_exactly_as_long_as_its_cap() -> None:
    """Caps follow: a split or shortened function fails until its entry is lowered or removed."""
    stale = []
    for (rel, name), (cap, reason) in ALLOWED.items():
        lengths = (
            {n: length for n, _line, length in function_lengths(SRC / rel)} if (SRC / rel).exists() else {}
        )
        length = lengths.get(name)
        if length is None:
            stale.append(f"{rel} {name}: gone; remove its entry")
        elif length != cap or length <= LIMIT:
            stale.append(f"{rel} {name}: {length} lines, cap {cap}: set the cap to it (or drop the entry)")
        assert reason, f"{rel} {name}: say in one line why it is long"
    assert not stale, "\n".join(stale)


def test_no_module_over_the_limit() -> None:
    too_long = []
    for path in sorted(SRC.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LIMIT:
            too_long.append(f"{path.relative_to(SRC).as_posix()}: {lines} lines")
    assert not too_long, f"split these (at most {MODULE_LIMIT} lines a module):\n" + "\n".join(too_long)

"""The public API is one list: `parsebridge._API` (what a user calls) and `parsebridge.protocol._LAZY`
(what an implementer builds on), each mirrored by typed imports for type checkers and
described in docs/python-api.md's "What `parsebridge` exports" section.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import parsebridge
import parsebridge.protocol as protocol

SRC = Path(parsebridge.__file__).resolve().parent
#: The checkout's page, also when tox installs the package as a wheel.
README = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"


def _typed_imports(path: Path, package: str) -> dict[str, str]:
    """Name → absolute module of every import under the module's ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1 and imp.module
                for alias in imp.names:
                    # `import X as X`: the explicit re-export type checkers honour
                    assert alias.asname == alias.name, f"{path.name}: {alias.name} needs `as {alias.name}`"
                    assert alias.name not in found, f"{path.name}: {alias.name} imported twice"
                    found[alias.name] = f"{package}.{imp.module}"
    return found


def test_the_package_tables_and_typed_imports_agree() -> None:
    api, implementer = parsebridge._API, parsebridge._IMPLEMENTER
    assert not set(api) & set(implementer), "each name is listed once"
    typed = _typed_imports(SRC / "__init__.py", "parsebridge")
    assert typed == {**api, **implementer}


def test_all_is_the_api_table() -> None:
    assert parsebridge.__all__ == [*parsebridge._API, "__version__"]
    assert len(set(parsebridge.__all__)) == len(parsebridge.__all__)


def test_the_protocol_table_and_typed_imports_agree() -> None:
    typed = _typed_imports(SRC / "protocol" / "__init__.py", "parsebridge.protocol")
    assert typed == {name: f"parsebridge.protocol.{module}" for name, module in protocol._LAZY.items()}
    assert protocol.__all__ == list(protocol._LAZY)


def test_every_name_resolves_to_its_home() -> None:
    for name, module in {**parsebridge._API, **parsebridge._IMPLEMENTER}.items():
        assert getattr(parsebridge, name) is getattr(importlib.import_module(module), name), name
    for name, module in protocol._LAZY.items():
        assert getattr(protocol, name) is getattr(
            importlib.import_module(f"parsebridge.protocol.{module}"), name
        )


def test_implementer_names_live_in_the_protocol() -> None:
    """A name kept resolvable from `parsebridge` for old code has its home in `parsebridge.protocol`
    (`Backend`, a base class the adapters define, in `parsebridge.adapters`)."""
    for name, module in parsebridge._IMPLEMENTER.items():
        assert name in protocol.__all__ or module == "parsebridge.adapters", name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        parsebridge.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("parsebridge.no_such_name resolved")


def test_the_readme_lists_the_api() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## What `parsebridge` exports", 1)[1].split("\n#", 1)[0]
    user_part, implementer_part = section.split("What an implementer builds on", 1)
    listed = set(re.findall(r"`([A-Za-z_]\w*)`", user_part)) - {"parsebridge", "__all__"}
    assert listed == set(parsebridge._API)
    named = set(re.findall(r"`([A-Za-z_]\w*)`", implementer_part)) - {"parsebridge", "__all__"}
    assert named <= set(protocol.__all__), named - set(protocol.__all__)


def test_compare_is_the_function_whatever_was_imported_before() -> None:
    """The package is `parsebridge.comparison`: importing it leaves `pb.compare` the function."""
    code = (
        "import parsebridge.comparison.engine, parsebridge as pb; "
        "assert pb.compare is parsebridge.comparison.engine.compare, pb.compare"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_old_package_path_still_imports_with_a_warning() -> None:
    """``parsebridge.compare[.MODULE]`` (the package's old name) warns, gives the same objects,
    and leaves `pb.compare` callable as the function."""
    code = (
        "import warnings, parsebridge as pb\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    from parsebridge.compare import iter_compare\n"
        "    from parsebridge.compare.engine import Comparer\n"
        "import parsebridge.comparison as new, parsebridge.comparison.engine as engine\n"
        "assert iter_compare is new.iter_compare and Comparer is engine.Comparer\n"
        "assert any(issubclass(w.category, DeprecationWarning) and 'parsebridge.comparison' in str(w.message)"
        " for w in seen), [str(w.message) for w in seen]\n"
        'r = pb.compare(\'<tool_call>{"name": "f", "arguments": {}}</tool_call>\', [\'builtin:hermes\'])\n'
        "assert r.comparisons[0].results['builtin:hermes']['oneshot'].tool_calls[0].name == 'f'\n"
        "try:\n"
        "    import parsebridge.compare.nosuch\n"
        "except ModuleNotFoundError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('a name the new package lacks must not import')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dir_lists_the_public_api_not_the_modules_own_imports() -> None:
    """dir(parsebridge) (a REPL's tab completion) showed `Any`, `TYPE_CHECKING`, `logging`, `sys`."""
    import parsebridge

    listed = dir(parsebridge)
    assert set(parsebridge.__all__) <= set(listed)
    assert not {"Any", "TYPE_CHECKING", "logging", "sys", "annotations", "_API", "_moved"} & set(listed)
    assert {n for n in listed if n not in parsebridge.__all__} == {
        n for n in listed if n.startswith("__") and n.endswith("__")
    } - set(parsebridge.__all__)

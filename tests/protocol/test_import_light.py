"""Import weight and the one-way dependency rule (design §2)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import parsebridge

HEAVY = ("vllm", "sglang", "torch", "transformers", "tokenizers")
PKG = Path(parsebridge.__file__).parent


def test_import_parsebridge_imports_no_framework():
    code = "import sys, json, parsebridge; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def _imports(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports resolved)."""
    rel = path.relative_to(PKG.parent).with_suffix("")
    package = list(rel.parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "parsebridge" and len(parts) > 1 else None


def test_dependencies_point_one_way():
    """conformance → adapters → protocol; protocol depends on nothing of ours."""
    allowed = {
        "protocol": {"protocol"},
        "adapters": {"protocol", "adapters", None},
        "conformance": {"protocol", "adapters", "conformance", None},
    }
    for path in PKG.rglob("*.py"):
        layer = path.relative_to(PKG).parts[0]
        if layer not in allowed:
            continue
        for mod in _imports(path):
            if mod.split(".")[0] != "parsebridge":
                continue
            target = _layer(mod)
            if layer == "adapters" and target is None:
                # adapters may read the version from the top package only
                continue
            assert target in allowed[layer], f"{path.relative_to(PKG)} imports {mod}"


def test_only_framework_adapters_import_frameworks():
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        for mod in _imports(path):
            root = mod.split(".")[0]
            if root in ("vllm", "sglang"):
                assert rel.startswith(f"adapters/{root}/"), f"{rel} imports {mod}"
            if root == "torch":
                assert rel.startswith(("adapters/vllm/", "adapters/sglang/")), f"{rel} imports torch"


def test_protocol_imports_only_pydantic_and_stdlib():
    stdlib = set(sys.stdlib_module_names)
    for path in (PKG / "protocol").rglob("*.py"):
        for mod in _imports(path):
            root = mod.split(".")[0]
            assert root in stdlib or root in ("pydantic", "parsebridge", "__future__"), (path.name, mod)

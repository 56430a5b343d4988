"""Import weight and the one-way dependency rule (design §2)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import parsebridge

HEAVY = ("vllm", "sglang", "smg", "grpc", "smg_grpc_proto", "google", "torch", "transformers", "tokenizers")
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
    if parts[:3] == ["parsebridge", "cli", "terminal"]:
        return TERMINAL  # the command line's one leaf, which the rooms' renderers print through
    return parts[1] if parts[0] == "parsebridge" and len(parts) > 1 else None


TERMINAL = "cli.terminal"


#: Each room and the rooms it may import (its own included). `None` is the
#: package root; `_version` is a leaf every layer may read.
ALLOWED = {
    "_version": {"_version"},
    "_frameworks": {"_frameworks"},  # a leaf (standard library only): the parsers-only install recipe
    TERMINAL: {TERMINAL, "protocol"},
    "protocol": {"protocol"},
    "formats": {"formats", "protocol"},
    "lifecycle": {"lifecycle", "protocol"},  # one owner of each server or worker process we start
    "policy": {"policy", "protocol", "lifecycle", "_version"},
    "adapters": {"adapters", "protocol", "formats", "policy", "lifecycle", "_version", "_frameworks"},
    "conformance": {
        "conformance",
        "protocol",
        "formats",
        "adapters",
        "policy",
        "plugins",
        "_version",
        TERMINAL,
    },
    "compare": {"compare", "conformance", "protocol", "formats", "adapters", "policy", "_version", TERMINAL},
    "serving": {"serving", "protocol", "adapters", "policy", "_version"},
    # a live server checked from outside; its raw output re-read through `compare`
    "probe": {"probe", "compare", "conformance", "protocol", "formats", "adapters", "policy", "_version", TERMINAL},
    # the bridge into the frameworks' servers: parsers from the registry, served as theirs
    "plugins": {"plugins", "protocol", "formats", "adapters", "policy", "_version"},
    # the command: every room's face (the top; nothing of ours imports it but through `terminal`)
    "cli": {
        "cli",
        TERMINAL,
        "compare",
        "conformance",
        "serving",
        "probe",
        "plugins",
        "protocol",
        "formats",
        "adapters",
        "policy",
        "_version",
        "_frameworks",
    },
    # the package root: the public API, names resolved lazily
    "__init__": {"protocol", "adapters", "policy", "compare", "conformance", "serving", "_version"},
    "__main__": {"cli"},
}


def _room(path: Path) -> str:
    parts = path.relative_to(PKG).parts
    if parts[:2] == ("cli", "terminal.py"):
        return TERMINAL
    return parts[0].removesuffix(".py")


def test_every_room_has_a_rule():
    """A new room (a folder or module at the package root) must say what it may import."""
    rooms = {_room(p) for p in PKG.rglob("*.py")}
    assert rooms <= set(ALLOWED), f"rooms without a rule in ALLOWED: {sorted(rooms - set(ALLOWED))}"


def test_dependencies_point_one_way():
    """compare → conformance → adapters → policy/formats → protocol; protocol depends on nothing of ours."""
    for path in PKG.rglob("*.py"):
        layer = _room(path)
        for mod in _imports(path):
            if mod.split(".")[0] != "parsebridge":
                continue
            assert _layer(mod) in ALLOWED[layer], f"{path.relative_to(PKG)} imports {mod}"


def _module_graph() -> dict[str, set[str]]:
    """Module → our modules it imports (any import statement, local ones included)."""
    mods = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        mods[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        edges = set()
        for mod in _imports(path):
            # `from pkg import name` may name a submodule: count the deepest module that exists
            while mod and mod not in mods:
                mod = mod.rpartition(".")[0]
            if mod and mod != name and not name.startswith(mod + "."):
                edges.add(mod)
        graph[name] = edges
    return graph


def test_no_import_circles():
    """No module reaches itself through imports (a package importing its own children excepted)."""
    graph = _module_graph()
    circles = []
    for start in graph:
        stack, seen = [(start, (start,))], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join((*path, start)))
                elif nxt not in seen and not nxt.startswith(start + "."):
                    seen.add(nxt)
                    stack.append((nxt, (*path, nxt)))
    assert not circles, circles[:5]


def test_only_framework_adapters_import_frameworks():
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        for mod in _imports(path):
            root = mod.split(".")[0]
            if root in ("vllm", "sglang"):
                # the framework's adapter, and the plugin that registers parsebridge into it
                allowed = (f"adapters/{root}/", f"plugins/{root}.py")
                assert rel.startswith(allowed), f"{rel} imports {mod}"
            if root == "torch":
                assert rel.startswith(("adapters/vllm/", "adapters/sglang/")), f"{rel} imports torch"


def test_protocol_imports_only_pydantic_and_stdlib():
    stdlib = set(sys.stdlib_module_names)
    for path in (PKG / "protocol").rglob("*.py"):
        for mod in _imports(path):
            root = mod.split(".")[0]
            assert root in stdlib or root in ("pydantic", "parsebridge", "__future__"), (path.name, mod)

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


def test_a_builtin_parser_starts_no_server_machinery():
    """A builtin parser, one-shot and streamed, imports neither asyncio nor an HTTP client (with ssl,
    about a tenth of a second): those are for the servers `lifecycle` starts, which it never does."""
    code = (
        "import sys, parsebridge as pb; p = pb.get_tool_parser('builtin:hermes'); p.parse('x');"
        " s = p.stream(); s.feed('x'); s.finish();"
        " print(sorted(m for m in ('asyncio', 'http.client', 'ssl') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_compare_imports_neither_the_report_nor_jsonschema():
    """`compare` runs transcripts through the conformance runner but writes no conformance report and
    checks no arguments: the report's round-trip/adversarial machinery and jsonschema (together about
    a sixth of compare's start-up) load only where they are used, and the report's names still resolve."""
    code = (
        "import sys, parsebridge.comparison, parsebridge.conformance as c;"
        " gone = sorted(m for m in ('jsonschema', 'parsebridge.conformance.report',"
        " 'parsebridge.conformance.roundtrip') if m in sys.modules);"
        " print(gone, callable(c.build_report) and 'parsebridge.conformance.report' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True", out.stdout


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        out[".".join(rel.parts).removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _named_in_strings(tree: ast.AST) -> set[str]:
    """Our modules a file names in a string (``"parsebridge.cli.parse_command"``, ``"pkg.mod:Class"``):
    the imports `importlib.import_module` makes from a table, which no import statement shows."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.partition(":")[0]
            if name.startswith("parsebridge.") and name in MODULES:
                found.add(name)
    return found


def _imports(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports resolved; ``from pkg import mod``
    counted as ``pkg.mod``), and the modules it names for importlib."""
    rel = path.relative_to(PKG.parent).with_suffix("")
    package = list(rel.parts[:-1])
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = _named_in_strings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(
                    package[: len(package) - node.level + 1] + ([node.module] if node.module else [])
                )
            else:
                base = node.module or ""
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            found.update(subs or [base])
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "parsebridge" and len(parts) > 1 else None


#: Each room and the rooms it may import (its own included). `None` is the
#: package root; `_version` is a leaf every layer may read.
ALLOWED = {
    "_version": {"_version"},
    "_frameworks": {"_frameworks"},  # a leaf (standard library only): the parsers-only install recipe
    # the terminal's output and input files: a leaf the commands and the rooms' renderers share
    "terminal": {"terminal", "protocol"},
    "protocol": {"protocol"},
    "formats": {"formats", "protocol"},
    "lifecycle": {"lifecycle", "protocol"},  # one owner of each server or worker process we start
    "policy": {"policy", "protocol", "lifecycle", "_version"},
    "adapters": {"adapters", "protocol", "formats", "policy", "lifecycle", "_version", "_frameworks"},
    "conformance": {
        "conformance",
        "lifecycle",
        "protocol",
        "formats",
        "adapters",
        "policy",
        "plugins",
        "_version",
        "terminal",
    },
    "comparison": {
        "comparison",
        "conformance",
        "lifecycle",
        "protocol",
        "formats",
        "adapters",
        "policy",
        "_version",
        "terminal",
    },
    "serving": {"serving", "protocol", "adapters", "policy", "_version"},
    # a live server checked from outside; its raw output re-read through `comparison`
    "probe": {
        "probe",
        "comparison",
        "conformance",
        "protocol",
        "formats",
        "adapters",
        "policy",
        "_version",
        "terminal",
    },
    # the bridge into the frameworks' servers: parsers from the registry, served as theirs
    "plugins": {"plugins", "protocol", "formats", "adapters", "policy", "_version"},
    # the command: every room's face (the top: nothing of ours imports it)
    "cli": {
        "cli",
        "terminal",
        "comparison",
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
    "__init__": {
        "protocol",
        "adapters",
        "policy",
        "comparison",
        "conformance",
        "serving",
        "_version",
        "_moved",
    },
    # old import paths, still served with a warning (`parsebridge.compare` → `parsebridge.comparison`)
    "_moved": {"_moved", "comparison"},
    "__main__": {"cli"},
}


def _room(path: Path) -> str:
    return path.relative_to(PKG).parts[0].removesuffix(".py")


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
    """Module → our modules it imports (any import statement, local ones and importlib's included)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        edges = set()
        for mod in _imports(path):
            # `from pkg import name` may name a submodule: count the deepest module that exists
            while mod and mod not in MODULES:
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


def test_rooms_form_no_circle():
    """The rooms' own arrows (importlib's included) run one way: no room reaches itself through others."""
    arrows: dict[str, set[str]] = {}
    for path in PKG.rglob("*.py"):
        room = _room(path)
        for mod in _imports(path):
            target = _layer(mod)
            if target is not None and target != room:
                arrows.setdefault(room, set()).add(target)
    circles = []
    for start in arrows:
        stack, seen = [(start, (start,))], set()
        while stack:
            node, trail = stack.pop()
            for nxt in arrows.get(node, ()):
                if nxt == start:
                    circles.append(" -> ".join((*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*trail, nxt)))
    assert not circles, circles[:5]


#: Function-local imports of our own modules allowed in the package (each with its reason).
LOCAL_IMPORT_CAP = 30


def _local_imports() -> list[tuple[str, int, str, bool]]:
    """(file, line, source line, a comment line right above it) of every import of a parsebridge
    module inside a function."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                ours = (
                    isinstance(node, ast.ImportFrom)
                    and (node.level or (node.module or "").startswith("parsebridge"))
                ) or (
                    isinstance(node, ast.Import) and any(a.name.startswith("parsebridge") for a in node.names)
                )
                if ours:
                    above = node.lineno > 1 and lines[node.lineno - 2].strip().startswith("#")
                    found.append(
                        (path.relative_to(PKG).as_posix(), node.lineno, lines[node.lineno - 1], above)
                    )
    return sorted(set(found))


def test_function_local_imports_are_few_and_say_why():
    """Imports go at a module's top; one inside a function says why beside it (a framework, a heavy
    optional dependency, an import circle it breaks), and there are at most `LOCAL_IMPORT_CAP`."""
    found = _local_imports()
    silent = [f"{f}:{n}: {line.strip()}" for f, n, line, above in found if "#" not in line and not above]
    assert not silent, "function-local imports without a reason beside them:\n" + "\n".join(silent)
    assert len(found) <= LOCAL_IMPORT_CAP, (
        f"{len(found)} function-local imports of our modules (cap {LOCAL_IMPORT_CAP})"
    )


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

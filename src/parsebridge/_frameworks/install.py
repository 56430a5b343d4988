"""Install a framework parsers-only into the running interpreter's environment.

    parsebridge install-framework vllm-0.33.0
    parsebridge install-framework sglang-latest     # newest supported release
    parsebridge install-framework vllm-oldest
    parsebridge install-framework dynamo-latest     # Dynamo's frontend (ai-dynamo-runtime), no torch
    parsebridge install-framework smg-latest        # the SGLang model gateway (no torch)
    parsebridge install-framework llamacpp-latest   # llama.cpp's chat parsers: a native harness built
                                                    # from a llama-cpp-python sdist (llamacpp_build.py)
    parsebridge install-framework all               # the newest vLLM, SGLang, Dynamo and smg side by side
    parsebridge install-framework --list

(`python tools/install_framework.py …` in a clone does the same.) The recipe
is code, not folklore: `requirements/FRAMEWORK-VERSION.txt`, shipped inside
the package (`parsebridge/_frameworks/requirements/`), lists the framework's
import-time dependencies (CPU torch pinned), installed under
`requirements/constraints.txt`; then the framework itself goes in with
`--no-deps`, so its GPU dependency tree (CUDA torch, nvidia wheels) never
arrives. Adding a release = adding one requirements file (and a tox line).

Standard library only: this module is also loaded by file path, before
parsebridge's dependencies are installed.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # argparse and subprocess are imported where used: the adapters import the hint
    import argparse

REQ_DIR = Path(__file__).resolve().parent / "requirements"
FRAMEWORKS = ("vllm", "sglang", "dynamo", "smg", "llamacpp")
#: What `all` installs side by side (the consensus env: vLLM and SGLang make the consensus, Dynamo
#: and smg are its third and fourth voices; all four in one interpreter). llama.cpp, the fifth
#: voice, is a native build rather than a pip install: its envs ask for it by name.
ALL = ("vllm", "sglang", "dynamo", "smg")
#: The package index name of a framework, where it is not the framework's own name.
DISTRIBUTIONS = {"dynamo": "ai-dynamo-runtime", "llamacpp": "llama-cpp-python"}
#: Frameworks built from a source distribution rather than pip-installed (module beside this one).
BUILT = {"llamacpp": "llamacpp_build.py"}
_FILE_RE = re.compile(r"^(?P<fw>[a-z]+)-(?P<version>\d[\w.]*)\.txt$")


class UnsupportedRelease(ValueError):
    """The env names no supported framework release (a usage error: exit 2)."""


_ENV_HELP = "vllm-X.Y.Z | sglang-X.Y.Z | dynamo-X.Y.Z | smg-X.Y.Z | llamacpp-X.Y.Z | FRAMEWORK-latest | FRAMEWORK-oldest | all"


def _version_key(version: str) -> tuple[object, ...]:
    parts: list[object] = []
    for piece in re.split(r"[.]", version):
        m = re.match(r"(\d+)(.*)", piece)
        parts.append((int(m.group(1)), m.group(2)) if m else (-1, piece))
    return tuple(parts)


def available() -> dict[str, list[str]]:
    """Framework → supported versions (from the requirements files), oldest first."""
    found: dict[str, list[str]] = {fw: [] for fw in FRAMEWORKS}
    for path in REQ_DIR.glob("*.txt"):
        m = _FILE_RE.match(path.name)
        if m and m["fw"] in found:
            found[m["fw"]].append(m["version"])
    return {fw: sorted(vs, key=_version_key) for fw, vs in found.items()}


def newest(fw: str) -> str | None:
    """The newest supported release of `fw` (None when no requirements file names it)."""
    versions = available().get(fw) or []
    return versions[-1] if versions else None


def pins_torch(fw: str, version: str) -> bool:
    """Whether the release's requirements file installs (CPU) torch: vLLM's and SGLang's parser
    modules import it; Dynamo's and smg's parsers are Rust and need none."""
    lines = (REQ_DIR / f"{fw}-{version}.txt").read_text(encoding="utf-8").splitlines()
    return any(re.match(r"torch\b", line.strip()) for line in lines)


def install_hint(fw: str) -> str:
    """The install command for `fw`, naming the real newest release and its requirements file."""
    version = newest(fw)
    if version is None:
        return f"no supported {fw} release: {REQ_DIR} has no {fw}-VERSION.txt"
    if fw in BUILT:
        return (
            f"parsebridge install-framework {fw}-latest   (builds a native harness from "
            f"{DISTRIBUTIONS[fw]}=={version}'s sdist: cmake and a C++17 compiler, no GPU)"
        )
    return (
        f"parsebridge install-framework {fw}-latest   (parsers-only{', CPU torch' if pins_torch(fw, version) else ''}: "
        f"pip install -c {REQ_DIR / 'constraints.txt'} -r {REQ_DIR / f'{fw}-{version}.txt'} "
        f"&& pip install --no-deps {DISTRIBUTIONS.get(fw, fw)}=={version})"
    )


def resolve(env: str) -> list[tuple[str, str]]:
    """`vllm-latest` → [("vllm", "0.33.0")]; `all` → newest of each framework in `ALL`."""
    versions = available()
    if env == "all":
        return [(fw, versions[fw][-1]) for fw in ALL if versions[fw]]
    fw, _, version = env.partition("-")
    if fw in versions and not version:  # a bare framework name: which release is the question
        raise UnsupportedRelease(
            f"{env!r} names no release: give {fw}-latest, {fw}-oldest or one of {fw}-"
            f"{{{', '.join(versions[fw])}}}"
        )
    if fw not in versions or not version:
        known = [f"{f}-{v}" for f, vs in versions.items() for v in vs]
        known += [f"{f}-{which}" for f in FRAMEWORKS for which in ("latest", "oldest")]
        raise UnsupportedRelease(
            f"unknown framework env {env!r}.{_did_you_mean(env, [*known, 'all'])} "
            f"Expected one of: {', '.join(known)}, all"
        )
    if not versions[fw]:
        raise UnsupportedRelease(f"no requirements files for {fw} in {REQ_DIR}")
    if version == "latest":
        return [(fw, versions[fw][-1])]
    if version == "oldest":
        return [(fw, versions[fw][0])]
    if version not in versions[fw]:
        near = _did_you_mean(version, [*versions[fw], "latest", "oldest"], f"{fw}-")
        raise UnsupportedRelease(
            f"{fw} {version} is not supported here.{near} Supported: {', '.join(versions[fw])}"
        )
    return [(fw, version)]


def _did_you_mean(given: str, candidates: list[str], prefix: str = "") -> str:
    """`` Did you mean 'vllm-latest'?`` for the candidate nearest `given` (case aside), or ""."""
    import difflib  # only an error message needs it

    near = difflib.get_close_matches(given.lower(), candidates, n=1, cutoff=0.8)
    return f" Did you mean {prefix + near[0]!r}?" if near else ""


def _pip(*args: str) -> None:
    import subprocess

    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _built_module(fw: str) -> Any:
    """The build recipe of a framework in `BUILT`, loaded by file path (this module may be too)."""
    import importlib.util

    path = Path(__file__).resolve().parent / BUILT[fw]
    spec = importlib.util.spec_from_file_location(f"parsebridge_build_{fw}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install(pairs: list[tuple[str, str]]) -> None:
    """Every requirements file first, then every framework with `--no-deps`.

    The order matters for side-by-side installs (`all`): a framework
    installed `--no-deps` declares GPU requirements (CUDA torch, …) that are
    deliberately absent, and every later resolving `pip install` would print
    them as resolver ERROR lines. `--no-deps` installs check nothing, so
    putting them last keeps the whole install quiet; `pip check` still lists
    those declared requirements, which the parsers never import.
    """
    built = [(fw, version) for fw, version in pairs if fw in BUILT]
    pairs = [(fw, version) for fw, version in pairs if fw not in BUILT]
    for fw, version in built:
        _built_module(fw).build(version)
    if not pairs:
        return
    constraints = REQ_DIR / "constraints.txt"
    start = time.monotonic()
    for fw, version in pairs:
        _pip("-c", str(constraints), "-r", str(REQ_DIR / f"{fw}-{version}.txt"))
    for fw, version in pairs:
        _pip("--no-deps", f"{DISTRIBUTIONS.get(fw, fw)}=={version}")
    names = ", ".join(f"{DISTRIBUTIONS.get(fw, fw)}=={version}" for fw, version in pairs)
    print(f"installed {names} parsers-only in {time.monotonic() - start:.0f}s", flush=True)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of `parsebridge install-framework` and `tools/install_framework.py`."""
    ap.add_argument("env", nargs="?", help=_ENV_HELP)
    ap.add_argument(
        "--list",
        action="store_true",
        help="print supported versions and exit (of ENV's framework only, if given)",
    )
    ap.add_argument(
        "--resolve", action="store_true", help="print DISTRIBUTION==VERSION (what pip installs) and exit"
    )


def run(ns: argparse.Namespace) -> int:
    """Carry out parsed options: list, resolve, or install."""
    if ns.resolve and not ns.env:
        print(
            "error: --resolve prints what an env installs: name one (e.g. vllm-latest or all)",
            file=sys.stderr,
        )
        return 2
    if ns.list or not ns.env:
        return _list(ns.env)
    try:
        pairs = resolve(ns.env)
    except UnsupportedRelease as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ns.resolve:
        print(" ".join(f"{DISTRIBUTIONS.get(fw, fw)}=={v}" for fw, v in pairs))
        return 0
    install(pairs)
    return 0


def _list(env: str | None) -> int:
    """Print the supported releases: every framework's, or, given an env (``vllm``, ``vllm-latest``),
    its framework's only (it was ignored, and every framework listed)."""
    versions = available()
    wanted = list(versions) if env in (None, "all") else [env.partition("-")[0].lower()]
    if wanted[0] not in versions:
        near = _did_you_mean(wanted[0], list(versions))
        print(
            f"error: --list takes a framework, not {env!r}.{near} Known: {', '.join(versions)}",
            file=sys.stderr,
        )
        return 2
    for fw in wanted:
        print(f"{fw}: {' '.join(versions[fw]) or '(none)'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

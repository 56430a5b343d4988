#!/usr/bin/env python3
"""Install a framework parsers-only into the running interpreter's environment.

    python tools/install_framework.py vllm-0.33.0
    python tools/install_framework.py sglang-latest     # newest requirements file
    python tools/install_framework.py vllm-oldest
    python tools/install_framework.py all               # newest vLLM and SGLang side by side
    python tools/install_framework.py --list

The recipe is code, not folklore: `requirements/FRAMEWORK-VERSION.txt` lists the
framework's import-time dependencies (CPU torch pinned), installed under
`requirements/constraints.txt`; then the framework itself goes in with
`--no-deps`, so its GPU dependency tree (CUDA torch, nvidia wheels) never
arrives. Adding a release = adding one requirements file (and a tox line).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQ_DIR = ROOT / "requirements"
FRAMEWORKS = ("vllm", "sglang")
_FILE_RE = re.compile(r"^(?P<fw>[a-z]+)-(?P<version>\d[\w.]*)\.txt$")


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


def resolve(env: str) -> list[tuple[str, str]]:
    """`vllm-latest` → [("vllm", "0.33.0")]; `all` → newest of each framework."""
    versions = available()
    if env == "all":
        return [(fw, versions[fw][-1]) for fw in FRAMEWORKS if versions[fw]]
    fw, _, version = env.partition("-")
    if fw not in versions or not version:
        raise SystemExit(f"unknown framework env {env!r}; expected e.g. vllm-0.33.0, sglang-latest, all")
    if not versions[fw]:
        raise SystemExit(f"no requirements/{fw}-*.txt files")
    if version == "latest":
        return [(fw, versions[fw][-1])]
    if version == "oldest":
        return [(fw, versions[fw][0])]
    if version not in versions[fw]:
        raise SystemExit(f"{fw} {version} is not supported here; supported: {', '.join(versions[fw])}")
    return [(fw, version)]


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def install(pairs: list[tuple[str, str]]) -> None:
    """Every requirements file first, then every framework with `--no-deps`.

    The order matters for side-by-side installs (`all`): a framework
    installed `--no-deps` declares GPU requirements (CUDA torch, …) that are
    deliberately absent, and every later resolving `pip install` would print
    them as resolver ERROR lines. `--no-deps` installs check nothing, so
    putting them last keeps the whole install quiet; `pip check` still lists
    those declared requirements, which the parsers never import.
    """
    env = dict(os.environ)
    constraints = REQ_DIR / "constraints.txt"
    start = time.monotonic()
    for fw, version in pairs:
        _pip("-c", str(constraints), "-r", str(REQ_DIR / f"{fw}-{version}.txt"))
    for fw, version in pairs:
        _pip("--no-deps", f"{fw}=={version}")
    names = ", ".join(f"{fw}=={version}" for fw, version in pairs)
    print(f"installed {names} parsers-only in {time.monotonic() - start:.0f}s", flush=True)
    os.environ.update(env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "env", nargs="?", help="vllm-X.Y.Z | sglang-X.Y.Z | FRAMEWORK-latest | FRAMEWORK-oldest | all"
    )
    ap.add_argument("--list", action="store_true", help="print supported versions and exit")
    ap.add_argument("--resolve", action="store_true", help="print FRAMEWORK==VERSION and exit")
    ns = ap.parse_args()
    if ns.list or not ns.env:
        for fw, vs in available().items():
            print(f"{fw}: {' '.join(vs) or '(none)'}")
        return 0
    pairs = resolve(ns.env)
    if ns.resolve:
        print(" ".join(f"{fw}=={v}" for fw, v in pairs))
        return 0
    install(pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

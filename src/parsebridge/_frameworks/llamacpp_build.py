"""Build llama.cpp's parse harness from the llama.cpp a ``llama-cpp-python`` sdist vendors.

    parsebridge install-framework llamacpp-latest    # = llama-cpp-python 0.3.36's llama.cpp
    parsebridge install-framework llamacpp-oldest

The recipe: ``pip download --no-deps --no-binary llama-cpp-python llama-cpp-python==VERSION`` (the sdist, kept
under the install folder for the next build), the chat sources extracted from its
``vendor/llama.cpp`` (common/, the jinja engine, the PEG parser and autoparser, the JSON helpers,
the headers, ``models/templates``), then ``cmake`` on ``llamacpp/CMakeLists.txt``
builds ``pb-llamacpp-harness`` (``llamacpp/harness.cpp``, written against ``common/chat.h`` only)
and ``pb-llamacpp-reference`` (``llamacpp/reference.cpp``: llama.cpp's parse of a case, with no
parsebridge code in the loop, for the reference test).
No ggml backend, no model loader, no GPU. The harness and the templates are installed under
``sys.prefix/share/parsebridge/llamacpp/VERSION/`` with a ``manifest.json`` saying what the build
took (seconds, bytes). The supported releases are the ``requirements/llamacpp-VERSION.txt`` files.

Standard library only (loaded by file path before parsebridge's dependencies are installed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SDIST = "llama-cpp-python"
#: harness.cpp, no_model.cpp, CMakeLists.txt.
SOURCE_DIR = Path(__file__).resolve().parent / "llamacpp"
BINARY = "pb-llamacpp-harness"
#: What the build needs from ``vendor/llama.cpp`` (prefixes inside the sdist's llama.cpp folder).
_MEMBERS = (
    "common/",
    "include/",
    "ggml/include/",
    "vendor/nlohmann/",
    "models/templates/",
    "tests/test-chat.cpp",
    "LICENSE",
)
#: The reference reader (``llamacpp/reference.cpp``): llama.cpp's parse with no parsebridge code.
REFERENCE = "pb-llamacpp-reference"


def install_root() -> Path:
    """Where harnesses are installed: ``$PARSEBRIDGE_LLAMACPP_HOME``, else inside this environment."""
    home = os.environ.get("PARSEBRIDGE_LLAMACPP_HOME")
    return Path(home) if home else Path(sys.prefix) / "share" / "parsebridge" / "llamacpp"


def installed() -> dict[str, Path]:
    """Version → install folder, for every harness built here (a folder with a manifest)."""
    root = install_root()
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "manifest.json").is_file()}


def _sdist(version: str, cache: Path) -> tuple[Path, float]:
    """The sdist tarball (downloaded once into `cache`) and the seconds the download took."""
    name = f"llama_cpp_python-{version}.tar.gz"
    if (cache / name).is_file():
        return cache / name, 0.0
    cache.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-deps",
        # The sdist of this package only: its build tools (scikit-build-core...), which pip
        # installs to read the sdist's metadata, come as wheels (`:all:` built them from source
        # too, recursively: over 10 minutes before the download was done).
        "--no-binary",
        SDIST,
        f"{SDIST}=={version}",
        "-d",
        str(cache),
    ]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return cache / name, time.monotonic() - began


def _extract(tarball: Path, into: Path) -> Path:
    """The chat sources of the sdist's vendored llama.cpp, extracted into `into`; returns that folder."""
    with tarfile.open(tarball) as tar:
        members = []
        for m in tar.getmembers():
            _, _, rel = m.name.partition("/vendor/llama.cpp/")
            if rel and rel.startswith(_MEMBERS) and (m.isfile() or m.isdir()):
                m.name = rel
                members.append(m)
        tar.extractall(into, members=members, filter="data")
    return into


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(version: str, jobs: int | None = None) -> Path:
    """Download, build and install the harness for llama-cpp-python `version`; returns its folder."""
    root = install_root()
    tarball, download_s = _sdist(version, root / "sdist")
    dest = root / version
    with tempfile.TemporaryDirectory(prefix="pb-llamacpp-") as tmp:
        src = _extract(tarball, Path(tmp) / "llama.cpp")
        build_dir = Path(tmp) / "build"
        began = time.monotonic()
        subprocess.run(
            ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir), f"-DLLAMA_CPP_DIR={src}"], check=True
        )
        subprocess.run(
            ["cmake", "--build", str(build_dir), "-j", str(jobs or os.cpu_count() or 2)], check=True
        )
        build_s = time.monotonic() - began
        build_bytes = _tree_bytes(build_dir)
        shutil.rmtree(dest, ignore_errors=True)
        (dest / "bin").mkdir(parents=True)
        for program in (BINARY, REFERENCE):
            shutil.copy2(build_dir / program, dest / "bin" / program)
        shutil.copytree(src / "models" / "templates", dest / "templates")
        # llama.cpp's own chat tests: the inputs the reference test replays.
        (dest / "tests").mkdir()
        shutil.copy2(src / "tests" / "test-chat.cpp", dest / "tests" / "test-chat.cpp")
    manifest = {
        "version": version,
        "sdist": tarball.name,
        "download_seconds": round(download_s, 1),
        "build_seconds": round(build_s, 1),
        "build_tree_bytes": build_bytes,
        "installed_bytes": _tree_bytes(dest),
        "sdist_bytes": tarball.stat().st_size,
        "templates": len(list((dest / "templates").glob("*.jinja"))),
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(
        f"built {BINARY} from {SDIST} {version}'s llama.cpp in {build_s:.0f}s "
        f"(download {download_s:.0f}s) -> {dest}",
        flush=True,
    )
    return dest

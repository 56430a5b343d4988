"""`parsebridge install-framework`: works from any directory, ships its requirement files, names real releases."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import parsebridge
from parsebridge._frameworks import install, llamacpp_build

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(parsebridge.__file__).resolve().parent
PLACEHOLDER = re.compile(r"\b(vllm|sglang)(==|-)X\b")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC.parent))
    return subprocess.run(
        [sys.executable, "-m", "parsebridge", "install-framework", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_requirement_files_live_in_the_package() -> None:
    files = sorted(p.name for p in install.REQ_DIR.glob("*.txt"))
    assert "constraints.txt" in files and install.REQ_DIR.is_relative_to(SRC)
    assert install.available()["vllm"] and install.available()["sglang"]
    assert not (ROOT / "requirements").exists(), "the requirement files moved into the package"
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["parsebridge"]
    for name in files:
        rel = (install.REQ_DIR / name).relative_to(SRC).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel} would not be in the wheel"


def test_the_llamacpp_build_sources_are_in_the_wheel() -> None:
    """`install-framework llamacpp-*` runs cmake on the package's own harness sources: a
    `pip install .` without them failed at cmake ("source directory does not exist")."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["parsebridge"]
    sources = sorted(p for p in llamacpp_build.SOURCE_DIR.iterdir() if p.is_file())
    assert {p.name for p in sources} >= {"CMakeLists.txt", "harness.cpp", "reference.cpp", "no_model.cpp"}
    for path in sources:
        rel = path.relative_to(SRC).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel} would not be in the wheel"


def test_list_and_resolve_work_outside_the_clone(tmp_path: Path) -> None:
    lst = _run("--list", cwd=tmp_path)
    assert lst.returncode == 0, lst.stderr
    newest = install.available()["vllm"][-1]
    assert "vllm: " in lst.stdout and newest in lst.stdout
    res = _run("--resolve", "vllm-latest", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == f"vllm=={newest}"


@pytest.mark.parametrize("env", ["vllm-9.9.9", "torch-latest", "vllm"])
def test_unknown_release_is_a_usage_error_naming_real_releases(tmp_path: Path, env: str) -> None:
    p = _run(env, cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert install.available()["vllm"][-1] in p.stderr
    assert "X.Y" not in p.stderr and not PLACEHOLDER.search(p.stderr)


_SMG = install.available()["smg"][-1]


@pytest.mark.parametrize(
    ("env", "meant"),
    [
        ("vlm-latest", "vllm-latest"),
        ("VLLM-latest", "vllm-latest"),
        ("alll", "all"),
        ("vllm-lates", "vllm-latest"),
        (f"smg-{_SMG.rpartition('.')[0]}", f"smg-{_SMG}"),  # 1.13 for 1.13.0
    ],
)
def test_a_misspelt_env_is_answered_with_the_nearest(env: str, meant: str) -> None:
    """Every other name parsebridge takes suggests the nearest; install-framework listed all 27 envs
    and left the reader to find theirs. Nothing is installed: the env is refused, not corrected."""
    with pytest.raises(install.UnsupportedRelease, match=f"Did you mean '{meant}'"):
        install.resolve(env)


def test_a_bare_framework_name_is_shown_its_releases() -> None:
    with pytest.raises(
        install.UnsupportedRelease, match=r"'smg' names no release: give smg-latest, smg-oldest"
    ):
        install.resolve("smg")


def test_resolve_without_an_env_is_a_usage_error(tmp_path: Path) -> None:
    """It printed the --list output and exited 0, the flag ignored."""
    p = _run("--resolve", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert (
        p.stderr.strip() == "error: --resolve prints what an env installs: name one (e.g. vllm-latest or all)"
    )


def test_the_wrapper_in_tools_is_the_same_installer(tmp_path: Path) -> None:
    """tox.ini and .ci/run call tools/install_framework.py with a bare interpreter (no parsebridge)."""
    p = subprocess.run(
        [sys.executable, "-I", str(ROOT / "tools" / "install_framework.py"), "--resolve", "sglang-oldest"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"sglang=={install.available()['sglang'][0]}"


@pytest.mark.parametrize("fw", ["vllm", "sglang"])
def test_install_hints_name_the_real_newest_release(fw: str) -> None:
    from parsebridge.adapters import get_backend

    hint = get_backend(fw).install_command
    newest = install.available()[fw][-1]
    assert f"parsebridge install-framework {fw}-latest" in hint
    assert f"{fw}=={newest}" in hint and f"{fw}-{newest}.txt" in hint
    assert not PLACEHOLDER.search(hint)
    for path in re.findall(r"-[rc] (\S+)", hint):
        assert Path(path).is_file(), path


def test_docs_install_from_the_clone_not_a_registry() -> None:
    """The package is not on a registry: `pip install 'parsebridge[...]'` only works in an installed clone."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        assert not re.search(r"pip install '?parsebridge", text), doc.name
        assert "tools/install_framework.py vllm-latest" not in text or doc.name == "matrix.md", doc.name


def test_list_with_an_env_lists_its_framework_and_refuses_a_typo(capsys) -> None:
    """`--list vllm-latest` listed every framework, the env ignored; a typo there was ignored too."""
    assert install.main(["--list", "vllm-latest"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"vllm: {' '.join(install.available()['vllm'])}"]
    assert install.main(["--list", "all"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(install.available())
    assert install.main(["--list", "vlm"]) == 2
    assert "Did you mean 'vllm'?" in capsys.readouterr().err

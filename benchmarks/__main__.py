"""`python -m benchmarks [--quick] [--only SECTION] [--python FW=EXE] [--out FILE]`: every figure, one command.

Sections (each a module with `run(quick: bool) -> list[Row]`):
import_cost, overhead, scaling, throughput, suite_cost, adversarial,
compare_ray (compare --jobs 1 / --jobs 2 / --executor ray). A section whose
backends are not installed reports what it could measure and says so.

vLLM and SGLang usually live in separate virtualenvs (they pin different
transformers). `--python vllm=/venv-vllm/bin/python` (or the environment
variable PARSEBRIDGE_BENCH_PYTHONS="vllm=...,sglang=...") runs that
framework's figures in that interpreter, as a child `python -m benchmarks
--backends vllm`, and merges its rows; every ratio is still measured inside
one process, side by side.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._backends import BACKENDS, SETTINGS
from ._timing import Row

SECTIONS = ("import_cost", "overhead", "scaling", "throughput", "suite_cost", "adversarial", "compare_ray")
#: The `Row.section` names, in table order (module import_cost → "import", suite_cost → "suite").
ROW_SECTIONS = ("import", "overhead", "scaling", "throughput", "suite", "compare")
#: Sections a framework interpreter runs for its framework (suite_cost runs subprocesses itself).
DELEGATED = ("import_cost", "overhead", "scaling", "throughput")


def _versions(python: str | None = None) -> dict[str, str | None]:
    """Versions in this interpreter, or (with `python`) in another one."""
    code = (
        "import importlib.metadata as md, json, platform\n"
        "out = {'python': platform.python_version()}\n"
        "for d in ('parsebridge', 'vllm', 'sglang', 'torch', 'transformers', 'pydantic'):\n"
        "    try: out[d] = md.version(d)\n"
        "    except md.PackageNotFoundError: out[d] = None\n"
        "print(json.dumps(out))\n"
    )
    if python is None:
        scope: dict[str, Any] = {}
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(code, scope)
        return json.loads(buf.getvalue())  # type: ignore[no-any-return]
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=True)
        return json.loads(done.stdout)  # type: ignore[no-any-return]
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def _pythons(values: list[str]) -> dict[str, str]:
    spec = ",".join([os.environ.get("PARSEBRIDGE_BENCH_PYTHONS", ""), *values])
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, exe = item.partition("=")
        if not sep or name not in BACKENDS:
            raise SystemExit(
                f"--python wants FRAMEWORK=EXECUTABLE with FRAMEWORK in {BACKENDS}, not {item!r}"
            )
        out[name] = exe
    return out


def _run_child(framework: str, python: str, sections: list[str], quick: bool) -> list[Row]:
    """Run the delegated sections for `framework` in its own interpreter; its rows, or one saying why not."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [
            python,
            "-m",
            "benchmarks",
            "--backends",
            framework,
            "--label",
            framework,
            "--no-table",
            "--out",
            str(out),
        ]
        cmd += [a for s in sections for a in ("--only", s)]
        if quick:
            cmd.append("--quick")
        print(f"[{framework}] running in {python}", file=sys.stderr)
        env = dict(os.environ, PARSEBRIDGE_BENCH_PYTHONS="")
        done = subprocess.run(cmd, cwd=Path(__file__).resolve().parent.parent, env=env)
        if done.returncode != 0 or not out.exists():
            return [
                Row(
                    "child",
                    f"{framework} interpreter",
                    math.nan,
                    "",
                    raw=f"{python} exited {done.returncode}",
                )
            ]
        data = json.loads(out.read_text())
    rows = []
    for r in data["rows"]:
        r["detail"] = {**r.get("detail", {}), "interpreter": framework, "versions": data["versions"]}
        if r["value"] is None:
            r["value"] = math.nan
        rows.append(Row(**r))
    return rows


def _print_table(rows: list[Row], title: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for col in ("section", "figure", "value", "target", "met", "raw (min/median)"):
        table.add_column(col, justify="right" if col == "value" else "left", overflow="fold")
    for r in rows:
        met = "" if r.met is None else ("[green]yes[/]" if r.met else "[red]no[/]")
        value = (
            "—"
            if math.isnan(r.value)
            else f"{r.value:,.3g} {r.unit}"
            if abs(r.value) < 1000
            else f"{r.value:,.0f} {r.unit}"
        )
        table.add_row(r.section, escape(r.name), value, escape(r.target), met, escape(r.raw))
    Console(width=max(160, Console().width)).print(table)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats, no thresholds (CI)")
    ap.add_argument("--only", action="append", choices=SECTIONS, help="run only these sections")
    ap.add_argument("--out", default="benchmarks/results.json", help="where to write the JSON results")
    ap.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="FW=EXE",
        help="measure framework FW (vllm, sglang) in interpreter EXE",
    )
    ap.add_argument(
        "--backends", help="comma list of backends this process measures (default: all not delegated)"
    )
    ap.add_argument("--label", default="main", help=argparse.SUPPRESS)
    ap.add_argument("--no-table", action="store_true", help="write JSON only")
    ap.add_argument(
        "--markdown", metavar="FILE", help="also write the table as Markdown (for docs/benchmarks.md)"
    )
    ap.add_argument("--suite-timeout", type=float, metavar="S", help="limit per conformance suite run")
    ns = ap.parse_args(argv)

    pythons = _pythons(ns.python)
    if ns.backends:
        SETTINGS.backends = tuple(b.strip() for b in ns.backends.split(",") if b.strip())
    else:
        SETTINGS.backends = tuple(b for b in BACKENDS if b not in pythons)
    SETTINGS.pythons = pythons
    SETTINGS.interpreter = ns.label
    SETTINGS.suite_timeout = ns.suite_timeout

    rows: list[Row] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    sections = list(ns.only or SECTIONS)
    for name in sections:
        try:
            module = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"benchmarks.{name}":
                raise
            rows.append(Row(name, "section", math.nan, "", raw="module not written yet"))
            continue
        t0 = time.perf_counter()
        try:
            section_rows = module.run(ns.quick)
        except Exception as exc:  # one broken section must not hide the others' figures
            section_rows = [Row(name, "section", math.nan, "", raw=f"raised {type(exc).__name__}: {exc}")]
        for r in section_rows:
            r.detail.setdefault("interpreter", ns.label)
        print(
            f"[{ns.label}:{name}] {len(section_rows)} figures in {time.perf_counter() - t0:.1f}s",
            file=sys.stderr,
        )
        rows.extend(section_rows)

    delegated = [s for s in sections if s in DELEGATED]
    versions: dict[str, Any] = {ns.label: _versions()}
    if delegated:
        for framework, python in pythons.items():
            rows.extend(_run_child(framework, python, delegated, ns.quick))
            versions[framework] = _versions(python)
    if not ns.no_table:  # figures over all interpreters (e.g. builtin vs the fastest framework)
        for name in sections:
            summarize = getattr(sys.modules.get(f"benchmarks.{name}"), "summarize", None)
            if callable(summarize):
                rows.extend(summarize(rows, ns.quick))
    order = {s: i for i, s in enumerate(ROW_SECTIONS)}
    rows.sort(key=lambda r: order.get(r.section, len(order)))  # stable: keeps each section's own order

    if not ns.no_table:
        _print_table(rows, f"parsebridge benchmarks ({'quick' if ns.quick else 'full'}, {started})")
    out = Path(ns.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "date": started,
                "quick": ns.quick,
                "command": " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])]),
                "versions": versions[ns.label] if ns.no_table else versions,
                "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "system": platform.system()},
                "rows": [r.as_dict() for r in rows],
            },
            indent=2,
            default=str,
        )
    )
    print(f"wrote {out}", file=sys.stderr)
    if ns.markdown:
        from ._markdown import to_markdown

        Path(ns.markdown).write_text(to_markdown(json.loads(out.read_text())))
        print(f"wrote {ns.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

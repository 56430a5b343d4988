"""`python -m benchmarks [--quick] [--only SECTION] [--out FILE]`: every figure, one command.

Sections (each a module with `run(quick: bool) -> list[Row]`):
import_cost, overhead, scaling, throughput, suite_cost. A section whose
backends are not installed reports what it could measure and says so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from pathlib import Path

from ._timing import Row

SECTIONS = ("import_cost", "overhead", "scaling", "throughput", "suite_cost")


def _versions() -> dict[str, str | None]:
    import importlib.metadata as md

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("parsebridge", "vllm", "sglang", "torch"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats, no thresholds (CI)")
    ap.add_argument("--only", action="append", choices=SECTIONS, help="run only these sections")
    ap.add_argument("--out", default="benchmarks/results.json", help="where to write the JSON results")
    ns = ap.parse_args(argv)

    rows: list[Row] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    for name in ns.only or SECTIONS:
        try:
            module = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"benchmarks.{name}":
                raise
            continue
        t0 = time.perf_counter()
        section_rows = module.run(ns.quick)
        print(f"[{name}] {len(section_rows)} figures in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        rows.extend(section_rows)

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"parsebridge benchmarks ({'quick' if ns.quick else 'full'}, {started})")
    for col in ("section", "figure", "value", "target", "met"):
        table.add_column(col, justify="right" if col == "value" else "left")
    for r in rows:
        met = "" if r.met is None else ("[green]yes[/]" if r.met else "[red]no[/]")
        table.add_row(r.section, r.name, f"{r.value:,.3f} {r.unit}", r.target, met)
    Console().print(table)

    out = Path(ns.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"date": started, "quick": ns.quick, "versions": _versions(), "machine": platform.machine(),
             "rows": [r.as_dict() for r in rows]},
            indent=2,
        )
    )
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

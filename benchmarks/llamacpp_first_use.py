"""The first `llamacpp:` parse in a fresh process, harness start included, beside builtin's first parse.

    python -m benchmarks.llamacpp_first_use [--rounds N] [--json FILE]   # needs a built harness

What a user waits for the first time a program uses ``llamacpp:hermes``: a fresh interpreter
imports parsebridge, builds the parser (which starts the native harness, a subprocess, and renders
the Hermes template with the tools) and parses one output. The same program with
``builtin:hermes`` runs beside it, and a bare ``python -c pass``; each round runs the three in
turn, in an order that flips every round, so drifting machine load hits them alike.

Per program: the wall time of the whole process (what the user waits), the time inside it from
before ``import parsebridge`` to the parsed result, and the CPU time of the process and everything
it started (user + system, from the parent's ``RUSAGE_CHILDREN``: the harness is included). The
figures are the minimum and median over the rounds; the table ends with llamacpp over builtin.
The machine is shared: say the load beside any figure taken from here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from parsebridge.formats import hermes

from .import_cost import _env

TEXT = (
    f'Let me check.{hermes.START}\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n{hermes.END}'
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
#: The program each spec runs: seconds from before the import to the parsed result, printed.
PROGRAM = (
    "import time; t0 = time.perf_counter()\n"
    "import parsebridge as pb\n"
    "r = pb.get_tool_parser({spec!r}, {tools!r}).parse({text!r})\n"
    "assert [c.name for c in r.tool_calls] == ['get_weather'], r\n"
    "print(time.perf_counter() - t0)\n"
)
PROGRAMS = {
    "bare interpreter": "pass",
    "builtin:hermes": PROGRAM.format(spec="builtin:hermes", tools=TOOLS, text=TEXT),
    "llamacpp:hermes": PROGRAM.format(spec="llamacpp:hermes", tools=TOOLS, text=TEXT),
}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(code: str) -> dict[str, float]:
    """One fresh process: its wall time, its own measure (when it prints one), its tree's CPU."""
    cpu0, t0 = _cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, env=_env()
    )
    out = {"process_s": time.perf_counter() - t0, "cpu_s": _cpu() - cpu0}
    if done.stdout.strip():
        out["inside_s"] = float(done.stdout.strip().splitlines()[-1])
    return out


def measure(rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """Program → figure → min and median over `rounds` (after one untimed warm-up each)."""
    for code in PROGRAMS.values():  # byte-code caches warm, the harness binary in the page cache
        run_once(code)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in PROGRAMS}
    order = list(PROGRAMS)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            runs[name].append(run_once(PROGRAMS[name]))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    return {
        name: {
            key: {"min": min(x[key] for x in got), "median": statistics.median(x[key] for x in got)}
            for key in got[0]
        }
        for name, got in runs.items()
    }


def report(figures: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [
        f"{'program':<18} {'process wall':>14} {'import + parse':>15} {'CPU (tree)':>12}  (ms: min / median)"
    ]
    for name, fig in figures.items():
        cells = [
            f"{fig[key]['min'] * 1e3:6.0f} /{fig[key]['median'] * 1e3:6.0f}" if key in fig else "-"
            for key in ("process_s", "inside_s", "cpu_s")
        ]
        lines.append(f"{name:<18} {cells[0]:>14} {cells[1]:>15} {cells[2]:>12}")
    llama, builtin = figures["llamacpp:hermes"], figures["builtin:hermes"]
    for key, what in (("inside_s", "import + first parse"), ("process_s", "process wall"), ("cpu_s", "CPU")):
        extra = (llama[key]["median"] - builtin[key]["median"]) * 1e3
        ratio = llama[key]["median"] / builtin[key]["median"]
        lines.append(f"llamacpp over builtin, {what} (medians): +{extra:.0f} ms, x{ratio:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = ap.parse_args(argv)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import parsebridge as pb; print(pb.get_backend('llamacpp').unavailable_reason() or '')",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    if probe.stdout.strip():
        print(f"no llama.cpp harness here: {probe.stdout.strip()}", file=sys.stderr)
        return 1
    load0 = os.getloadavg()[0]
    figures = measure(args.rounds)
    load = f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    print(report(figures))
    print(f"{args.rounds} rounds; {load}; {os.cpu_count()} cores")
    if args.json:
        payload: dict[str, Any] = {"rounds": args.rounds, "load": load, "figures": figures}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

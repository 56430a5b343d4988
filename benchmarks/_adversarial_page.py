"""The adversarial section's pages: the README table, the growth table and docs/reliability.md.

Rendering only: `benchmarks.adversarial` measures and drives, this module
turns its report into markdown.
"""

from __future__ import annotations

import math
from typing import Any

from ._timing import fmt_seconds


def worst(result: dict[str, Any], deadline: float = math.inf) -> dict[str, Any] | None:
    """The worst input measured: the highest CPU time per character (a small input that takes long).

    A point over the budget counts as taking the budget (a lower bound, marked ``over``);
    projected points are not ranked.
    """
    best: dict[str, Any] | None = None
    for row in [*result.get("runaway", []), *result.get("growth", [])]:
        for p in row["points"]:
            for mode in ("oneshot", "stream"):
                sec, over = p.get(mode), False
                if sec is None and "over" in p.get(f"{mode}_note", ""):
                    sec, over = deadline, True
                if sec is None or sec == math.inf or not p["size"]:
                    continue
                rate = sec / p["size"]
                if best is None or rate > best["rate"]:
                    best = {
                        "spec": row["spec"],
                        "case": row["case"],
                        "mode": mode,
                        "size": p["size"],
                        "seconds": sec,
                        "over": over,
                        "rate": rate,
                        "exponent": row["exponent"].get(mode),
                    }
    return best


def _cell_worst(r: dict[str, Any], deadline: float) -> str:
    w = worst(r, deadline)
    if w is None:
        return "—"
    sec = f"> {fmt_seconds(w['seconds'])} (budget)" if w["over"] else fmt_seconds(w["seconds"])
    exp = f", growth ~n^{w['exponent']:.1f}" if w.get("exponent") is not None else ""
    size = f"{w['size'] / 1000:.1f}k" if w["size"] >= 1000 else f"{w['size']}"
    return f"{w['spec']} `{w['case']}` {w['mode']}, {size} chars: {sec} CPU{exp}"


def _t(seconds: float) -> str:
    """CPU time for the tables (the process clock does not resolve below about a millisecond here)."""
    return "< 1ms" if seconds < 1e-3 else fmt_seconds(seconds)


def table(report: dict[str, Any]) -> str:
    """The README table (markdown)."""
    lines = [
        "| backend | inputs tried (fuzz + corpus) | exceptions escaped | divergences found (inputs, by class) "
        "| worst case on the adversarial corpus |",
        "|---|---|---|---|---|",
    ]
    for b, r in report["backends"].items():
        ver = report["versions"].get(b if b != "builtin" else "main", {}) or {}
        label = f"{b} {ver.get(b) or ''}".strip() if b != "builtin" else "builtin"
        if "skipped" in r:
            lines.append(f"| {label} | — | — | — | {r['skipped']} |")
            continue
        classes = ", ".join(f"{c} {n}" for c, n in r["classes"].items()) or "none"
        lines.append(
            f"| {label} | {r['inputs']:,} ({r['fuzz_inputs']:,} + {r['corpus_inputs']:,}) | {r['escaped']} "
            f"| {classes} | {_cell_worst(r, report['settings']['deadline'])} |"
        )
    return "\n".join(lines)


def _growth_table(report: dict[str, Any], top: int = 12) -> str:
    lines = ["| spec | case | mode | 1k | 8k | 64k | growth exponent |", "|---|---|---|---|---|---|---|"]
    items = []
    for r in report["backends"].values():
        for row in r.get("growth", []):
            for mode in ("oneshot", "stream"):
                cells, last = [], 0.0
                for p in row["points"]:
                    v = p.get(mode)
                    if v is not None:
                        cells.append(_t(v))
                        last = v
                    elif p.get(f"{mode}_projected") is not None:
                        cells.append(f"~{fmt_seconds(p[f'{mode}_projected'])} (proj.)")
                        last = p[f"{mode}_projected"]
                    else:
                        cells.append("> budget" if "over" in p.get(f"{mode}_note", "") else "—")
                        last = math.inf if "over" in p.get(f"{mode}_note", "") else last
                cells += ["—"] * (3 - len(cells))
                items.append((last, row["spec"], row["case"], mode, cells, row["exponent"].get(mode)))
    items.sort(key=lambda x: -x[0])
    for _last, spec, case, mode, cells, exp in items[:top]:
        lines.append(f"| {spec} | {case} | {mode} | {' | '.join(cells[:3])} | {'' if exp is None else exp} |")
    return "\n".join(lines)


def doc(report: dict[str, Any]) -> str:
    """docs/reliability.md: the table, the slowest growth series, protection costs, how to reproduce."""
    v = report["versions"]
    versions = ", ".join(
        f"{k} {x}"
        for k, x in [
            ("parsebridge", (v.get("main") or {}).get("parsebridge")),
            ("vLLM", (v.get("vllm") or {}).get("vllm")),
            ("SGLang", (v.get("sglang") or {}).get("sglang")),
            ("Python", (v.get("main") or {}).get("python")),
        ]
        if x
    )
    s = report["settings"]
    parts = [
        "# Reliability: adversarial outputs, fuzzing, worst-case time",
        "",
        f"Generated {report['date']} by `python -m benchmarks.adversarial{' --quick' if report['quick'] else ''}` "
        f"({versions}; {report['machine']['cpus']} CPUs, load {report['machine']['load'][0]:.1f}: a shared "
        "machine, so absolute times are noisy; growth exponents less so).",
        "",
        f"Per family: {s['fuzz']} seeded random outputs from the family's grammar plus noise, and the adversarial "
        f"corpus (`parsebridge.conformance.adversarial`, documented in "
        f"`src/parsebridge/conformance/fixtures/adversarial.md`) at scale {s['scale']}; each one-shot and streamed "
        "(random 1–12 character chunks, and one token per chunk with the adapter's tokenizer). Divergences are "
        "counted once per input and class (stream vs one-shot, OpenAI delta protocol; `backend_error` = a typed "
        "error). The pytest fuzz pass (`tests/reliability/test_fuzz.py`) checks the same properties with hypothesis.",
        "",
        *([report["note"], ""] if report.get("note") else []),
        table(report),
        "",
        "## Time vs length (slowest series)",
        "",
        f"Each size-able corpus case at {', '.join(f'{x // 1000}k' for x in s['sizes'])} characters, one-shot and "
        f"streamed one token per chunk; budget {s['deadline']:g} s per measurement, sizes projected past it from "
        "the last growth are marked. Exponent 1 = linear, 2 = quadratic.",
        "",
        _growth_table(report),
    ]
    runaway = [
        (row, mode)
        for r in report["backends"].values()
        for row in r.get("runaway", [])
        for mode in ("oneshot", "stream")
    ]
    if runaway:
        parts += [
            "",
            "## Runaway inputs",
            "",
            "Corpus inputs that blew the budget while probing, re-measured at 1/16 … 1/2 of their size "
            "(CPU seconds; `>` = over the budget):",
            "",
            "| spec | case | mode | sizes (characters) → CPU time | growth exponent |",
            "|---|---|---|---|---|",
        ]
        for row, mode in runaway:
            cells = []
            for p in row["points"]:
                v = p.get(mode)
                if v is not None:
                    cells.append(f"{p['size']}: {_t(v)}")
                elif "over" in p.get(f"{mode}_note", ""):
                    cells.append(f"{p['size']}: > {s['deadline']:g}s")
            if cells:
                exp = row["exponent"].get(mode)
                parts.append(
                    f"| {row['spec']} | {row['case']} | {mode} | {' · '.join(cells)} | {'' if exp is None else exp} |"
                )
    capped = [
        f"{b}: {r[k]}" for b, r in report["backends"].items() for k in ("capped", "growth_capped") if k in r
    ]
    if capped:
        parts += ["", "Time caps reached (numbers above are partial):", ""] + [f"- {x}" for x in capped]
    over = [x for r in report["backends"].values() for x in r.get("over_budget", [])]
    if over:
        parts += ["", "Inputs over the budget during fuzz/corpus probing:", ""] + [
            f"- {x}" for x in over[:20]
        ]
    unsup = {
        f"{b}: {k}": w for b, r in report["backends"].items() for k, w in r.get("unsupported", {}).items()
    }
    if unsup:
        parts += ["", "Families whose parser could not be built here (not counted):", ""]
        parts += [f"- {k}: {w}" for k, w in unsup.items()]
    esc = [e for r in report["backends"].values() for e in r.get("escapes", [])]
    if esc:
        parts += ["", "Escaped exceptions:", ""] + [
            f"- {e['spec']} {e['source']}: {e['error']}" for e in esc[:20]
        ]
    p = report.get("protections")
    if p:
        parts += [
            "",
            "## Cost of the protections (builtin:hermes)",
            "",
            f"- `timeout=` runs the parser in a worker process: start-up {fmt_seconds(p['worker_startup_s'])} "
            "(builtin; a framework worker also pays the framework import, see the import_cost benchmark), then "
            f"{fmt_seconds(p['parse_round_trip_s'])} per `parse` round trip (in-process parse "
            f"{fmt_seconds(p['parse_in_process_s'])}) and {fmt_seconds(p['feed_round_trip_s'])} per stream `feed`.",
            # (a report written before the limit was recorded used 4096)
            f"- `max_held={p.get('max_held_limit', 4096)}` on a stream of {p['max_held_chars']:,} characters "
            f"in {p['max_held_chunks']:,} chunks costs {p['max_held_ratio']:.2f}× the unguarded stream.",
        ]
    parts += [
        "",
        "## Reproduce",
        "",
        "```",
        "python -m benchmarks.adversarial --python vllm=/path/to/vllm-venv/bin/python \\",
        "    --python sglang=/path/to/sglang-venv/bin/python --report adversarial.json --doc docs/reliability.md",
        "PARSEBRIDGE_FUZZ_EXAMPLES=5000 pytest tests/reliability/test_fuzz.py   # long hypothesis run",
        "```",
        "",
    ]
    return "\n".join(parts)

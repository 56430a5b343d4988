"""Adversarial inputs per backend: escapes, divergences, worst-case time vs length, cost of the protections.

What it measures, per backend installed in this interpreter (frameworks in
other interpreters with ``--python vllm=EXE``, as `benchmarks.__main__`):

* **fuzz + corpus**: random outputs from every family's grammar plus noise
  (`parsebridge.conformance.adversarial.random_output`, seeded) and the
  adversarial corpus, one-shot and streamed (random 1–12 character chunks and
  the adapter's own token chunks); counts inputs, exceptions that escaped
  untyped (must be 0), inputs with typed errors, and divergence classes;
* **time vs length**: each size-able corpus case for each family at 1k/8k/64k
  characters (quick: 1k/8k), one-shot and streamed one token per chunk. A
  measurement has a time budget (SIGALRM); a size whose time, projected from
  the last growth, would blow the budget is not run but reported as projected.
  Growth 8k→64k ≈ 8 is linear, ≈ 64 quadratic;
* **protections**: `timeout=` (worker process) round trip vs in-process per
  call, worker start-up, and `max_held` overhead on a stream (builtin
  parsers; a framework worker costs the same round trip plus its import at
  start-up — see the import_cost section).

`run(quick)` gives `Row`s for ``python -m benchmarks``. The CLI also prints
the README table and can write the whole report and ``docs/reliability.md``::

    python -m benchmarks.adversarial --python vllm=/work/venv-vllm/bin/python \\
        --python sglang=/work/venv-sglang/bin/python --report adversarial.json --doc docs/reliability.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from parsebridge.conformance.adversarial import OverBudget as Budget
from parsebridge.conformance.adversarial import cpu_budget as budget

from ._adversarial_page import doc, table, worst
from ._backends import BACKENDS, SETTINGS, installed
from ._timing import Row, fmt_seconds, measure_pair

SECTION = "adversarial"
#: Cases whose size is a parameter (the time-vs-length series).
GROWTH_CASES = (
    "huge-content",
    "huge-reasoning",
    "huge-arguments",
    "many-calls",
    "deep-nesting",
    "marker-fragments",
    "start-markers-repeated",
    "end-markers-repeated",
    "unterminated",
)

# ---------------------------------------------------------------- per backend


def _subjects(backend: str) -> Iterator[tuple[str, str, Any, str | None]]:
    """(kind, family, subject or None, why not) for every family the backend has a parser for."""
    from parsebridge.conformance.adversarial import families_for, subject_for
    from parsebridge.conformance.runner import Runner

    runner = Runner(["oneshot"])
    only = [f for f in os.environ.get("PARSEBRIDGE_ADV_FAMILIES", "").split(",") if f]
    for kind, family in families_for(backend):
        if only and family not in only:
            continue
        try:
            yield kind, family, subject_for(backend, kind, family, runner), None
        except Exception as exc:
            yield kind, family, None, f"{type(exc).__name__}: {str(exc)[:160]}"


def _probe_one(subject: Any, g: Any, text: str, rng: random.Random, deadline: float) -> Any:
    from parsebridge.conformance.adversarial import all_markers, probe, random_chunks, token_chunks

    try:
        tokens = token_chunks(subject.parser, text)
    except Exception:
        tokens = [text]
    chunkings = [("random", random_chunks(rng, text, 12)), ("token", tokens)]
    started = True if g.started else None
    with budget(deadline):
        return probe(subject, text, chunkings, started=started, markers=all_markers(g))


def measure_backend(
    backend: str, *, fuzz: int, scale: float, sizes: list[int], deadline: float, cap: float
) -> dict[str, Any]:
    """Everything this section reports about one backend (measured in this interpreter)."""
    from parsebridge.conformance.adversarial import (
        CASES,
        adversarial_transcripts,
        build_case,
        grammar,
        random_output,
        size_for,
    )

    out: dict[str, Any] = {
        "inputs": 0,
        "fuzz_inputs": 0,
        "corpus_inputs": 0,
        "escaped": 0,
        "errors": 0,
        "classes": Counter(),
        "escapes": [],
        "over_budget": [],
        "unsupported": {},
        "growth": [],
        "runaway": [],
    }
    t_start = time.perf_counter()
    runaway: list[tuple[str, str, Any, str, int]] = []
    subjects = []
    for kind, family, subject, why in _subjects(backend):
        if subject is None:
            out["unsupported"][f"{kind}:{family}"] = why
        else:
            subjects.append((kind, family, subject))
    # phase 1 (half the cap): fuzz + corpus probes; phase 2: the time-vs-length series
    for kind, family, subject in subjects:
        g = grammar(kind, family)
        rng = random.Random(f"{backend}-{kind}-{family}")
        texts = [("fuzz", random_output(rng, g)) for _ in range(fuzz)]
        texts += [(t.id, t.output) for t in adversarial_transcripts([family], scale, kinds=(kind,))]
        for source, text in texts:
            if time.perf_counter() - t_start > cap / 2:
                out["capped"] = f"probing stopped at the {cap / 2:g}s time cap (later families not probed)"
                break
            out["inputs"] += 1
            out["fuzz_inputs" if source == "fuzz" else "corpus_inputs"] += 1
            try:
                res = _probe_one(subject, g, text, rng, deadline)
            except Budget:
                out["over_budget"].append(
                    f"{subject.target.label} {source} ({len(text)} chars) > {deadline:g}s"
                )
                case = next(
                    (c for c in CASES if source.startswith(f"adversarial-{kind}-{family}-{c}-")), None
                )
                if case is not None and CASES[case].nominal:
                    runaway.append((kind, family, subject, case, len(text)))
                continue
            if res.escaped:
                out["escaped"] += 1
                out["escapes"].append(
                    {"spec": subject.target.label, "source": source, "error": res.escaped[0]}
                )
            out["errors"] += bool(res.errors)
            out["classes"].update(res.classes)
    # the inputs that blew the budget: how fast do they grow? (1/16 … 1/2 of the size that failed)
    for kind, family, subject, case, chars in runaway:
        fine = [max(50, chars // d) for d in (16, 8, 4, 2)]
        row = _growth(subject, kind, family, case, fine, deadline, build_case, size_for)
        out["runaway"].append(row)
    for kind, family, subject in subjects:
        for case in GROWTH_CASES:
            if kind not in CASES[case].kinds:
                continue
            if time.perf_counter() - t_start > cap:
                out["growth_capped"] = f"series stopped at the {cap:g}s time cap"
                break
            out["growth"].append(_growth(subject, kind, family, case, sizes, deadline, build_case, size_for))
    out["classes"] = dict(out["classes"].most_common())
    out["seconds"] = round(time.perf_counter() - t_start, 1)
    return out


def _time(fn: Callable[[], object], deadline: float) -> float:
    """CPU seconds for one call (min of 3 when fast); inf when over the budget."""
    runs = []
    for _ in range(3):
        t0 = time.process_time()
        try:
            with budget(deadline):
                fn()
        except Budget:
            return math.inf
        except Exception:  # typed parser errors still cost time: that time is what we measure
            pass
        runs.append(time.process_time() - t0)
        if runs[-1] > 0.05:
            break
    return min(runs)


def _growth(
    subject: Any,
    kind: str,
    family: str,
    case: str,
    sizes: list[int],
    deadline: float,
    build_case: Callable[..., Any],
    size_for: Callable[[str, int], int],
) -> dict[str, Any]:
    """Time one-shot and token stream of the case at each size; project sizes that would blow the budget."""
    from parsebridge.conformance.adversarial import token_chunks
    from parsebridge.conformance.observe import parse_with

    row: dict[str, Any] = {
        "spec": subject.target.label,
        "family": family,
        "kind": kind,
        "case": case,
        "points": [],
    }
    started = True if _started(kind, family) else None
    last: dict[str, tuple[int, float]] = {}
    growth: dict[str, float] = {}
    for size in sizes:
        t = build_case(kind, family, case, size_for(case, size))
        text = t.output
        try:
            chunks = token_chunks(subject.parser, text)
        except Exception:
            chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
        point: dict[str, Any] = {"size": len(text)}
        for mode in ("oneshot", "stream"):
            prev = last.get(mode)
            if prev is not None and prev[1] == math.inf:
                point[mode] = None
                point[f"{mode}_note"] = "skipped: smaller size already over budget"
                continue
            if prev is not None and mode in growth:
                projected = prev[1] * (len(text) / prev[0]) ** growth[mode]
                if projected > deadline:
                    point[mode] = None
                    point[f"{mode}_projected"] = projected
                    last[mode] = (len(text), projected)
                    continue
            if mode == "oneshot":
                sec = _time(lambda text=text: parse_with(subject, text, started, "bench"), deadline)
            else:
                sec = _time(lambda chunks=chunks: _stream(subject, chunks, started), deadline)
            point[mode] = None if sec == math.inf else sec
            if sec == math.inf:
                point[f"{mode}_note"] = f"over the {deadline:g}s budget"
            if prev is not None and sec != math.inf and prev[1] > 1e-4 and sec > 1e-4:
                growth[mode] = max(0.0, math.log(sec / prev[1]) / math.log(len(text) / prev[0]))
            last[mode] = (len(text), sec)
        row["points"].append(point)
    row["exponent"] = {m: round(e, 2) for m, e in growth.items()}
    return row


def _started(kind: str, family: str) -> bool:
    from parsebridge.conformance.adversarial import grammar

    return grammar(kind, family).started


def _stream(subject: Any, chunks: list[Any], started: bool | None) -> None:
    from parsebridge.conformance.observe import open_stream

    s = open_stream(subject, started, "bench")
    for c in chunks:
        s.feed(c.text, c.token_ids)
    s.finish()


# ---------------------------------------------------------------- protections


def protections(quick: bool) -> dict[str, Any]:
    """Cost of `timeout=` (worker round trip) and `max_held` on builtin:hermes."""
    import parsebridge as pb
    from parsebridge.conformance.adversarial import TOOLS, grammar

    g = grammar("tool", "hermes")
    text = "Checking.\n" + g.calls([("get_weather", json.dumps({"location": "Paris", "days": 2}))])
    plain = pb.get_tool_parser("builtin:hermes", tools=TOOLS)
    t0 = time.perf_counter()
    budgeted = pb.get_tool_parser("builtin:hermes", tools=TOOLS, timeout=30.0)
    startup = time.perf_counter() - t0
    try:
        repeat = 15 if quick else 60  # single calls, many repeats: the minimum is the undisturbed cost
        a, b = measure_pair(
            lambda: plain.parse(text),
            lambda: budgeted.parse(text),
            repeat=repeat,
            labels=("in-process", "timeout="),
        )
        chunks = [text[i : i + 4] for i in range(0, len(text), 4)]

        def stream(p: Any) -> Callable[[], object]:
            def run() -> object:
                s = p.stream()
                for c in chunks:
                    s.feed(c)
                return s.finish()

            return run

        sa, sb = measure_pair(
            stream(plain), stream(budgeted), repeat=repeat, labels=("in-process", "timeout=")
        )
    finally:
        budgeted.inner.close()
    big = "Checking.\n" + g.calls([("search_web", json.dumps({"query": "x " * 20000}))])
    big_chunks = [big[i : i + 4] for i in range(0, len(big), 4)]
    # Builtin holds a call's arguments until its object closes (`whole_calls`: no partial call is
    # announced), so this one call is held whole: a limit below its size would refuse the stream
    # (BufferLimitError) instead of measuring what the check costs per chunk.
    limit = len(big) + 4096
    held = pb.get_tool_parser("builtin:hermes", tools=TOOLS, max_held=limit)

    def run_stream(p: Any) -> Callable[[], object]:
        def run() -> object:
            s = p.stream()
            for c in big_chunks:
                s.feed(c)
            return s.finish()

        return run

    ha, hb = measure_pair(
        run_stream(plain), run_stream(held), repeat=3 if quick else 5, labels=("plain", "max_held")
    )
    return {
        "worker_startup_s": startup,
        "parse_in_process_s": a.min,
        "parse_budgeted_s": b.min,
        "parse_round_trip_s": b.min - a.min,
        "stream_in_process_s": sa.min,
        "stream_budgeted_s": sb.min,
        "stream_chunks": len(chunks),
        "feed_round_trip_s": (sb.min - sa.min) / (len(chunks) + 1),
        "max_held_ratio": hb.min / ha.min if ha.min else math.nan,
        "max_held_chars": len(big),
        "max_held_chunks": len(big_chunks),
        "max_held_limit": limit,
    }


# ---------------------------------------------------------------- driving, rows, table


def settings_for(quick: bool) -> dict[str, Any]:
    """Sizes and budgets; PARSEBRIDGE_ADV_* variables (set by the CLI flags, inherited by children) override."""
    env = os.environ.get
    cfg: dict[str, Any] = (
        {"fuzz": 5, "scale": 0.002, "sizes": [1000, 8000], "deadline": 3.0, "cap": 300.0}
        if quick
        else {"fuzz": 40, "scale": 0.01, "sizes": [1000, 8000, 64000], "deadline": 10.0, "cap": 1800.0}
    )
    if env("PARSEBRIDGE_ADV_FUZZ"):
        cfg["fuzz"] = int(env("PARSEBRIDGE_ADV_FUZZ", ""))
    if env("PARSEBRIDGE_ADV_SCALE"):
        cfg["scale"] = float(env("PARSEBRIDGE_ADV_SCALE", ""))
    if env("PARSEBRIDGE_ADV_SIZES"):
        cfg["sizes"] = [int(x) for x in env("PARSEBRIDGE_ADV_SIZES", "").split(",")]
    if env("PARSEBRIDGE_ADV_DEADLINE"):
        cfg["deadline"] = float(env("PARSEBRIDGE_ADV_DEADLINE", ""))
    if env("PARSEBRIDGE_ADV_CAP"):
        cfg["cap"] = float(env("PARSEBRIDGE_ADV_CAP", ""))
    return cfg


def measure_here(backends: list[str], quick: bool) -> dict[str, Any]:
    cfg = settings_for(quick)
    results: dict[str, Any] = {}
    for b in backends:
        if not installed(b):
            results[b] = {"skipped": f"{b} is not installed in this interpreter"}
            continue
        results[b] = measure_backend(b, **cfg)
    return results


def _versions() -> dict[str, str | None]:
    import importlib.metadata as md

    out: dict[str, str | None] = {"python": platform.python_version()}
    for d in ("parsebridge", "vllm", "sglang"):
        try:
            out[d] = md.version(d)
        except md.PackageNotFoundError:
            out[d] = None
    return out


def _start_child(framework: str, python: str, quick: bool, tmp: str) -> tuple[subprocess.Popen[bytes], Path]:
    path = Path(tmp) / f"{framework}.json"
    cmd = [
        python,
        "-m",
        "benchmarks.adversarial",
        "--backends",
        framework,
        "--report",
        str(path),
        "--no-table",
        "--no-protections",
    ]
    if quick:
        cmd.append("--quick")
    print(f"[adversarial:{framework}] running in {python}", file=sys.stderr)
    env = dict(os.environ, PARSEBRIDGE_BENCH_PYTHONS="")
    return subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent, env=env), path


def _finish_child(framework: str, proc: subprocess.Popen[bytes], path: Path) -> dict[str, Any]:
    code = proc.wait()
    if code != 0 or not path.exists():
        return {"backends": {framework: {"skipped": f"its interpreter exited {code}"}}, "versions": {}}
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def collect(
    backends: list[str], pythons: dict[str, str], quick: bool, with_protections: bool
) -> dict[str, Any]:
    """The full report: this interpreter's backends, then each delegated framework's child."""
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "quick": quick,
        "families": os.environ.get("PARSEBRIDGE_ADV_FAMILIES") or None,
        "settings": settings_for(quick),
        "machine": {"arch": platform.machine(), "cpus": os.cpu_count(), "load": os.getloadavg()},
        "versions": {"main": _versions()},
    }
    with tempfile.TemporaryDirectory() as tmp:
        children = {fw: _start_child(fw, exe, quick, tmp) for fw, exe in pythons.items()}  # side by side
        report["backends"] = measure_here([b for b in backends if b not in pythons], quick)
        if with_protections:
            report["protections"] = protections(quick)
        for fw, (proc, path) in children.items():
            child = _finish_child(fw, proc, path)
            report["backends"].update(child.get("backends", {}))
            report["versions"][fw] = child.get("versions", {}).get("main")
    return report


def rows_from(report: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for b, r in report["backends"].items():
        if "skipped" in r:
            rows.append(
                Row(SECTION, f"{b}", math.nan, "", raw=r["skipped"], detail={"skipped": r["skipped"]})
            )
            continue
        rows.append(
            Row(
                SECTION,
                f"{b}: inputs tried (fuzz + corpus)",
                r["inputs"],
                "inputs",
                raw=f"fuzz {r['fuzz_inputs']} · corpus {r['corpus_inputs']}",
            )
        )
        rows.append(
            Row(SECTION, f"{b}: exceptions escaped", r["escaped"], "", target="0", met=r["escaped"] == 0)
        )
        classes = ", ".join(f"{c} {n}" for c, n in r["classes"].items()) or "none"
        rows.append(
            Row(SECTION, f"{b}: inputs with divergences", sum(r["classes"].values()), "", raw=classes)
        )
        w = worst(r, report["settings"]["deadline"])
        if w is not None:
            rows.append(
                Row(
                    SECTION,
                    f"{b}: worst case",
                    w["seconds"],
                    "s",
                    raw=f"{w['spec']} {w['case']} {w['mode']} {w['size']} chars"
                    + (" (over the budget)" if w["over"] else ""),
                )
            )
    p = report.get("protections")
    if p:
        rows.append(
            Row(
                SECTION,
                "timeout=: parse round trip",
                p["parse_round_trip_s"] * 1e6,
                "µs",
                raw=f"in-process {fmt_seconds(p['parse_in_process_s'])} · worker {fmt_seconds(p['parse_budgeted_s'])}",
            )
        )
        rows.append(Row(SECTION, "timeout=: per feed round trip", p["feed_round_trip_s"] * 1e6, "µs"))
        rows.append(Row(SECTION, "timeout=: worker start-up (builtin)", p["worker_startup_s"], "s"))
        rows.append(Row(SECTION, "max_held: stream cost ratio", p["max_held_ratio"], "×", target="≈ 1"))
    return rows


def run(quick: bool) -> list[Row]:
    """Section entry point for `python -m benchmarks`."""
    backends = [b for b in SETTINGS.backends if b in BACKENDS]
    return rows_from(collect(backends, dict(SETTINGS.pythons), quick, with_protections="builtin" in backends))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.adversarial",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--quick", action="store_true", help="few inputs, sizes 1k/8k, short budgets")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma list measured in this interpreter")
    ap.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="FW=EXE",
        help="measure framework FW in interpreter EXE (or PARSEBRIDGE_BENCH_PYTHONS)",
    )
    ap.add_argument("--report", help="write the full JSON report here")
    ap.add_argument("--doc", help="write the markdown page (docs/reliability.md) here")
    ap.add_argument("--no-table", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-protections", action="store_true", help="skip the timeout=/max_held measurements")
    ap.add_argument("--fuzz", type=int, help="random outputs per family (default 40; quick 5)")
    ap.add_argument("--scale", type=float, help="corpus scale (default 0.01: 10 KB outputs, 100 calls)")
    ap.add_argument("--sizes", help="time-vs-length sizes in characters (default 1000,8000,64000)")
    ap.add_argument("--deadline", type=float, help="CPU-seconds budget per measurement (default 10)")
    ap.add_argument("--cap", type=float, help="wall-seconds cap per backend (default 1800)")
    ap.add_argument("--families", help="comma list: measure only these families (a partial report)")
    ap.add_argument("--note", help="a paragraph added to the doc (e.g. how merged runs were made)")
    ap.add_argument(
        "--merge",
        nargs="+",
        metavar="REPORT",
        help="combine reports written earlier (--report) into one table/doc instead of measuring",
    )
    ns = ap.parse_args(argv)
    if ns.merge:
        return _emit(merge([json.loads(Path(f).read_text()) for f in ns.merge]), ns)
    for flag, var in (
        ("fuzz", "FUZZ"),
        ("scale", "SCALE"),
        ("sizes", "SIZES"),
        ("deadline", "DEADLINE"),
        ("cap", "CAP"),
        ("families", "FAMILIES"),
    ):
        if getattr(ns, flag) is not None:
            os.environ[f"PARSEBRIDGE_ADV_{var}"] = str(getattr(ns, flag))
    pythons: dict[str, str] = {}
    for item in filter(None, [*os.environ.get("PARSEBRIDGE_BENCH_PYTHONS", "").split(","), *ns.python]):
        name, _, exe = item.strip().partition("=")
        if name and exe:
            pythons[name] = exe
    backends = [b.strip() for b in ns.backends.split(",") if b.strip()]
    for fw in pythons:
        if fw not in backends:
            backends.append(fw)
    report = collect(
        backends, pythons, ns.quick, with_protections=not ns.no_protections and "builtin" in backends
    )
    report["backends"] = {
        k: {**v, "classes": dict(v.get("classes", {}))} for k, v in report["backends"].items()
    }
    return _emit(report, ns)


def merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Later reports add or replace backends (a skipped backend never replaces a measured one)."""
    out = dict(reports[0])
    out["backends"] = dict(out["backends"])
    out["versions"] = dict(out["versions"])
    for r in reports[1:]:
        for b, res in r["backends"].items():
            if "skipped" in res and b in out["backends"] and "skipped" not in out["backends"][b]:
                continue
            if r.get("families") and b in out["backends"] and "skipped" not in out["backends"][b]:
                # a partial (--families) report adds its runaway series to the full one
                out["backends"][b] = {**out["backends"][b]}
                out["backends"][b]["runaway"] = out["backends"][b].get("runaway", []) + res.get("runaway", [])
                continue
            out["backends"][b] = res
            if b in ("vllm", "sglang"):
                out["versions"][b] = r["versions"].get("main")
        if not out.get("protections"):
            out["protections"] = r.get("protections")
    return out


def _emit(report: dict[str, Any], ns: argparse.Namespace) -> int:
    if ns.note:
        report["note"] = ns.note
    if ns.report:
        Path(ns.report).write_text(json.dumps(report, indent=2, default=str))
    if ns.doc:
        Path(ns.doc).write_text(doc(report), encoding="utf-8", errors="backslashreplace")
    if not ns.no_table:
        print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

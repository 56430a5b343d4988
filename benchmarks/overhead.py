"""Section 2: what parsebridge adds on top of calling a framework parser directly.

For each framework and format, the same transcripts are parsed two ways,
alternately in one process: through `pb.get_*_parser(...)` (guard, adapter,
translation, accumulation) and through the framework calls the adapter makes,
written out in `_direct_<framework>.py` (same tokenizer, request fields,
chunks and token ids). Overhead = parsebridge time / direct time − 1, on the
medians of many alternating rounds (the minima's ratio is in the detail).

Each timed sample repeats the family's transcripts until it lasts about
`SAMPLE_S`, so a few microseconds of scheduler jitter are small against it even
for the cheapest parsers. Within one process a ratio barely moves from round to
round, yet two processes running the same code can differ by several percent
(vllm:hermes one-shot measured 14.8 % and 9.4 % in two runs whose rounds moved
it by 0.9 and 2.9 %). So a full run measures every figure in `PROCESSES` fresh
worker processes, taking turns; the figure is the median of the processes'
median ratios, and beside it the *spread* (``±``): how far that ratio moves
between the processes, i.e. between runs of the same code. An overhead closer to its target than its
spread is noise, not a regression. (``--quick`` measures in one process; its
spread is the even rounds against the odd ones.)

Targets: ≤ 10 % one-shot, ≤ 15 % streamed (per token), on the median ratio.
Quick mode checks no targets.

Streamed rows also give the *delta floor*: the direct loop plus one
`StreamDelta` built per chunk (the cheapest way parsebridge builds one), timed
in the same rounds. A bridge whose `feed` returns a `StreamDelta` cannot cost
less than that; it shows how much of a streamed figure the protocol itself
takes, whatever the adapter does.

Profile one case: ``python -m benchmarks.overhead vllm hermes [stream]``. Measure one family's
figures as a full run does (`PROCESSES` processes, judged), without the rest of the section:
``python -m benchmarks.overhead --figure sglang deepseek_r1``.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._backends import (
    Chunk,
    DirectUnavailable,
    bridge_oneshot,
    bridge_stream,
    chunks_for,
    direct_driver,
    installed_frameworks,
    make_parser,
    skip_row,
)
from ._corpus import FORMATS, Format
from ._timing import Row, Sample, calibrate, describe, measure_many, median_ratio, ratio, spread

SECTION = "overhead"
TARGETS = {"one-shot": 0.10, "streamed": 0.15}
#: Seconds one timed sample lasts (the transcripts repeated until it does), rounds per figure in
#: each process, and the fresh processes each figure is measured in.
SAMPLE_S, ROUNDS, PROCESSES = 0.1, 16, 4
FAMILIES = ("hermes", "llama3_json", "deepseek_v3", "qwen3", "deepseek_r1")


Cases = dict[str, tuple[Callable[[], object], Callable[[], object]]]


def _delta_floor(direct_stream: Callable[[], object], chunked: list[list[Chunk]]) -> Callable[[], object]:
    """The direct streamed run plus one `StreamDelta` per chunk, built as the adapters build it."""
    from parsebridge.protocol.models import delta_of

    def run() -> None:
        direct_stream()
        for chunks in chunked:
            for text, _ids in chunks:
                delta_of(text, "", [])

    return run


def _cases(backend: str, fmt: Format) -> tuple[Cases, str, int, Callable[[], object] | None]:
    """({mode: (through parsebridge, direct)}, spec, chunk count, delta floor) for one backend
    and format, or ({}, why not, 0, None)."""
    parser, spec = make_parser(backend, fmt)
    if parser is None:
        return {}, spec, 0, None
    try:
        direct = direct_driver(backend, parser, fmt)
    except DirectUnavailable as exc:
        return {}, f"{spec}: {exc}", 0, None
    except Exception as exc:
        return {}, f"{spec}: direct baseline failed to build: {type(exc).__name__}: {exc}", 0, None
    texts = fmt.transcripts
    chunked = [chunks_for(parser, t) for t in texts]
    one, many = bridge_oneshot(parser, fmt), bridge_stream(parser, fmt)

    def pb_oneshot() -> None:
        for t in texts:
            one(t)

    def direct_oneshot() -> None:
        for t in texts:
            direct.oneshot(t)

    def pb_stream() -> None:
        for c in chunked:
            many(c)

    def direct_stream() -> None:
        for c in chunked:
            direct.stream(c)

    cases = {"one-shot": (pb_oneshot, direct_oneshot), "streamed": (pb_stream, direct_stream)}
    return cases, spec, sum(len(c) for c in chunked), _delta_floor(direct_stream, chunked)


def measure_backend(
    backend: str, families: tuple[str, ...], rounds: int, run_s: float
) -> list[dict[str, Any]]:
    """Every figure of one backend, measured in this process: per family and mode the seconds of
    each round of each timed thing, or why the figure could not be measured (JSON-ready: a worker
    process writes this for its parent)."""
    out: list[dict[str, Any]] = []
    for family in families:
        fmt = FORMATS[family]
        try:
            cases, spec, n_chunks, floor = _cases(backend, fmt)
        except Exception as exc:
            cases, spec, n_chunks, floor = {}, f"{backend}:{family}: {type(exc).__name__}: {exc}", 0, None
        if not cases:
            out.append({"family": family, "skipped": spec})
            continue
        for mode, (through_pb, direct) in cases.items():
            figure: dict[str, Any] = {"family": family, "mode": mode, "spec": spec}
            try:
                through_pb(), direct()  # warm caches (tokenizer, regexes, lazy imports) for both
                frozen_heap()
                number = calibrate(direct, run_s)
                timed = {"pb": through_pb, "direct": direct}
                if mode == "streamed" and floor is not None:
                    timed["delta floor"] = floor
                samples = measure_many(timed, repeat=rounds, numbers=dict.fromkeys(timed, number))
            except Exception as exc:
                figure["skipped"] = f"{spec} {mode}: raised {type(exc).__name__}: {exc}"
                out.append(figure)
                continue
            figure.update(
                transcripts=len(fmt.transcripts),
                chunks=n_chunks,
                number=number,
                runs={label: sample.runs for label, sample in samples.items()},
            )
            out.append(figure)
    gc.unfreeze()
    return out


def frozen_heap() -> None:
    """Move every object alive now (a framework's import leaves about 600,000) out of the
    collector's reach: a full collection of that heap takes about 0.3 s, so the collection before
    each sample would cost more than the sample, and an automatic one inside a sample would cost
    it three times its length."""
    gc.collect()
    gc.freeze()


def _in_processes(
    backends: list[str], families: tuple[str, ...] = FAMILIES
) -> dict[str, list[list[dict[str, Any]] | str]]:
    """Each backend's figures (of `families`) measured in `PROCESSES` fresh worker processes,
    taking turns (vllm, sglang, vllm, ...), so drift hits every process alike; per process its
    figures, or why the worker failed."""
    root = Path(__file__).resolve().parent.parent
    by_backend: dict[str, list[list[dict[str, Any]] | str]] = {b: [] for b in backends}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(PROCESSES):
            for backend in backends:
                out = Path(tmp) / f"{backend}-{turn}.json"
                cmd = [sys.executable, "-m", "benchmarks.overhead", "--worker", backend, "--out", str(out)]
                if families != FAMILIES:
                    cmd += [a for f in families for a in ("--family", f)]
                print(f"[overhead] {backend}: process {turn + 1}/{PROCESSES}", file=sys.stderr)
                done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
                if done.returncode != 0 or not out.exists():
                    tail = (done.stderr or "").strip().splitlines()[-1:] or ["no output"]
                    by_backend[backend].append(f"worker exited {done.returncode}: {tail[0]}")
                else:
                    by_backend[backend].append(json.loads(out.read_text()))
    return by_backend


def run(quick: bool) -> list[Row]:
    """Quick: each backend measured once, in this process (CI). Full: in `PROCESSES` processes."""
    backends, rows = installed_frameworks(SECTION)
    if quick:
        measured = {b: [measure_backend(b, ("hermes", "qwen3"), 4, 0.02)] for b in backends}
    else:
        measured = _in_processes(backends)
    for backend in backends:
        rows.extend(backend_rows(backend, measured[backend], judge=not quick))
    return rows


def backend_rows(backend: str, processes: list[list[dict[str, Any]] | str], *, judge: bool) -> list[Row]:
    """One row per figure from its measurements in every process (or one saying why not). A
    figure any process could not measure is a row saying why, whatever the others measured."""
    failed = [p for p in processes if isinstance(p, str)]
    if failed:
        return [skip_row(SECTION, f"{backend}: all formats", failed[0])]
    by_figure: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for figures in processes:
        for f in figures:  # (a family that failed before its modes has one entry, mode None)
            by_figure.setdefault((f["family"], f.get("mode")), []).append(f)
    rows = []
    for (family, mode), figures in by_figure.items():
        skipped = next((f["skipped"] for f in figures if "skipped" in f), None)
        if skipped is None and (family, None) in by_figure:
            continue  # (measured elsewhere; the family's own row says why not here)
        if skipped is not None or len(figures) < len(processes):
            name = f"{backend}:{family}" + (f" {mode}" if mode else "")
            rows.append(skip_row(SECTION, name, skipped or "not measured in every process"))
        else:
            rows.append(figure_row(backend, figures, judge=judge))
    return rows


def figure_row(backend: str, figures: list[dict[str, Any]], *, judge: bool) -> Row:
    """A figure's row: the median over processes of each process's median ratio, judged; beside it
    the spread, how far that ratio moves between processes running the same code (with one
    process, between its even and odd rounds)."""
    first = figures[0]
    mode = first["mode"]
    per_process = [{label: Sample(label, runs) for label, runs in f["runs"].items()} for f in figures]
    ratios = [median_ratio(s["pb"], s["direct"]) for s in per_process]
    over = statistics.median(ratios) - 1
    one = per_process[0]
    moves = max(ratios) - min(ratios) if len(ratios) > 1 else spread(one["pb"], one["direct"])
    pooled = {label: Sample(label, [t for s in per_process for t in s[label].runs]) for label in one}
    floor_pct = (
        statistics.median(median_ratio(s["delta floor"], s["direct"]) for s in per_process) - 1
        if "delta floor" in one
        else None
    )
    per = first["chunks"] if mode == "streamed" else first["transcripts"]
    added_us = (pooled["pb"].median - pooled["direct"].median) / max(per, 1) * 1e6
    detail = {
        "backend": backend,
        "family": first["family"],
        "mode": mode,
        "transcripts": first["transcripts"],
        "chunks": first["chunks"],
        "added_us_per_chunk_or_transcript": added_us,
        "parsebridge": pooled["pb"].as_dict(),
        "direct": pooled["direct"].as_dict(),
        "ratio_min": ratio(pooled["pb"], pooled["direct"]),
        "ratio_median": statistics.median(ratios),
        "process_ratios_median": ratios,
        "spread": moves,
        "spread_between": "processes" if len(ratios) > 1 else "halves",
        "repeats_per_sample": [f["number"] for f in figures],
    }
    if floor_pct is not None:
        detail.update(delta_floor=pooled["delta floor"].as_dict(), delta_floor_pct=floor_pct * 100)
    return Row(
        SECTION,
        f"{first['spec']} {mode} overhead",
        over * 100,
        "%",
        target=f"≤ {TARGETS[mode]:.0%}",
        met=over <= TARGETS[mode] if judge else None,
        raw=_raw_column(detail, pooled),
        detail=detail,
    )


def _raw_column(detail: dict[str, Any], pooled: dict[str, Sample]) -> str:
    """What the table prints beside a figure: its spread (and each process's ratio), the samples'
    min/median on both sides, and per streamed chunk what the bridge adds and the delta floor."""
    ratios = detail["process_ratios_median"]
    between = f"between {len(ratios)} processes" if len(ratios) > 1 else "between halves"
    each = " (" + ", ".join(f"{(r - 1) * 100:.1f}" for r in ratios) + " %)" if len(ratios) > 1 else ""
    numbers = "/".join(map(str, detail["repeats_per_sample"]))
    streamed = detail["mode"] == "streamed"
    return (
        f"±{detail['spread'] * 100:.1f} % spread {between}{each} · "
        + describe(pooled["pb"], pooled["direct"])
        + f" per {detail['transcripts']} transcripts × {numbers}"
        + (f"; +{detail['added_us_per_chunk_or_transcript']:.1f}µs/chunk" if streamed else "")
        + (f"; delta floor +{detail['delta_floor_pct']:.1f} %" if "delta_floor_pct" in detail else "")
    )


def _worker(argv: list[str]) -> int:
    """`python -m benchmarks.overhead --worker BACKEND --out FILE [--family F]...`: one process's
    measurements (of every family, or of those named)."""
    backend, out = argv[argv.index("--worker") + 1], Path(argv[argv.index("--out") + 1])
    families = tuple(argv[i + 1] for i, a in enumerate(argv) if a == "--family") or FAMILIES
    out.write_text(json.dumps(measure_backend(backend, families, ROUNDS, SAMPLE_S)))
    return 0


def _figure(argv: list[str]) -> int:
    """`python -m benchmarks.overhead --figure BACKEND FAMILY`: one family's rows (one-shot and
    streamed) measured as a full run measures them, printed."""
    backend, family = argv[argv.index("--figure") + 1 : argv.index("--figure") + 3]
    if family not in FAMILIES:
        print(f"unknown family {family!r}; the families: {', '.join(FAMILIES)}", file=sys.stderr)
        return 2
    for row in backend_rows(backend, _in_processes([backend], (family,))[backend], judge=True):
        verdict = "" if row.met is None else (" met" if row.met else " NOT met")
        print(f"{row.name}: {row.value:.1f} {row.unit} (target {row.target}{verdict}) {row.raw}")
    return 0


def _profile(argv: list[str]) -> int:
    """cProfile the parsebridge side of one case (where does the overhead go?)."""
    import cProfile
    import pstats

    backend, family = argv[0], argv[1]
    mode = "streamed" if len(argv) > 2 and argv[2].startswith("stream") else "one-shot"
    cases, spec, _, _ = _cases(backend, FORMATS[family])
    if not cases:
        print(spec, file=sys.stderr)
        return 1
    through_pb, direct = cases[mode]
    for fn, label in ((through_pb, "parsebridge"), (direct, "direct")):
        fn()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            fn()
        prof.disable()
        print(f"==== {spec} {mode}: {label}")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    if "--worker" in sys.argv:
        sys.exit(_worker(sys.argv))
    sys.exit(_figure(sys.argv) if "--figure" in sys.argv else _profile(sys.argv[1:]))

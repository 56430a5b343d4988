"""Section 3: how streaming cost grows with output length.

Builtin part: the builtin streams must be linear; `builtin_linear`
measures an 8k vs a 64k transcript at ~4-character chunks and reports the
time ratio (≈ 8 when linear, target ≤ 10).

Per-doubling series (every backend measured in this process, builtin
included): one stream of a 1k, 2k, … 64k-character output, one token per
chunk (the framework adapter's tokenizer; builtin: a framework-free token
approximation), for two shapes: one tool call whose string argument fills
the output (hermes family) and one long reasoning block (qwen3 family).
The figure is the growth of the time per doubling at the largest sizes
measured: ≈ 2 is linear, ≈ 4 quadratic. Frameworks that re-parse the whole
text per delta get slow fast, so a series stops once the next size is
projected to exceed a time budget per run, and says where it stopped.
Sizes are measured round-robin, so machine load drifts hit all alike.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

from . import builtin_linear
from ._backends import (
    SETTINGS,
    bridge_stream,
    chunks_for,
    installed,
    make_parser,
    skip_row,
)
from ._corpus import FORMATS, long_reasoning, long_tool_call
from ._timing import Row, Sample, fmt_seconds

SECTION = "scaling"
#: Shape → (family, output builder).
SERIES: dict[str, tuple[str, Callable[[int], str]]] = {
    "tool-call arguments": ("hermes", long_tool_call),
    "long reasoning": ("qwen3", long_reasoning),
}
LINEAR_MAX = 2.5  # builtin target per doubling (2 is exactly linear)


def _series(backend: str, shape: str, quick: bool) -> Row:
    family, build = SERIES[shape]
    fmt = FORMATS[family]
    name = f"{backend}:{family} stream, {shape}: growth per doubling"
    parser, spec = make_parser(backend, fmt)
    if parser is None:
        return skip_row(SECTION, name, spec)
    name = f"{spec} stream, {shape}: growth per doubling"
    sizes = [1000 * 2**i for i in range(1, 5)] if quick else [1000 * 2**i for i in range(7)]
    repeat, budget_s = (2, 1.0) if quick else (3, 8.0)
    stream = bridge_stream(parser, fmt)
    kept: list[tuple[int, list[tuple[str, tuple[int, ...] | None]]]] = []
    samples: list[Sample] = []
    stopped = ""
    # Pass 1: grow until the next size would blow the budget.
    for size in sizes:
        chunks = chunks_for(parser, build(size))
        start = time.perf_counter()
        try:
            stream(chunks)
        except Exception as exc:
            stopped = f"raised at {size // 1000}k: {type(exc).__name__}: {exc}"
            break
        took = time.perf_counter() - start
        kept.append((size, chunks))
        samples.append(Sample(f"{size // 1000}k", [took]))
        growth = took / samples[-2].runs[0] if len(samples) > 1 else 2.0
        projected = took * max(growth, 2.0)
        if size != sizes[-1] and projected > budget_s:
            stopped = f"stopped before {2 * size // 1000}k: projected {projected:.1f}s per run (budget {budget_s:g}s)"
            break
    # Pass 2: more runs, round-robin over the sizes kept.
    for _ in range(repeat - 1):
        for (_size, chunks), sample in zip(kept, samples, strict=True):
            start = time.perf_counter()
            stream(chunks)
            sample.runs.append(time.perf_counter() - start)
    if len(samples) < 2:
        return skip_row(SECTION, name, stopped or "fewer than two sizes measured")
    growth = [b.min / a.min for a, b in itertools.pairwise(samples)]
    top = growth[-1]
    is_builtin = backend == "builtin"
    verdict = "linear" if top < LINEAR_MAX else ("quadratic" if top >= 3.2 else "superlinear")
    return Row(
        SECTION,
        name,
        top,
        "x",
        target=f"≈ 2 (≤ {LINEAR_MAX:g})" if is_builtin else "",
        met=None if quick or not is_builtin else top <= LINEAR_MAX,
        raw=" · ".join(f"{s.label} {fmt_seconds(s.min)}" for s in samples)
        + f" → ×{' ×'.join(f'{g:.2f}' for g in growth)} ({verdict})"
        + (f"; {stopped}" if stopped else ""),
        detail={
            "backend": backend,
            "family": family,
            "shape": shape,
            "sizes": [s for s, _ in kept],
            "chunks": [len(c) for _, c in kept],
            "samples": [s.as_dict() for s in samples],
            "growth_per_doubling": growth,
            "exponent_top": math.log2(top) if top > 0 else None,
            "verdict": verdict,
            "stopped": stopped,
        },
    )


def run(quick: bool) -> list[Row]:
    rows: list[Row] = []
    if "builtin" in SETTINGS.backends:
        rows.extend(builtin_linear.rows(quick))
        rows.extend(builtin_linear.oneshot_rows(quick))
    for backend in SETTINGS.backends:
        if not installed(backend):
            rows.append(skip_row(SECTION, f"{backend}: per-doubling series", "not installed"))
            continue
        for shape in SERIES:
            try:
                rows.append(_series(backend, shape, quick))
            except Exception as exc:  # one backend's failure must not hide the others' figures
                rows.append(skip_row(SECTION, f"{backend} {shape}", f"raised {type(exc).__name__}: {exc}"))
    return rows

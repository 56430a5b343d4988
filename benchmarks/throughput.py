"""Section 4: backend speed — builtin vs vLLM vs SGLang on the same formats and the same chunks.

Every backend is used through parsebridge (what a user runs), on the same
transcripts, cut into the same chunks (the framework adapter's tokenizer,
one token per chunk, when a framework is measured in this process; a
framework-free approximation otherwise). Backends are timed round-robin in
one process, so their ratio is measured side by side.

Figures: transcripts/s one-shot, chunks/s streamed, and builtin's speed as a
multiple of each framework's. Targets (issue 13): builtin ≥ 5× the fastest
framework on every family measured, streamed (the "fastest" figure is the
smallest builtin/framework ratio, see `summarize`), and builtin streamed
≤ 2× the pass-through floor.
"""

from __future__ import annotations

import math
from typing import Any

from ._backends import (
    FRAMEWORKS,
    SETTINGS,
    bridge_oneshot,
    bridge_stream,
    chunks_for,
    installed_frameworks,
    make_parser,
    skip_row,
)
from ._corpus import FORMATS, Format
from ._timing import Row, Sample, calibrate, describe, measure_many

SECTION = "throughput"
#: A parser that parses nothing, streamed beside builtin: the per-chunk cost every parsebridge stream pays.
FLOOR_TARGET = "benchmarks._floor:PassThroughToolParser"
FLOOR_SPEC = "python:passthrough"
FLOOR_FAMILY = "hermes"
#: Families streamed beside the floor (the floor parses nothing, so any family's chunks do).
FLOOR_FAMILIES = ("hermes", "llama3_json", "deepseek_v3", "qwen3", "deepseek_r1")
TARGET = 5.0
FLOOR_MAX = 2.0
FAMILIES = ("hermes", "llama3_json", "deepseek_v3", "qwen3", "deepseek_r1")
#: Families where the builtin speed target applies, streamed: every family measured.
TARGET_FAMILIES = FAMILIES


def _check(result: Any) -> str:
    """What a parse found (so a backend that parses nothing cannot look fast unnoticed)."""
    calls = getattr(result, "tool_calls", None)
    if calls is not None:
        return f"{len(calls)} calls"
    return "reasoning" if getattr(result, "reasoning", None) else "no reasoning"


def _family_rows(fmt: Format, backends: list[str], quick: bool) -> list[Row]:
    repeat, run_s = (3, 0.02) if quick else (15, 0.08)
    parsers: dict[str, Any] = {}
    rows: list[Row] = []
    for backend in backends:
        parser, spec = make_parser(backend, fmt)
        if parser is None:
            rows.append(skip_row(SECTION, f"{backend}:{fmt.family}", spec))
        else:
            parsers[spec] = parser
    if not parsers:
        return rows
    if fmt.family in FLOOR_FAMILIES:
        import parsebridge as pb

        parsers[FLOOR_SPEC] = pb.get_tool_parser(f"python:{FLOOR_TARGET}")
    # One chunking for all: the first framework parser's tokenizer if there is one.
    chunker = next((p for s, p in parsers.items() if s.partition(":")[0] in FRAMEWORKS), None)
    chunked = [chunks_for(chunker, t) for t in fmt.transcripts]
    n_chunks = sum(len(c) for c in chunked)
    n_texts = len(fmt.transcripts)
    chunking = "framework tokenizer, 1 token/chunk" if chunker is not None else "approx. tokens (≤4 chars)"

    for mode in ("one-shot", "streamed"):
        fns = {}
        checks: dict[str, str] = {}
        for spec, parser in parsers.items():
            if mode == "one-shot":
                one = bridge_oneshot(parser, fmt)
                fns[spec] = lambda one=one: [one(t) for t in fmt.transcripts]
            else:
                many = bridge_stream(parser, fmt)
                fns[spec] = lambda many=many: [many(c) for c in chunked]
        usable = {}
        for spec, fn in fns.items():
            try:
                results = fn()
                checks[spec] = ", ".join(_check(r) for r in results)
                usable[spec] = fn
            except Exception as exc:
                rows.append(skip_row(SECTION, f"{spec} {mode}", f"raised {type(exc).__name__}: {exc}"))
        if not usable:
            continue
        numbers = {spec: calibrate(fn, run_s) for spec, fn in usable.items()}
        samples = measure_many(usable, repeat=repeat, numbers=numbers)
        per = n_texts if mode == "one-shot" else n_chunks
        unit = "transcripts/s" if mode == "one-shot" else "chunks/s"
        for spec, sample in samples.items():
            beside = (
                f" (beside {chunker.spec})" if chunker is not None and spec.startswith("builtin:") else ""
            )
            rows.append(
                Row(
                    SECTION,
                    f"{spec} {mode}{beside}",
                    per / sample.min,
                    unit,
                    raw=describe(sample) + f" per {n_texts} transcripts ({n_chunks} chunks)",
                    detail={
                        "family": fmt.family,
                        "mode": mode,
                        "sample": sample.as_dict(),
                        "found": checks[spec],
                        "chunking": chunking,
                        "transcripts": n_texts,
                        "chunks": n_chunks,
                    },
                )
            )
        rows.extend(_ratio_rows(fmt, mode, samples, quick))
    return rows


def _ratio_rows(fmt: Format, mode: str, samples: dict[str, Sample], quick: bool) -> list[Row]:
    builtin = next((s for spec, s in samples.items() if spec.startswith("builtin:")), None)
    if builtin is None:
        return []
    out = []
    floor = samples.get(FLOOR_SPEC)
    if floor is not None:
        over = builtin.min / floor.min
        out.append(
            Row(
                SECTION,
                f"builtin:{fmt.family} {mode} cost over the protocol floor",
                over,
                "x",
                target=f"≤ {FLOOR_MAX:g}" if mode == "streamed" else "",
                met=None if quick or mode != "streamed" else over <= FLOOR_MAX,
                raw=describe(builtin, floor),
                detail={"family": fmt.family, "mode": mode, "floor": FLOOR_TARGET},
            )
        )
    for spec, sample in samples.items():
        if spec.partition(":")[0] not in FRAMEWORKS:
            continue
        speedup = sample.min / builtin.min
        targeted = mode == "streamed" and fmt.family in TARGET_FAMILIES
        out.append(
            Row(
                SECTION,
                f"builtin vs {spec} {mode} speed",
                speedup,
                "x",
                target=f"≥ {TARGET:g}" if targeted else "",
                met=None if quick or not targeted else speedup >= TARGET,
                raw=describe(builtin, sample),
                detail={
                    "family": fmt.family,
                    "mode": mode,
                    "framework": spec.partition(":")[0],
                    "framework_spec": spec,
                    "median_ratio": sample.median / builtin.median,
                    "targeted": targeted,
                },
            )
        )
    return out


def run(quick: bool) -> list[Row]:
    frameworks, rows = installed_frameworks(SECTION)
    # builtin is always measured: alone here, or as the side-by-side reference beside a framework.
    if "builtin" not in SETTINGS.backends and not frameworks:
        return rows
    backends = ["builtin", *frameworks]
    for family in ("hermes", "qwen3") if quick else FAMILIES:
        rows.extend(_family_rows(FORMATS[family], backends, quick))
    return rows


def summarize(rows: list[Row], quick: bool) -> list[Row]:
    """Builtin vs the *fastest* framework: the smallest builtin/framework ratio per family (after merging)."""
    out = []
    for family in TARGET_FAMILIES:
        ratios = [
            r
            for r in rows
            if r.section == SECTION
            and r.name.startswith("builtin vs ")
            and r.detail.get("family") == family
            and r.detail.get("mode") == "streamed"
            and not math.isnan(r.value)
        ]
        if not ratios:
            continue
        worst = min(ratios, key=lambda r: r.value)
        out.append(
            Row(
                SECTION,
                f"builtin vs fastest framework, {family} streamed",
                worst.value,
                "x",
                target=f"≥ {TARGET:g}",
                met=None if quick else worst.value >= TARGET,
                raw=f"fastest: {worst.detail.get('framework_spec')} ({len(ratios)} frameworks measured)",
                detail={"family": family, "fastest": worst.detail.get("framework_spec")},
            )
        )
    return out

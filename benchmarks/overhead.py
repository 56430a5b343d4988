"""Section 2: what parsebridge adds on top of calling a framework parser directly.

For each framework and format, the same transcripts are parsed two ways,
alternately in one process: through `pb.get_*_parser(...)` (guard, adapter,
translation, accumulation) and through the framework calls the adapter makes,
written out in `_direct_<framework>.py` (same tokenizer, request fields,
chunks and token ids). Overhead = parsebridge time / direct time − 1, on the
medians of many alternating rounds (the minima's ratio is in the detail).

Each timed sample repeats the family's transcripts until it lasts about
`SAMPLE_S` (a quarter second), so a few microseconds of scheduler jitter are
small against it even for the cheapest parsers. Beside every ratio the raw
column prints its *spread* (``±``): the ratio on the even rounds against the
ratio on the odd rounds, i.e. how much the figure moves between two runs of
the same code. An overhead closer to its target than its spread is noise, not
a regression.

Targets: ≤ 10 % one-shot, ≤ 15 % streamed (per token), on the median ratio.
Quick mode checks no targets.

Streamed rows also give the *delta floor*: the direct loop plus one
`StreamDelta` built per chunk (the cheapest way parsebridge builds one), timed
in the same rounds. A bridge whose `feed` returns a `StreamDelta` cannot cost
less than that; it shows how much of a streamed figure the protocol itself
takes, whatever the adapter does.

Profile one case: ``python -m benchmarks.overhead vllm hermes [stream]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from ._backends import (
    Chunk,
    DirectUnavailable,
    bridge_oneshot,
    bridge_stream,
    chunks_for,
    direct_driver,
    installed,
    make_parser,
    measured_frameworks,
    skip_row,
)
from ._corpus import FORMATS, Format
from ._timing import Row, Sample, calibrate, describe, measure_many, median_ratio, ratio, spread

SECTION = "overhead"
TARGETS = {"one-shot": 0.10, "streamed": 0.15}
#: Seconds one timed sample lasts (the transcripts repeated until it does), and rounds per figure.
SAMPLE_S, ROUNDS = 0.25, 20
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


def run(quick: bool) -> list[Row]:
    repeat, run_s = (4, 0.02) if quick else (ROUNDS, SAMPLE_S)
    families = ("hermes", "qwen3") if quick else FAMILIES
    rows: list[Row] = []
    for backend in measured_frameworks():
        if not installed(backend):
            rows.append(skip_row(SECTION, f"{backend}: all formats", "not installed"))
            continue
        for family in families:
            fmt = FORMATS[family]
            try:
                cases, spec, n_chunks, floor = _cases(backend, fmt)
            except Exception as exc:
                cases, spec, n_chunks, floor = {}, f"{backend}:{family}: {type(exc).__name__}: {exc}", 0, None
            if not cases:
                rows.append(skip_row(SECTION, f"{backend}:{family}", spec))
                continue
            for mode, (through_pb, direct) in cases.items():
                try:
                    through_pb(), direct()  # warm caches (tokenizer, regexes, lazy imports) for both
                    number = calibrate(direct, run_s)
                    timed = {"pb": through_pb, "direct": direct}
                    if mode == "streamed" and floor is not None:
                        timed["delta floor"] = floor
                    samples = measure_many(timed, repeat=repeat, numbers=dict.fromkeys(timed, number))
                    pb_s, direct_s = samples["pb"], samples["direct"]
                    floor_s: Sample | None = samples.get("delta floor")
                except Exception as exc:
                    rows.append(skip_row(SECTION, f"{spec} {mode}", f"raised {type(exc).__name__}: {exc}"))
                    continue
                over = median_ratio(pb_s, direct_s) - 1
                moves = spread(pb_s, direct_s)
                per = n_chunks if mode == "streamed" else len(fmt.transcripts)
                added_us = (pb_s.median - direct_s.median) / max(per, 1) * 1e6
                target = TARGETS[mode]
                rows.append(
                    Row(
                        SECTION,
                        f"{spec} {mode} overhead",
                        over * 100,
                        "%",
                        target=f"≤ {target:.0%}",
                        met=None if quick else over <= target,
                        raw=f"±{moves * 100:.1f} % spread · "
                        + describe(pb_s, direct_s)
                        + f" per {len(fmt.transcripts)} transcripts × {number}"
                        + (f"; +{added_us:.1f}µs/chunk" if mode == "streamed" else "")
                        + (
                            f"; delta floor +{(median_ratio(floor_s, direct_s) - 1) * 100:.1f} %"
                            if floor_s is not None
                            else ""
                        ),
                        detail={
                            "backend": backend,
                            "family": family,
                            "mode": mode,
                            "transcripts": len(fmt.transcripts),
                            "chunks": n_chunks,
                            "added_us_per_chunk_or_transcript": added_us,
                            "parsebridge": pb_s.as_dict(),
                            "direct": direct_s.as_dict(),
                            "ratio_min": ratio(pb_s, direct_s),
                            "ratio_median": median_ratio(pb_s, direct_s),
                            "spread": moves,
                            "repeats_per_sample": number,
                            **(
                                {
                                    "delta_floor": floor_s.as_dict(),
                                    "delta_floor_pct": (median_ratio(floor_s, direct_s) - 1) * 100,
                                }
                                if floor_s is not None
                                else {}
                            ),
                        },
                    )
                )
    return rows


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
    sys.exit(_profile(sys.argv[1:]))

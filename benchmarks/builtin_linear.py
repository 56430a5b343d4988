"""Builtin streaming is linear: an 8k vs a 64k transcript at ~4-character chunks.

`python -m benchmarks.builtin_linear [--quick]` prints min/median per size and
the ratio big/small, per transcript shape; a linear stream gives ≈ 8 (the
size ratio), the issue's target is ≤ ~10, a quadratic one gives ≈ 64.
`benchmarks.scaling` reuses `rows()` for the results table.

Shapes: "long arguments" (one hermes call whose arguments fill the
transcript — where re-parsing parsers go quadratic), "many calls" (the
transcript filled with small calls and text between them), and a llama3
plain JSON answer, which the stream must hold whole (it could still turn
into a call) — the held buffer must grow without re-copying.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable

from parsebridge.formats import hermes

from ._timing import Row, Sample, fmt_seconds, measure_pair, ratio

CHUNK = 4
TARGET = 10.0


def hermes_long_arguments(size: int) -> str:
    """One call whose arguments (strings with escapes, nested lists) make the text ~`size` chars."""
    items: list[dict[str, object]] = []
    text = ""
    while len(text) < size:
        i = len(items)
        items.append({"id": i, "note": f'line {i}: "quoted" \\ é 😀 {hermes.END}', "vals": [i, i * 2, None]})
        text = "Let me run that.\n" + hermes.render_call("bulk_update", {"items": items})
    return text


def hermes_many_calls(size: int) -> str:
    """Small calls with a little text between them until ~`size` chars."""
    parts: list[str] = []
    total, i = 0, 0
    while total < size:
        call = hermes.render_call(f"tool_{i % 7}", {"q": f"query {i}", "n": i, "ok": True}, ascii_only=True)
        piece = f"Step {i}.\n{call}\n"
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)


def llama3_plain_json(size: int) -> str:
    """A JSON answer with no "name": undecided until its end, so the whole span is held."""
    item_len = len(json.dumps({"i": 1000, "text": "some value ✓"}, ensure_ascii=False)) + 2
    items = [{"i": i, "text": "some value ✓"} for i in range(max(1, size // item_len))]
    return json.dumps({"result": items}, ensure_ascii=False)


#: (parser spec, shape, builder): the hermes shapes the issue asks for, plus the held-span case.
SHAPES: list[tuple[str, str, Callable[[int], str]]] = [
    ("builtin:hermes", "long arguments", hermes_long_arguments),
    ("builtin:hermes", "many calls", hermes_many_calls),
    ("builtin:llama3_json", "plain JSON answer (held until its end)", llama3_plain_json),
]


def stream_through(spec: str, text: str, chunk: int = CHUNK) -> Callable[[], object]:
    """A callable that streams `text` through a fresh stream of `spec` at `chunk`-char pieces."""
    from parsebridge.adapters.builtin import BuiltinBackend

    name = spec.partition(":")[2]
    parser = BuiltinBackend().create_tool_parser(name, tools=None)
    chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]

    def run() -> object:
        s = parser.stream()
        for c in chunks:
            s.feed(c)
        return s.finish()

    return run


def cpu_ratio(a: Callable[[], object], b: Callable[[], object], repeat: int) -> float:
    """b/a on process CPU time (min of alternated runs): on a loaded shared machine the wall
    clock penalises the longer run (it is preempted more), CPU time does not."""
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for k, fn in enumerate((a, b)):
            gc.collect()
            start = time.process_time()
            fn()
            best[k] = min(best[k], time.process_time() - start)
    return best[1] / best[0] if best[0] else float("inf")


def measure_shape(
    spec: str, build: Callable[[int], str], small: int, big: int, repeat: int
) -> tuple[Sample, Sample, float, float]:
    a, b = build(small), build(big)
    run_a, run_b = stream_through(spec, a), stream_through(spec, b)
    sa, sb = measure_pair(run_a, run_b, repeat=repeat, labels=(f"{len(a)} chars", f"{len(b)} chars"))
    return sa, sb, ratio(sb, sa), cpu_ratio(run_a, run_b, repeat)


def rows(quick: bool) -> list[Row]:
    """One row per shape: the big/small time ratio (target ≤ 10; thresholds only when not quick)."""
    small, big = (2_000, 16_000) if quick else (8_000, 64_000)
    repeat = 3 if quick else 9
    out: list[Row] = []
    for spec, shape, build in SHAPES:
        sa, sb, r, r_cpu = measure_shape(spec, build, small, big, repeat)
        out.append(
            Row(
                "scaling",
                f"{spec} stream {shape}: {big // 1000}k/{small // 1000}k time ratio",
                r,
                "x",
                target=f"≤ {TARGET:g} (linear ≈ {big / small:g})",
                met=None if quick else r <= TARGET,
                detail={"small": sa.as_dict(), "big": sb.as_dict(), "chunk_chars": CHUNK, "cpu_ratio": r_cpu},
                raw=" · ".join(
                    f"{x.label}: min {fmt_seconds(x.min)} / median {fmt_seconds(x.median)}" for x in (sa, sb)
                )
                + f" · CPU-time ratio {r_cpu:.2f}",
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.builtin_linear", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="2k/16k, fewer repeats")
    ns = ap.parse_args(argv)
    for row in rows(ns.quick):
        small, big = row.detail["small"], row.detail["big"]
        print(row.name)
        for s in (small, big):
            print(
                f"  {s['label']:>14}: min {s['min_s'] * 1000:8.2f} ms   median {s['median_s'] * 1000:8.2f} ms"
            )
        verdict = "" if row.met is None else ("  (met)" if row.met else "  (NOT met)")
        print(f"  ratio {row.value:.2f}  target {row.target}{verdict}")
        print(f"  CPU-time ratio {row.detail['cpu_ratio']:.2f} (robust to machine load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

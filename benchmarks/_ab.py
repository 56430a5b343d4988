"""The A/B driver the `ab_*` benchmarks share: two source trees, alternating worker processes.

A benchmark module gives its corpus and a worker (which times the corpus with the tree on
``PYTHONPATH`` and prints one JSON object of seconds per figure); `main` runs the rounds,
old and new in alternating order so drifting machine load hits both alike, and prints
each figure's minimum per side with the new/old ratio and their geometric mean.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._timing import least_cpu

ROOT = Path(__file__).resolve().parent.parent


def _run(module: str, tree: str, corpus_path: str, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    cmd = [sys.executable, "-m", module, "--worker", corpus_path, "--repeat", str(repeat)]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def engine_corpus(backend: str, transcripts: int) -> dict[str, dict[str, Any]]:
    """spec → one entry per format of the overhead benchmark an engine backend has a parser for:
    kind, spec, tools, reasoning start, each format's transcripts tiled to `transcripts`, and their
    chunks (text, ids) as the adapter's own tokenizer cuts them (one token a chunk, as an engine
    streams). Needs the framework in the interpreter that builds it."""
    from benchmarks._backends import chunks_for, make_parser  # (imports the framework)
    from benchmarks._corpus import FORMATS

    out: dict[str, dict[str, Any]] = {}
    for fmt in FORMATS.values():
        parser, spec = make_parser(backend, fmt)
        if parser is None:
            continue
        texts = (fmt.transcripts * transcripts)[:transcripts]
        out[spec] = {
            "kind": fmt.kind,
            "spec": spec,
            "tools": fmt.tools if fmt.kind == "tool" else None,
            "started": fmt.reasoning_started,
            "texts": texts,
            "chunks": [chunks_for(parser, t) for t in texts],
        }
    return out


def time_readings(
    parser: Any, texts: list[str], chunked: list[list[Any]], kwargs: dict[str, Any], repeat: int, *, ids: bool
) -> tuple[float, float]:
    """The least CPU seconds of reading every text one-shot, and every chunked text streamed: chunks
    of text, or (text, token ids) pairs fed together where `ids` (the engines that take token ids)."""

    def oneshot() -> None:
        for text in texts:
            parser.parse(text, **kwargs)

    def streamed_texts() -> None:
        for chunks in chunked:
            stream = parser.stream(**kwargs)
            feed = stream.feed
            for chunk in chunks:
                feed(chunk)
            stream.finish()

    def streamed_ids() -> None:
        for chunks in chunked:
            stream = parser.stream(**kwargs)
            feed = stream.feed
            for text, token_ids in chunks:
                feed(text, token_ids)
            stream.finish()

    return least_cpu(oneshot, repeat), least_cpu(streamed_ids if ids else streamed_texts, repeat)


def report(runs: dict[str, list[dict[str, float]]]) -> tuple[list[dict[str, Any]], float]:
    """Rows (min of each side, new/old) printed side by side; the geometric mean of the ratios."""
    rows = []
    for key in runs["old"][0]:
        old = min(run[key] for run in runs["old"])
        new = min(run[key] for run in runs["new"])
        rows.append({"figure": key, "old_s": old, "new_s": new, "new_over_old": new / old if old else None})
    width = max(len(r["figure"]) for r in rows)
    print(f"{'figure':<{width}}  {'old ms':>9}  {'new ms':>9}  new/old")
    for row in rows:
        print(
            f"{row['figure']:<{width}}  {row['old_s'] * 1e3:9.2f}  {row['new_s'] * 1e3:9.2f}  {row['new_over_old']:.3f}"
        )
    ratios = [r["new_over_old"] for r in rows if r["new_over_old"]]
    return rows, math.exp(sum(math.log(x) for x in ratios) / len(ratios))


def main(
    module: str,
    doc: str,
    corpus: Callable[[], dict[str, dict[str, Any]]],
    worker: Callable[[str, int], None],
    argv: list[str] | None = None,
) -> None:
    """The command line of benchmark `module` (``benchmarks.ab_builtin``…): options, rounds, report."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--old", help="the old tree's src directory")
    ap.add_argument("--new", default="src", help="the new tree's src directory (default: src)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per worker and figure (min kept)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", default="", help="time only the figures whose key holds this text")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.repeat)
        return
    if not args.old:
        ap.error("--old is required")
    name = module.rpartition(".")[2]
    corpus_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"{name}_corpus_{os.getpid()}.json"
    everything = corpus()
    chosen = {key: entry for key, entry in everything.items() if args.only in key}
    if not chosen:
        ap.error(f"--only {args.only!r} names no figure; the figures: {', '.join(everything)}")
    corpus_path.write_text(json.dumps(chosen), encoding="utf-8")
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    try:
        for r in range(args.rounds):
            for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
                runs[side].append(_run(module, getattr(args, side), str(corpus_path), args.repeat))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        corpus_path.unlink(missing_ok=True)
    rows, geo = report(runs)
    print(
        f"geometric mean new/old: {geo:.3f} over {len(rows)} figures ({args.rounds} rounds, min of each side)"
    )
    if args.json:
        meta = {
            "old": args.old,
            "new": args.new,
            "rounds": args.rounds,
            "repeat": args.repeat,
            "only": args.only,
        }
        payload = {"meta": meta, "geomean_new_over_old": geo, "rows": rows}
        Path(args.json).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")

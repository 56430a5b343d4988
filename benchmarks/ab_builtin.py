"""A/B of the builtin parsers between two source trees: is a restructuring any slower?

    python -m benchmarks.ab_builtin --old /tmp/old/src [--new src] [--rounds 7] [--json out.json]

Each round runs one worker process per tree, in alternating order (old, new, new,
old, ...), so drifting machine load hits both alike; a worker imports parsebridge
from its tree (``PYTHONPATH``) and times, on process CPU time, every family's
corpus one-shot and streamed: the throughput benchmark's formats (hermes,
llama3_json, deepseek_v3, qwen3, deepseek_r1) and the bundled fixtures of the
families whose engines are restructured, tiled to a size worth timing, cut into
approximate tokens (markers whole, words in <=4-char pieces). The figure per family
and mode is the minimum over rounds of each side; printed side by side with the
new/old ratio (< 1: the new tree is faster).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: Families whose fixtures are timed beside the throughput formats (the engines issue 31 touches).
FIXTURE_FAMILIES = (
    "qwen3_coder",
    "seed_oss",
    "glm45",
    "minimax_m2",
    "longcat",
    "hermes",
    "inkling",
    "kimi_k2",
    "plamo3",
    "deepseek_v31",
    "deepseek_v32",
    "step3",
    "kimi_k3",
    "minicpm5",
)
#: Characters of output per family corpus (fixtures tiled until this size).
CORPUS_CHARS = 40_000


def _tiled(texts: list[str]) -> list[str]:
    tiled: list[str] = []
    while sum(map(len, tiled)) < CORPUS_CHARS:
        tiled.extend(texts)
    return tiled


def corpus() -> dict[str, dict[str, Any]]:
    """family → kind, spec, texts, chunked texts (built once, by the parent, from this tree)."""
    from benchmarks._backends import approx_tokens
    from benchmarks._corpus import FORMATS
    from parsebridge.conformance.transcripts import bundled_transcripts

    out: dict[str, dict[str, Any]] = {}
    for name, fmt in FORMATS.items():
        out[f"bench:{name}"] = {
            "kind": fmt.kind,
            "spec": f"builtin:{name}",
            "started": fmt.reasoning_started,
            "texts": _tiled(fmt.transcripts),
        }
    for name in FIXTURE_FAMILIES:
        texts = [t.output for t in bundled_transcripts(families=[name], kinds=["tool"]) if t.output]
        out[f"fixtures:{name}"] = {
            "kind": "tool",
            "spec": f"builtin:{name}",
            "started": None,
            "texts": _tiled(texts),
        }
    for entry in out.values():
        entry["chunks"] = [[c for c, _ in approx_tokens(t)] for t in entry["texts"]]
    return out


def _cpu(fn: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def worker(path: str, repeat: int) -> None:
    """Time every corpus entry one-shot and streamed with the parsebridge on sys.path."""
    import parsebridge as pb

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    result: dict[str, float] = {}
    for key, entry in data.items():
        kwargs = {} if entry["started"] is None else {"reasoning_started": entry["started"]}
        if entry["kind"] == "tool":
            parser = pb.get_tool_parser(entry["spec"])
        else:
            parser = pb.get_reasoning_parser(entry["spec"])
        texts, chunked = entry["texts"], entry["chunks"]

        def oneshot(parser: Any = parser, texts: list[str] = texts, kwargs: dict[str, Any] = kwargs) -> None:
            for text in texts:
                parser.parse(text, **kwargs)

        def streamed(
            parser: Any = parser, chunked: list[list[str]] = chunked, kwargs: dict[str, Any] = kwargs
        ) -> None:
            for chunks in chunked:
                stream = parser.stream(**kwargs)
                feed = stream.feed
                for chunk in chunks:
                    feed(chunk)
                stream.finish()

        result[f"{key} one-shot"] = _cpu(oneshot, repeat)
        result[f"{key} streamed"] = _cpu(streamed, repeat)
    print(json.dumps(result))


def _run(tree: str, corpus_path: str, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(tree)}
    here = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "benchmarks.ab_builtin", "--worker", corpus_path, "--repeat", str(repeat)]
    out = subprocess.run(cmd, env=env, cwd=here, capture_output=True, text=True, check=True).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="the old tree's src directory")
    ap.add_argument("--new", default="src", help="the new tree's src directory (default: src)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per worker and figure (min kept)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", default="", help="time only the corpora whose key holds this text")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.repeat)
        return
    if not args.old:
        ap.error("--old is required")
    corpus_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ab_builtin_corpus_{os.getpid()}.json"
    chosen = {key: entry for key, entry in corpus().items() if args.only in key}
    corpus_path.write_text(json.dumps(chosen), encoding="utf-8")
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    try:
        for r in range(args.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for side in order:
                runs[side].append(_run(getattr(args, side), str(corpus_path), args.repeat))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        corpus_path.unlink(missing_ok=True)
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
    geo = 1.0
    for x in ratios:
        geo *= x
    geo **= 1 / len(ratios)
    print(
        f"geometric mean new/old: {geo:.3f} over {len(ratios)} figures ({args.rounds} rounds, min of each side)"
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


if __name__ == "__main__":
    main()

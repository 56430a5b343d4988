"""``python -m parsebridge.conformance.consensus [--family F …] [--json] [--write-baseline] [--markdown PATH]``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .baseline import framework_versions, write_baseline
from .check import check, frameworks_missing, load_reviewed, run_consensus, summary
from .corpus import consensus_corpus
from .page import render_page
from .voices import add_voices, voice_versions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m parsebridge.conformance.consensus", description=__doc__)
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    ap.add_argument("--json", action="store_true", help="print every outcome as JSON Lines")
    ap.add_argument("--write-baseline", action="store_true", help="record today's disagreements")
    ap.add_argument(
        "--markdown", metavar="PATH", help="write the docs page (docs/consensus.md) from this run"
    )
    args = ap.parse_args(argv)
    missing = frameworks_missing()
    if missing:
        print(
            f"error: the consensus check reads every case with vLLM and SGLang ({missing}); "
            "install both with: parsebridge install-framework all",
            file=sys.stderr,
        )
        return 2
    corpus = consensus_corpus(args.family)
    t0 = time.perf_counter()
    outcomes = run_consensus(corpus)
    elapsed = time.perf_counter() - t0
    voices = voice_versions()
    t1 = time.perf_counter()
    add_voices(outcomes, corpus)
    voices_elapsed = time.perf_counter() - t1
    if args.json:
        for o in outcomes:
            print(json.dumps(o.to_dict(), ensure_ascii=False))
    reviewed = load_reviewed()
    verdict = check(outcomes, reviewed)
    rows = summary(outcomes)
    print(f"{'family':28} {'cases':>6} {'consensus':>9} {'disagree':>8}", file=sys.stderr)
    for fam, row in rows.items():
        print(f"{fam:28} {row['cases']:6} {row['consensus']:9} {row['disagree']:8}", file=sys.stderr)
    total = {k: sum(r[k] for r in rows.values()) for k in ("cases", "consensus", "disagree")}
    print(f"{'total':28} {total['cases']:6} {total['consensus']:9} {total['disagree']:8}", file=sys.stderr)
    print(
        f"{elapsed:.1f} s (+{voices_elapsed:.1f} s for {', '.join(v for v, r in voices.items() if r) or 'no'}"
        f" voices); unexplained {len(verdict.unexplained)}, stale {len(verdict.stale)}",
        file=sys.stderr,
    )
    for line in verdict.changed:
        print(f"changed: {line}", file=sys.stderr)
    if args.markdown:
        page = render_page(outcomes, reviewed, verdict, framework_versions(), voices)
        Path(args.markdown).write_text(page, encoding="utf-8")
        print(f"wrote {args.markdown}", file=sys.stderr)
    if args.write_baseline:
        path = Path(__file__).with_name("consensus.yaml")
        write_baseline(path, outcomes, reviewed)
        print(f"wrote {path}", file=sys.stderr)
        return 0
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

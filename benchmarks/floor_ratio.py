"""Every builtin tool format streamed beside the pass-through floor, in one process.

    python -m benchmarks.floor_ratio [--rounds 5] [--only FAMILY] [--profile] [--json out.json]

Per tool family: its bundled tool fixtures (with their tools, so arguments are typed
by schema as a user's would be), tiled to a size worth timing and cut into approximate
tokens (markers whole, words in <=4-char pieces), streamed through builtin and through
`benchmarks._floor:PassThroughToolParser` (a parser that parses nothing) on the same
chunks, alternately, on process CPU time; the figure is min(builtin) / min(floor) per round, and the table
gives the median ratio over rounds with its spread (lowest–highest round), the ratio of
the two sides' minimum over all rounds, both sides' µs per chunk, and builtin's one-shot parse of
the same texts over the floor's stream (the reading itself, with no per-chunk cost). The
throughput section measures three families the same way on a framework's tokens;
this covers every family builtin has. `--profile` adds, per family, the share of
builtin's streamed time spent in each kind of work (cProfile, own time); `--steps` counts the
chunks that take a full step of the machine; `--call-floor` times `PassThroughCallParser`.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._backends import approx_tokens
from benchmarks._timing import least_cpu

FLOOR = "python:benchmarks._floor:PassThroughToolParser"
#: Every chunk one argument fragment of one call: what a chunk inside arguments costs at least.
CALL_FLOOR = "python:benchmarks._floor:PassThroughCallParser"
#: Characters of output per family (fixtures tiled until this size).
CORPUS_CHARS = 20_000


def corpus(only: str = "") -> dict[str, tuple[list[dict[str, Any]], list[list[str]]]]:
    """family → (tools, chunked texts) for every builtin tool family with bundled tool fixtures."""
    from parsebridge.adapters.builtin import TOOL_PARSERS
    from parsebridge.conformance.transcripts import bundled_transcripts

    out: dict[str, tuple[list[dict[str, Any]], list[list[str]]]] = {}
    for family in TOOL_PARSERS:
        if only and only != family:
            continue
        transcripts = [t for t in bundled_transcripts(families=[family], kinds=["tool"]) if t.output]
        transcripts = [t for t in transcripts if t.family == family]
        if not transcripts:
            continue
        tools: dict[str, dict[str, Any]] = {}
        for t in transcripts:
            for tool in t.tools:
                tools.setdefault(json.dumps(tool, sort_keys=True), tool)
        texts: list[str] = []
        while sum(map(len, texts)) < CORPUS_CHARS:
            texts.extend(t.output for t in transcripts)
        out[family] = (list(tools.values()), [[c for c, _ in approx_tokens(t)] for t in texts])
    return out


def streamer(parser: Any, chunked: list[list[str]]) -> Callable[[], None]:
    def run() -> None:
        for chunks in chunked:
            stream = parser.stream()
            feed = stream.feed
            for chunk in chunks:
                feed(chunk)
            stream.finish()

    return run


def rounds_of(
    builtin: Callable[[], None], floor: Callable[[], None], rounds: int, repeat: int
) -> list[tuple[float, float]]:
    """(builtin s, floor s) per round, the two timed alternately (order flips each round)."""
    out = []
    for r in range(rounds):
        pair = (builtin, floor) if r % 2 == 0 else (floor, builtin)
        times = [least_cpu(fn, repeat) for fn in pair]
        b, f = times if r % 2 == 0 else times[::-1]
        out.append((b, f))
    return out


#: Kinds of work a builtin stream does: (kind, files, functions) by where the profiler finds the
#: time (own time; C methods by name, e.g. "<method 'find' of 'str' objects>"). First match wins;
#: the rest is the format machine's steps.
KINDS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "stream life (create, flush, assemble)",
        ("protocol/streams.py", "protocol/errors.py"),
        ("__init__", "_flushed_result", "finish", "flush", "_end", "_at_end", "_settle_held_ws", "stream"),
    ),
    ("raw text", (), ("_keep_raw", "set_raw_text")),
    ("feed's shortcuts", (), ("feed",)),
    ("deltas", ("protocol/models.py",), ("_release", "_seal", "_args")),
    ("marker search", ("markers.py",), ("'find'", "'startswith'", "'endswith'", "'search'", "'fullmatch'")),
    ("JSON and values", ("json_text.py", "schema_values.py", "call_objects.py", "/json/"), ("_json",)),
)


def profile_shares(run: Callable[[], None]) -> list[tuple[str, float]]:
    """(kind of work, share of own time) for one profiled run (`KINDS`; the rest: the machine's
    steps and `feed`), largest first. The profiler inflates small functions: shares, not times."""
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    by_kind: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in stats.items():
        if "benchmarks/" in filename:
            continue
        kind = next(
            (
                k
                for k, files, funcs in KINDS
                if any(f in filename for f in files) or any(f in func for f in funcs)
            ),
            "machine steps",
        )
        by_kind[kind] = by_kind.get(kind, 0.0) + tottime
    total = sum(by_kind.values()) or 1.0
    return sorted(((k, v / total) for k, v in by_kind.items()), key=lambda kv: -kv[1])


def step_shares(only: str = "") -> dict[str, dict[str, Any]]:
    """family → the share of its chunks that take a full step of the machine (`_feed`); the
    rest `feed` decides in place. Counted, not timed (formats with a stream of their own: 0)."""
    import parsebridge as pb
    from parsebridge.adapters.builtin.engines.scan import BuiltinToolStream

    full = BuiltinToolStream._feed
    count = [0]

    def counted(self: Any, text: str, token_ids: Any, final: bool = False) -> Any:
        count[0] += not final
        return full(self, text, token_ids, final)

    out = {}
    BuiltinToolStream._feed = counted  # type: ignore[method-assign]
    try:
        for family, (tools, chunked) in corpus(only).items():
            count[0] = 0
            streamer(pb.get_tool_parser(f"builtin:{family}", tools=tools or None), chunked)()
            n = sum(map(len, chunked))
            out[family] = {
                "chunks": n,
                "streams": len(chunked),
                "full_steps": count[0],
                "share": count[0] / n,
            }
    finally:
        BuiltinToolStream._feed = full  # type: ignore[method-assign]
    return out


def _other(args: argparse.Namespace) -> None:
    """`--steps` or `--call-floor`."""
    import parsebridge as pb

    if args.steps:
        shares = step_shares(args.only)
        for family, row in shares.items():
            print(f"{family:<16} {row['share']:4.0%} of {row['chunks']} chunks take a full step")
        if args.json:
            Path(args.json).write_text(json.dumps(shares, indent=1) + "\n", encoding="utf-8")
        return
    _tools, chunked = corpus(args.only or "hermes")[args.only or "hermes"]
    call, floor = (streamer(pb.get_tool_parser(spec), chunked) for spec in (CALL_FLOOR, FLOOR))
    rs = [b / f for b, f in rounds_of(call, floor, args.rounds, args.repeat)]
    print(f"call floor over floor: {statistics.median(rs):.2f}x ({min(rs):.2f}–{max(rs):.2f})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per side and round (min kept)")
    ap.add_argument("--only", default="", help="one family")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--call-floor", action="store_true", help="only: the call floor over the floor")
    ap.add_argument("--steps", action="store_true", help="only: the share of chunks taking a full step")
    args = ap.parse_args(argv)
    if args.steps or args.call_floor:
        return _other(args)
    import parsebridge as pb

    floor_parser = pb.get_tool_parser(FLOOR)
    rows = []
    for family, (tools, chunked) in corpus(args.only).items():
        parser = pb.get_tool_parser(f"builtin:{family}", tools=tools or None)
        builtin, floor = streamer(parser, chunked), streamer(floor_parser, chunked)
        pairs = rounds_of(builtin, floor, args.rounds, args.repeat)
        texts = ["".join(chunks) for chunks in chunked]
        oneshot = least_cpu(lambda parser=parser, texts=texts: [parser.parse(t) for t in texts], args.repeat)
        rs = [b / f for b, f in pairs]
        n = sum(map(len, chunked))
        best_b, best_f = min(b for b, _ in pairs), min(f for _, f in pairs)
        row: dict[str, Any] = {
            "family": family,
            "streams": len(chunked),
            "chunks": n,
            "median": statistics.median(rs),
            "low": min(rs),
            "high": max(rs),
            "of_mins": best_b / best_f,
            "oneshot_over_floor": oneshot / best_f,
            "builtin_us_per_chunk": best_b / n * 1e6,
            "floor_us_per_chunk": best_f / n * 1e6,
        }
        line = (
            f"{family:<16} {row['median']:5.2f}x  ({row['low']:.2f}–{row['high']:.2f})"
            f"  mins {row['of_mins']:5.2f}x"
            f"  {row['builtin_us_per_chunk']:.2f} / {row['floor_us_per_chunk']:.2f} µs/chunk"
            f"  one-shot {row['oneshot_over_floor']:.2f}x"
        )
        if args.profile:
            row["profile"] = profile_shares(builtin)
            line += "\n    " + ", ".join(f"{k} {v:.0%}" for k, v in row["profile"])
        print(line, flush=True)
        rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())

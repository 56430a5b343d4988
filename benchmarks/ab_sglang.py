"""A/B of the SGLang adapter between two source trees: is a change any slower?

    python -m benchmarks.ab_sglang --old /tmp/old/src [--new src] [--rounds 7] [--only deepseek-r1]

The SGLang twin of `ab_vllm` (same harness: one worker process per tree and
round, in alternating order, so drifting machine load hits both alike; process
CPU time; per figure the minimum over rounds of each side, printed side by side
with the new/old ratio, < 1: the new tree is faster). Timed: the overhead
benchmark's formats through ``sglang:NAME`` one-shot and streamed, cut by the
adapter's own tokenizer (one token a chunk, as an engine streams), each
format's transcripts tiled to `TRANSCRIPTS`. Needs SGLang in the interpreter
that runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import _ab as ab

#: Transcripts per corpus: each format's transcripts tiled to this many (a stream is set up per transcript).
TRANSCRIPTS = 100


def corpus() -> dict[str, dict[str, Any]]:
    """figure → how to build the parser, texts, chunks (text, ids) — built once, by the parent."""
    return ab.engine_corpus("sglang", TRANSCRIPTS)


def worker(path: str, repeat: int) -> None:
    """Time every corpus entry one-shot and streamed with the parsebridge on sys.path."""
    import parsebridge as pb

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    result: dict[str, float] = {}
    for key, entry in data.items():
        if entry["kind"] == "tool":
            parser: Any = pb.get_tool_parser(entry["spec"], tools=entry["tools"])
            kwargs: dict[str, Any] = {}
        else:
            parser = pb.get_reasoning_parser(entry["spec"])
            kwargs = {} if entry["started"] is None else {"reasoning_started": entry["started"]}
        # warm (tokenizer, regexes, lazy imports) before timing
        ab.time_readings(parser, entry["texts"], entry["chunks"], kwargs, 1, ids=True)
        one, streamed = ab.time_readings(parser, entry["texts"], entry["chunks"], kwargs, repeat, ids=True)
        result[f"{key} one-shot"], result[f"{key} streamed"] = one, streamed
    print(json.dumps(result))


def main(argv: list[str] | None = None) -> None:
    ab.main("benchmarks.ab_sglang", __doc__ or "", corpus, worker, argv)


if __name__ == "__main__":
    main()

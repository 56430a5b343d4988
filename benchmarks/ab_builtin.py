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

import json
from pathlib import Path
from typing import Any

from benchmarks import _ab as ab

#: Families whose fixtures are timed beside the throughput formats: every builtin engine with a
#: state machine of its own.
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
    "gemma4",
    "mistral",
    "pythonic",
    "xlam",
    "apertus",
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
        one, streamed = ab.time_readings(parser, entry["texts"], entry["chunks"], kwargs, repeat, ids=False)
        result[f"{key} one-shot"], result[f"{key} streamed"] = one, streamed
    print(json.dumps(result))


def main(argv: list[str] | None = None) -> None:
    ab.main("benchmarks.ab_builtin", __doc__ or "", corpus, worker, argv)


if __name__ == "__main__":
    main()

"""A/B of the vLLM adapter between two source trees: is a restructuring any slower?

    python -m benchmarks.ab_vllm --old /tmp/old/src [--new src] [--rounds 7] [--json out.json]

The vLLM twin of `ab_builtin` (same harness: one worker process per tree and
round, in alternating order, so drifting machine load hits both alike; process
CPU time; per figure the minimum over rounds of each side, printed side by side
with the new/old ratio, < 1: the new tree is faster). Timed: the throughput
benchmark's formats through ``vllm:NAME`` one-shot and streamed, cut by the
adapter's own tokenizer (one token a chunk, with ids, as an engine streams),
once on the installed release's own path (0.33+: `ChatStreamProcessor`) and
once on the re-stated serving loop (``native=False``), plus one pipeline
(qwen3 → hermes). Needs vLLM in the interpreter that runs it.
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
    from benchmarks._backends import chunks_for
    from benchmarks._corpus import FORMATS

    out: dict[str, dict[str, Any]] = {}
    for spec, entry in ab.engine_corpus("vllm", TRANSCRIPTS).items():
        for native in (True, False):  # the chunks are cut once, shared by both paths
            out[f"{spec} {'native' if native else 'loop'}"] = {**entry, "native": native}
    pipe, spec = _pipeline(FORMATS["hermes"].tools)
    if pipe is not None:
        texts = [
            f"{t}\n{c}"
            for t, c in zip(FORMATS["qwen3"].transcripts, FORMATS["hermes"].transcripts, strict=False)
        ]
        texts = (texts * TRANSCRIPTS)[:TRANSCRIPTS]
        out[f"{spec} pipeline"] = {
            "kind": "pipeline",
            "spec": spec,
            "tools": FORMATS["hermes"].tools,
            "started": None,
            "native": True,
            "texts": texts,
            "chunks": [chunks_for(pipe, t) for t in texts],
        }
    return out


def _pipeline(tools: Any) -> tuple[Any, str]:
    """vLLM's own qwen3 → hermes chain (None when this release composes none)."""
    import parsebridge as pb

    pipe = pb.get_pipeline("vllm:qwen3", "vllm:hermes", tools=tools)
    return (
        (pipe, "vllm:qwen3+hermes")
        if type(getattr(pipe, "inner", None)).__name__ == "VllmPipeline"
        else (None, "")
    )


def _parser(entry: dict[str, Any]) -> Any:
    import parsebridge as pb

    if entry["kind"] == "tool":
        return pb.get_tool_parser(entry["spec"], tools=entry["tools"], native=entry["native"])
    if entry["kind"] == "reasoning":
        return pb.get_reasoning_parser(entry["spec"], native=entry["native"])
    return _pipeline(entry["tools"])[0]


def worker(path: str, repeat: int) -> None:
    """Time every corpus entry one-shot and streamed with the parsebridge on sys.path."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    result: dict[str, float] = {}
    for key, entry in data.items():
        parser = _parser(entry)
        kwargs = (
            {}
            if entry["started"] is None or entry["kind"] == "tool"
            else {"reasoning_started": entry["started"]}
        )
        one, streamed = ab.time_readings(parser, entry["texts"], entry["chunks"], kwargs, repeat, ids=True)
        result[f"{key} one-shot"], result[f"{key} streamed"] = one, streamed
    print(json.dumps(result))


def main(argv: list[str] | None = None) -> None:
    ab.main("benchmarks.ab_vllm", __doc__ or "", corpus, worker, argv)


if __name__ == "__main__":
    main()

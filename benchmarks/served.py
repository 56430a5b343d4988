"""What `dynamo:` and `smg:` cost per parse, beside builtin, and what the bridge adds over a bare request.

    python -m benchmarks.served [--rounds N] [--out DIR]   # needs ai-dynamo-runtime and/or smg
    python -m benchmarks.served --render                  # docs/benchmarks.md's block from the stored run

Dynamo's and smg's parsers run only inside their servers (an in-process
frontend, gateway processes), so a parse is an HTTP request to a server whose
model parsebridge plays. Two questions, each answered by timing two things
alternately in one process (round-robin; min and median of the rounds):

* **per parse** — `builtin:`, `dynamo:` and `smg:` parsers of the same family
  on the same text: a one-shot parse, and a stream fed 5 characters a feed
  (per feed). The servers are started and the parser pair registered before
  timing (their start is in the README's cost notes, not here).
* **bridge** — what parsebridge adds over a client talking to the same running
  frontend or gateway directly: a one-shot `parse` beside a bare non-streamed
  request (the same script queued for the engine, the request body built
  beforehand, `http.client` and `json.loads`); a stream fed feed by feed (each
  feed one engine step, fenced so its delta is that step's) beside a bare
  streamed request with every step queued and ``n=1``, read to ``[DONE]``.

The machine is shared: the figures are ratios within a row; absolute times
only say how large the costs are here. Results go to
``benchmarks/results/DATE-served/served.json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import parsebridge as pb
from parsebridge.adapters import get_backend
from parsebridge.formats import hermes, think

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
TOOL_TEXT = (
    f'Let me check the weather for you.{hermes.START}\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}'
    f"\n{hermes.END}"
)
REASONING_TEXT = f"The user asks for 2+2. That is 4, a simple sum.{think.END}The answer is 4."
CASES = (("tool", "hermes", TOOL_TEXT), ("reasoning", "deepseek_r1", REASONING_TEXT))
STEP = 5
SERVED = ("dynamo", "smg")


def chunks(text: str) -> list[str]:
    return [text[i : i + STEP] for i in range(0, len(text), STEP)]


def parser(backend: str, kind: str, family: str) -> Any:
    spec = f"{backend}:{family}"
    return pb.get_tool_parser(spec, TOOLS) if kind == "tool" else pb.get_reasoning_parser(spec)


def stream_through(p: Any, parts: list[str]) -> None:
    s = p.stream()
    for part in parts:
        s.feed(part)
    s.finish()


def race(fns: dict[str, Callable[[], None]], rounds: int) -> dict[str, dict[str, float]]:
    """Each function once per round, in turn; seconds: min and median of the rounds."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():  # warm-up: servers started, pairs registered, caches filled
        fn()
    for n in range(rounds):
        order = list(fns.items())
        for name, fn in order if n % 2 == 0 else order[::-1]:  # neither side always goes first
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: {"min": min(v), "median": statistics.median(v)} for k, v in times.items()}


# ---------------------------------------------------------------- bare requests, no parser object


def _post(port: int, body: bytes, stream: bool) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        if stream:
            for line in resp:
                if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
                    json.loads(line[5:])
        else:
            json.loads(resp.read())
    finally:
        conn.close()


def bare_dynamo(p: Any, text: str, stream: bool) -> Callable[[], None]:
    """A request to the running Dynamo frontend for `p`'s model: the script queued, the body ready."""
    engine = p.engine
    fe, model = engine.model()
    port = fe.ensure()
    steps = [fe.folder.encode(c) for c in (chunks(text) if stream else [text])]

    def run() -> None:
        script = fe.board.open()
        for ids in steps:
            script.put(ids)
        script.end()
        body = {"model": model, "messages": [{"role": "user", "content": script.key}], "stream": stream}
        if engine.tools:
            body["tools"] = engine.tools
        try:
            _post(port, json.dumps(body).encode(), stream)
        finally:
            script.cancel()

    return run


def bare_smg(p: Any, text: str, stream: bool) -> Callable[[], None]:
    """A request to the running smg gateway for `p`'s configuration: the worker's script queued."""
    from parsebridge.adapters.smg import _client, _gateway, _worker

    config = getattr(p, "config", None)
    rt = _gateway.runtime()
    gw = rt.gateway(config)
    tools = _client._tools_payload(config, TOOLS)
    parts = chunks(text) if stream else None

    def run() -> None:
        script = _worker.Script(None if parts else text)
        for part in parts or ():
            script.step(list(part.encode("utf-8")))
        if parts:
            script.end()
        key = rt.worker.register(script)
        body: dict[str, Any] = {"model": "parsebridge", "messages": _worker.prompt_for(key), "stream": stream}
        if tools is not None:
            body["tools"] = tools
        try:
            _post(gw.port, json.dumps(body).encode(), stream)
        finally:
            rt.worker.release(key)

    return run


BARE = {"dynamo": bare_dynamo, "smg": bare_smg}


# ---------------------------------------------------------------- the two tables


def per_parse(available: list[str], rounds: int) -> list[dict[str, Any]]:
    rows = []
    for kind, family, text in CASES:
        parsers = {b: parser(b, kind, family) for b in ["builtin", *available]}
        parts = chunks(text)
        oneshot = race({b: (lambda p=p, t=text: p.parse(t)) for b, p in parsers.items()}, rounds)
        streamed = race({b: (lambda p=p, c=parts: stream_through(p, c)) for b, p in parsers.items()}, rounds)
        for b in parsers:
            rows.append(
                {
                    "kind": kind,
                    "family": family,
                    "backend": b,
                    "oneshot_ms": oneshot[b],
                    "feed_ms": {k: v / len(parts) for k, v in streamed[b].items()},
                    "feeds": len(parts),
                    "oneshot_vs_builtin": oneshot[b]["min"] / oneshot["builtin"]["min"],
                    "feed_vs_builtin": streamed[b]["min"] / streamed["builtin"]["min"],
                }
            )
    return rows


def bridge(available: list[str], rounds: int) -> list[dict[str, Any]]:
    rows = []
    for backend in available:
        for kind, family, text in CASES:
            p = parser(backend, kind, family)
            parts = chunks(text)
            one = race(
                {"bridge": lambda p=p, t=text: p.parse(t), "bare": BARE[backend](p, text, False)}, rounds
            )
            many = race(
                {"bridge": lambda p=p, c=parts: stream_through(p, c), "bare": BARE[backend](p, text, True)},
                rounds,
            )
            rows.append(
                {
                    "backend": backend,
                    "kind": kind,
                    "family": family,
                    "feeds": len(parts),
                    "oneshot": one,
                    "stream": many,
                    "oneshot_ratio": one["bridge"]["min"] / one["bare"]["min"],
                    "stream_ratio": many["bridge"]["min"] / many["bare"]["min"],
                }
            )
    return rows


def markdown(doc: dict[str, Any]) -> str:
    ms, us = 1000.0, 1e6
    lines = [
        f"Run {doc['date']} ({doc['versions']}; load average {doc['load']}, rounds {doc['rounds']},"
        f" {doc['step_chars']} characters a feed).",
        "",
        "| family | backend | one-shot parse, µs (min / median) | × builtin | per feed, µs (min / median) "
        "| × builtin |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in doc["per_parse"]:
        o, f = r["oneshot_ms"], r["feed_ms"]
        lines.append(
            f"| {r['kind']}:{r['family']} | {r['backend']} | {o['min'] * us:.0f} / {o['median'] * us:.0f} "
            f"| {r['oneshot_vs_builtin']:.0f} | {f['min'] * us:.1f} / {f['median'] * us:.1f} "
            f"| {r['feed_vs_builtin']:.0f} |"
        )
    lines += [
        "",
        "| backend | family | one-shot: parse / bare request, ms | ratio | stream of N feeds: fenced feeds /"
        " bare streamed request, ms | ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in doc["bridge"]:
        o, s = r["oneshot"], r["stream"]
        lines.append(
            f"| {r['backend']} | {r['kind']}:{r['family']} | {o['bridge']['min'] * ms:.2f} / "
            f"{o['bare']['min'] * ms:.2f} | {r['oneshot_ratio']:.2f} | {r['feeds']} feeds: "
            f"{s['bridge']['min'] * ms:.1f} / {s['bare']['min'] * ms:.1f} | {r['stream_ratio']:.2f} |"
        )
    return "\n".join(lines) + "\n"


ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RUN = ROOT / "benchmarks" / "results" / "2026-11-27-served" / "served.json"
BEGIN = "<!-- served:begin (python -m benchmarks.served --render) -->"
END = "<!-- served:end -->"


def rendered_doc(run: Path = RUN) -> str:
    """docs/benchmarks.md with its served-backends block written from the run's JSON."""
    doc = DOC.read_text(encoding="utf-8")
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{DOC} lacks the markers {BEGIN!r} … {END!r}")
    block = markdown(json.loads(run.read_text(encoding="utf-8")))
    return f"{head}{BEGIN}\n{block}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", type=Path, default=None, help="folder for served.json (default: none)")
    ap.add_argument("--render", action="store_true", help=f"write docs/benchmarks.md's block from {RUN.name}")
    ap.add_argument("--check", action="store_true", help="exit 1 if that block is not the stored run's")
    args = ap.parse_args(argv)
    if args.render or args.check:
        want = rendered_doc()
        if args.check:
            return 0 if DOC.read_text(encoding="utf-8") == want else 1
        DOC.write_text(want, encoding="utf-8")
        return 0
    available = [b for b in SERVED if get_backend(b).is_available()]
    if not available:
        print("neither ai-dynamo-runtime nor smg is installed: nothing to measure", file=sys.stderr)
        return 2
    doc: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "versions": ", ".join(f"{b} {get_backend(b).version()}" for b in available),
        "rounds": args.rounds,
        "step_chars": STEP,
    }
    load0 = os.getloadavg()[0]
    doc["per_parse"] = per_parse(available, args.rounds)
    doc["bridge"] = bridge(available, args.rounds)
    doc["load"] = f"{load0:.1f} at start, {os.getloadavg()[0]:.1f} at end"
    text = markdown(doc)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "served.json").write_text(json.dumps(doc, indent=1) + "\n")
        (args.out / "served.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

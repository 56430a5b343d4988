"""Dynamo's OpenAI frontend over a scripted engine that plays the probe's model (run as a script).

    python _probe_dynamo.py --port 9000 --tool-parser hermes [--reasoning-parser qwen3]

Dynamo's own HTTP frontend (its Rust chat-completions route, its parsers, its detokenizer)
serves one model, ``probe``, registered with the given parsers; the engine behind it reads the
rendered prompt (the folder's chat template joins the messages' text), finds the probe scenario
the prompt was made from, and streams that scenario's model output one token per step, with a
log probability per token when the request asks for them (``output_options.logprobs``), as an
engine does. Run with ``HOME`` pointing at a scratch folder: Dynamo caches model files there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from _probe_model import output, scenario_in

from parsebridge.adapters._served import model_folder
from parsebridge.adapters.dynamo._compat import get_api
from parsebridge.adapters.dynamo._frontend import all_markers


def _wants_logprobs(request: dict[str, Any]) -> bool:
    options = request.get("output_options") or {}
    return options.get("logprobs") is not None


async def serve(port: int, tool: str | None, reasoning: str | None, style: str) -> None:
    api = get_api()
    folder = model_folder(all_markers())
    runtime = api.runtime(asyncio.get_running_loop())
    server = asyncio.ensure_future(await api.serve_http(runtime, port))

    async def generate(request: dict[str, Any], context: Any = None) -> AsyncIterator[dict[str, Any]]:
        if os.environ.get("PROBE_DYNAMO_DUMP"):
            print(json.dumps(request, default=str)[:2000], file=sys.stderr, flush=True)
        scenario = scenario_in(folder.decode(request.get("token_ids") or []))
        text = output(scenario, style) if scenario is not None else "I do not know this request."
        logprobs = _wants_logprobs(request)
        for token in folder.encode(text):
            step: dict[str, Any] = {"token_ids": [token], "index": 0}
            if logprobs:
                step["log_probs"] = [-0.25]
            yield step
        yield {"token_ids": [], "finish_reason": "stop", "index": 0}

    endpoint = api.endpoint(runtime, "probe", "engine", "generate")
    serving = asyncio.ensure_future(endpoint.serve_endpoint(generate))
    await api.register_model(endpoint, str(folder.path), "probe", api.runtime_config(reasoning, tool))
    await asyncio.wait([server, serving], return_when=asyncio.FIRST_COMPLETED)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tool-parser")
    ap.add_argument("--reasoning-parser")
    ap.add_argument("--style", choices=("native", "json"), default="native")
    args = ap.parse_args()
    asyncio.run(serve(args.port, args.tool_parser, args.reasoning_parser, args.style))


if __name__ == "__main__":
    main()

"""vLLM's chat serving code behind a small HTTP app, playing the probe's model (run as a script).

    python _probe_vllm.py --port 9000 --tool-parser hermes [--reasoning-parser qwen3]

Each request is validated as vLLM's own `ChatCompletionRequest`, and its answer is made by
vLLM's `OpenAIServingChat` (the class behind its ``/v1/chat/completions`` route: its parsers,
`tool_choice` handling, deltas and finish reasons), built with the stand-ins of the server
oracle in tests/serving (`_server_oracle.vllm`) and fed the scripted model's output one token
a step as real `RequestOutput`s: `chat_completion_stream_generator` streams it,
`chat_completion_full_generator` answers at once. Only the prompt rendering and the engine
are ours: the scenario is found in the request's messages. A forced choice's output follows
what vLLM constrains it to for the tool parser (its JSON, or the model's own format).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "serving"))

import uvicorn
from _probe_model import output, scenario_in
from _server_oracle import vllm as oracle
from _server_oracle.common import MODEL, Script
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from parsebridge.adapters import _tokenizers
from parsebridge.formats import tool_format


def tokenizer() -> Any:
    specials = set(tool_format("hermes").markers) | {"<think>", "</think>"}
    return _tokenizers.build_tokenizer(sorted(m for m in specials if m), "qwen")


async def _outputs(script: Script, request_id: str, tok: Any, logprobs: bool) -> Any:
    """`script` as vLLM `RequestOutput`s, with a log probability per token when asked for."""
    from vllm.logprobs import Logprob
    from vllm.outputs import CompletionOutput, RequestOutput

    for text, ids, finish in script.engine_steps():
        probs = [{i: Logprob(-0.25, 1, tok.decode([i]))} for i in ids] if logprobs else None
        out = CompletionOutput(
            index=0, text=text, token_ids=ids, cumulative_logprob=None, logprobs=probs, finish_reason=finish
        )
        yield RequestOutput(
            request_id=request_id,
            prompt=None,
            prompt_token_ids=[],
            prompt_logprobs=None,
            outputs=[out],
            finished=finish is not None,
        )


def build_app(reasoning: str | None, tool: str | None) -> Starlette:
    tok = tokenizer()
    server = oracle.make_server(reasoning, tool, tok)

    def script_for(body: dict[str, Any]) -> Script:
        """One token a step streamed; one step with everything at once otherwise (vLLM's engine
        sends a non-streamed request only its final output)."""
        text = " ".join(str(m.get("content") or "") for m in body.get("messages") or [])
        scenario = scenario_in(text)
        if scenario is None:
            unknown = "I do not know this request."
            return Script(chunks=[(unknown, tok.encode(unknown, add_special_tokens=False))])
        style = oracle.forced_output_format(tool, body.get("tools") or [], body.get("tool_choice"))
        forced = body.get("tool_choice") not in (None, "auto", "none")
        raw = output(
            scenario, "native" if style == "native" else "json", think=reasoning == "qwen3", forced=forced
        )
        steps = [(c.text, list(c.token_ids)) for c in _tokenizers.token_chunks(tok, raw, 1)]
        if not body.get("stream"):
            steps = [(raw, [i for _, ids in steps for i in ids])]
        return Script(chunks=steps)

    async def chat(request: Request) -> Response:
        body = await request.json()
        try:
            req = oracle._request_class()(**body)
        except Exception as exc:  # vLLM's own validation: a 400 as its server gives
            return JSONResponse({"error": {"message": str(exc)[:500], "type": "BadRequestError"}}, 400)
        request_id = "chatcmpl-probe"
        steps = _outputs(script_for(body), request_id, tok, bool(req.logprobs))
        meta = oracle._metadata(request_id)
        if req.stream:
            gen = server.chat_completion_stream_generator(
                req, steps, request_id, MODEL, [], tok, meta, **oracle.stream_kwargs(server, req)
            )
            return StreamingResponse(gen, media_type="text/event-stream")
        answer = await server.chat_completion_full_generator(
            req, steps, request_id, MODEL, [], tok, meta, **oracle.full_kwargs(server, req, tok)
        )
        return JSONResponse(answer.model_dump(exclude_none=True), 200 if hasattr(answer, "choices") else 400)

    async def models(request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "vllm"}]}
        )

    return Starlette(
        routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models)]
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tool-parser")
    ap.add_argument("--reasoning-parser")
    args = ap.parse_args()
    app = build_app(args.reasoning_parser, args.tool_parser)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

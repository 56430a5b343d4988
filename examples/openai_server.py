"""A small OpenAI-compatible ``/v1/chat/completions`` server over a scripted fake engine.

The "engine" replays a transcript's raw output (a JSON Lines file, one
object per line with ``id`` and ``output``, optionally ``tools``,
``expected``, ``reasoning_started_in_prompt``, … — the format of
``parsebridge conformance --transcripts``) in chunks, and parsebridge's `OutputProcessor` turns it into OpenAI responses,
streamed (SSE) or not. Any OpenAI client can talk to it::

    python examples/openai_server.py --transcripts src/parsebridge/conformance/fixtures/tool-hermes.jsonl \\
        --reasoning-parser builtin:qwen3 --tool-call-parser builtin:hermes --port 8000

The transcript is chosen per request by the ``X-Transcript-Id`` header, else by
the last user message (its whole text, or the first transcript id it mentions).
Engine chunking: ``--chunk-size N`` characters, or ``--token-chunks K`` tokens
a step: the transcript's recorded ``token_texts``/``token_ids`` when it has
them, else the output tokenised with the backend's own tokenizer (framework
parsers need token ids, as a real engine sends), else K characters. ``--cumulative``
makes the engine send all text so far at every step, as some engines do.

The parser integration is the two lines marked "(1)" and "(2)" below.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import parsebridge
from parsebridge import ParsebridgeError
from parsebridge.serving import EngineOutput, OutputProcessor, error_body

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - import guard for a clear message
    raise SystemExit(
        f"this example needs the server extra: pip install '.[server]' in the parsebridge clone ({exc})"
    ) from exc

log = logging.getLogger("parsebridge.example")


class ExampleInputError(ValueError):
    """A --transcripts file this server cannot replay."""


def load_transcripts(path: Path) -> dict[str, dict[str, Any]]:
    """Transcripts by id, from a JSON Lines file (blank lines and ``#`` comments skipped).

    A file that is missing, not UTF-8, not JSON Lines of objects or holds none raises
    `ExampleInputError` naming it, so the server says so in one line instead of a traceback
    (or, for an empty file, serving with nothing to replay)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExampleInputError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ExampleInputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    out: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise ExampleInputError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise ExampleInputError(
                f"{path}:{number}: a transcript is a JSON object, not {type(obj).__name__}"
            )
        tid = str(obj.get("id") or f"line-{number}")
        out[tid] = obj
    if not out:
        raise ExampleInputError(f"{path}: no transcripts in it (one JSON object a line, with id and output)")
    return out


class FakeEngine:
    """Replays transcript outputs in chunks, like an inference engine streaming a generation."""

    def __init__(
        self,
        processor: OutputProcessor,
        chunk_size: int = 4,
        token_chunks: int = 0,
        cumulative: bool = False,
        delay: float = 0.0,
    ) -> None:
        self.processor = processor
        self.chunk_size = max(1, chunk_size)
        self.token_chunks = token_chunks
        self.cumulative = cumulative
        self.delay = delay

    def pieces(self, transcript: dict[str, Any]) -> list[tuple[str, list[int] | None]]:
        """The output split the way this engine emits it: (text, token ids) per step."""
        text: str = transcript.get("output", "")
        texts: Sequence[str] | None = transcript.get("token_texts")
        ids: Sequence[int] | None = transcript.get("token_ids")
        if self.token_chunks > 0 and texts and "".join(texts) == text:
            k = self.token_chunks
            return [
                ("".join(texts[i : i + k]), list(ids[i : i + k]) if ids and len(ids) == len(texts) else None)
                for i in range(0, len(texts), k)
            ]
        if self.token_chunks > 0:  # tokenised with the backend's own tokenizer (characters if it has none)
            pieces = self.processor.engine_chunks(text, self.token_chunks, transcript.get("tools"))
            return [(t, list(ids) if ids is not None else None) for t, ids in pieces] or [("", None)]
        size = self.chunk_size
        return [(text[i : i + size], None) for i in range(0, len(text), size)] or [("", None)]

    async def generate(self, transcript: dict[str, Any], n: int = 1) -> AsyncIterator[EngineOutput]:
        """Steps for `n` choices, interleaved; the last step of each choice carries its finish reason."""
        pieces = self.pieces(transcript)
        finish = transcript.get("finish_reason") or "stop"
        so_far = [""] * n
        ids_so_far: list[list[int]] = [[] for _ in range(n)]
        for step, (text, ids) in enumerate(pieces):
            last = step == len(pieces) - 1
            for index in range(n):
                if self.delay:
                    await asyncio.sleep(self.delay)
                if self.cumulative:
                    so_far[index] += text
                    ids_so_far[index] += ids or []
                    yield EngineOutput(
                        so_far[index],
                        list(ids_so_far[index]) if ids else None,
                        index,
                        finish if last else None,
                    )
                else:
                    yield EngineOutput(text, ids, index, finish if last else None)


def pick_transcript(
    transcripts: dict[str, dict[str, Any]], body: dict[str, Any], header: str | None
) -> dict[str, Any] | None:
    """The transcript a request asks for: header, else the last user message (whole, or an id inside)."""
    if header:
        return transcripts.get(header)
    last = ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            last = str(content or "")
    if last.strip() in transcripts:
        return transcripts[last.strip()]
    for tid in sorted(transcripts, key=len, reverse=True):
        if tid in last:
            return transcripts[tid]
    return None


def request_problem(body: Any) -> str | None:
    """Why a request body cannot be served (the client's mistake: a 400), or None."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    if not isinstance(body.get("messages"), list):
        return "messages must be an array of message objects"
    n = body.get("n", 1)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        return f"n must be a whole number from 1 up, not {n!r}"
    if body.get("stream_options") is not None and not isinstance(body["stream_options"], dict):
        return "stream_options must be an object"
    if body.get("chat_template_kwargs") is not None and not isinstance(body["chat_template_kwargs"], dict):
        return "chat_template_kwargs must be an object"
    return None


def build_app(
    processor: OutputProcessor, transcripts: dict[str, dict[str, Any]], engine: FakeEngine
) -> Starlette:
    """The Starlette app: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health``."""

    def error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
        return JSONResponse(
            {"error": {"message": message, "type": kind, "param": None, "code": status}}, status
        )

    async def chat(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return error(400, "body is not JSON")
        problem = request_problem(body)
        if problem is not None:
            return error(400, problem)
        transcript = pick_transcript(transcripts, body, request.headers.get("x-transcript-id"))
        if transcript is None:
            return error(
                404, f"no transcript matches this request; known ids: {', '.join(sorted(transcripts))}"
            )
        n = int(body.get("n") or 1)
        tools = body.get("tools")
        tool_choice = body.get("tool_choice", "auto" if tools else "none")
        started = transcript.get("reasoning_started_in_prompt")
        template_kwargs = body.get("chat_template_kwargs")
        try:
            # (2) per request: fresh state from the shared processor. A real server passes its
            # rendered prompt (text or token ids); the transcript may record one, or just the flag.
            # chat_template_kwargs, as vLLM's and SGLang's servers take them ({"enable_thinking": False}
            # turns Qwen3's thinking off), reach the parsers: they decide where reasoning starts.
            req = processor.request(
                chat_template_kwargs=template_kwargs,
                tools=tools,
                tool_choice=tool_choice,
                parallel_tool_calls=body.get("parallel_tool_calls"),
                reasoning_started=True if started is True else None,
                prompt=transcript.get("prompt"),
                prompt_token_ids=transcript.get("prompt_token_ids"),
                request_id=f"chatcmpl-{uuid.uuid4().hex[:24]}",
                model=body.get("model") or processor.model,
            )
        except (ValueError, ParsebridgeError) as exc:
            return error(400, str(exc))
        steps = len(engine.pieces(transcript))
        usage = {"prompt_tokens": 1, "completion_tokens": steps, "total_tokens": 1 + steps}

        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            stream = req.stream(n)
            return StreamingResponse(
                stream.asse(engine.generate(transcript, n), usage=usage if include_usage else None),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Request-Id": req.request_id},
            )

        text = transcript.get("output", "")
        try:
            response = req.response([text] * n, transcript.get("finish_reason") or "stop", usage=usage)
        except ParsebridgeError as exc:
            log.error("request %s failed: %s", req.request_id, exc)
            return JSONResponse(error_body(exc, req.request_id), 500)
        return JSONResponse(response)

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": processor.model, "object": "model", "created": int(time.time())}],
            }
        )

    async def health(request: Request) -> Response:
        reasoning, tool = processor.specs
        return JSONResponse({"status": "ok", "reasoning_parser": reasoning, "tool_call_parser": tool})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def make_arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parsebridge.add_parser_arguments(ap)  # (1) the parser-selection flags
    ap.add_argument(
        "--transcripts",
        type=Path,
        required=True,
        help="JSON Lines file of transcripts: one object per line with id and output "
        "(optionally tools, expected, reasoning_started_in_prompt)",
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--model", default="parsebridge-fake")
    ap.add_argument("--chunk-size", type=int, default=4, help="characters per engine step")
    ap.add_argument(
        "--token-chunks", type=int, default=0, help="tokens per engine step (0: use --chunk-size characters)"
    )
    ap.add_argument("--cumulative", action="store_true", help="the engine sends all text so far at each step")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds between engine steps")
    ap.add_argument(
        "--forced-format",
        choices=["json", "native", "server"],
        default=None,
        help="how required/named output is read (default: as the tool parser's server does, else json)",
    )
    ap.add_argument(
        "--named-finish-reason",
        choices=["tool_calls", "stop"],
        default=None,
        help="finish reason after a named call (default: the tool parser's server's, else tool_calls)",
    )
    ap.add_argument("--log-level", default="info")
    return ap


def main(argv: Sequence[str] | None = None) -> None:
    args = make_arg_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        processor = OutputProcessor.from_args(  # (1) one processor for the whole server
            args,
            model=args.model,
            cumulative=args.cumulative,
            forced_format=args.forced_format,
            named_finish_reason=args.named_finish_reason,
        )
        transcripts = load_transcripts(args.transcripts)
    except (ParsebridgeError, ExampleInputError) as exc:  # a typo in a flag, a bad file: one line, exit 2
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    engine = FakeEngine(processor, args.chunk_size, args.token_chunks, args.cumulative, args.delay)
    app = build_app(processor, transcripts, engine)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower())


if __name__ == "__main__":
    main()

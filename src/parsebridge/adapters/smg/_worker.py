"""The engine behind smg's gateway: a scripted SGLang-scheduler gRPC worker in this process.

smg parses only inside its gateway, and only for gRPC workers (it detokenizes
the token ids a worker streams, then runs its Rust parsers). This worker
speaks the SGLang scheduler service from `smg-grpc-proto` on 127.0.0.1 and
answers each `Generate` with token ids parsebridge chose:

* one-shot: the ids of the whole text in the final message;
* streamed: one engine step per `feed`, each put on the request's queue by
  the stream that owns it; after every step a one-token *tick* goes out on a
  second choice (``n=2``, index 1). The gateway handles a worker's stream in
  order, so what it sends for choice 0 between two ticks is what that step
  produced: the deterministic feed-to-delta attribution (`_client`).

Requests find their script by a key the prompt carries (`prompt_for`); the
tokenizer is one token per byte (`_served.model_folder` with no markers),
so token ids are the UTF-8 bytes and need no tokenizer here. grpcio and smg-grpc-proto are
imported when the worker starts, never at import of parsebridge.
"""

from __future__ import annotations

import itertools
import queue
import re
import threading
from collections.abc import Iterator
from typing import Any

#: Token id of the end-of-sequence token (`_served.model_folder(())` puts it after the 256 bytes).
EOS_ID = 256
#: The tick: one byte that every smg parser passes straight through on a choice of its own.
TICK_IDS = (46,)  # "."
_KEY_RE = re.compile(r"pb-req-\d+")
_END = None
#: Seconds a streamed request waits for the next step before the worker gives up on it.
STEP_TIMEOUT = 300.0


def encode(text: str) -> list[int]:
    """Token ids of `text` for the one-token-per-byte tokenizer."""
    return list(text.encode("utf-8"))


class Script:
    """What one request is answered with: the whole text, or steps fed one by one."""

    def __init__(self, text: str | None = None) -> None:
        self.text = text
        self.steps: queue.Queue[list[int] | None] = queue.Queue()

    def step(self, ids: list[int]) -> None:
        self.steps.put(ids)

    def end(self) -> None:
        self.steps.put(_END)


class ScriptedWorker:
    """One gRPC server on a free 127.0.0.1 port; requests keyed by `prompt_for` keys."""

    def __init__(self, tokenizer_dir: str) -> None:
        self.tokenizer_dir = tokenizer_dir
        self._scripts: dict[str, Script] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: Any = None
        self.port = 0

    def start(self) -> int:
        import os
        from concurrent import futures

        # grpc logs an INFO line at every fork of a process that has a server (conformance --jobs).
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

        import grpc
        from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pbg

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="pb-smg-worker"))
        pbg.add_SglangSchedulerServicer_to_server(_servicer(self), server)
        self.port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._server = server
        return self.port

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop(grace=None).wait(5)
        with self._lock:
            for script in self._scripts.values():
                script.end()
            self._scripts.clear()

    def register(self, script: Script) -> str:
        key = f"pb-req-{next(self._ids)}"
        with self._lock:
            self._scripts[key] = script
        return key

    def release(self, key: str) -> None:
        with self._lock:
            script = self._scripts.pop(key, None)
        if script is not None:
            script.end()

    def script_for(self, input_ids: Any) -> Script | None:
        text = bytes(i for i in input_ids if i < 256).decode("utf-8", "replace")
        found = _KEY_RE.findall(text)
        with self._lock:
            return self._scripts.get(found[-1]) if found else None


def prompt_for(key: str) -> list[dict[str, str]]:
    """The chat messages that carry a script's key to the worker."""
    return [{"role": "user", "content": key}]


def _servicer(worker: ScriptedWorker) -> Any:
    """A `SglangSchedulerServicer` answering from `worker`'s scripts (class made once grpc is imported)."""
    from smg_grpc_proto.generated import sglang_scheduler_pb2 as pb
    from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pbg

    class Servicer(pbg.SglangSchedulerServicer):  # type: ignore[misc, name-defined]
        def Generate(self, request: Any, context: Any) -> Iterator[Any]:
            prompt = len(request.tokenized.input_ids)
            script = worker.script_for(request.tokenized.input_ids)
            rid = request.request_id
            if script is None or script.text is not None or not request.stream:
                ids = encode(script.text or "") if script is not None else encode("ok")
                yield from _whole(pb, rid, ids, prompt, bool(request.stream))
                return
            yield from _stepped(pb, rid, script, prompt, request.sampling_params.n == 2, context)

        def HealthCheck(self, request: Any, context: Any) -> Any:
            return pb.HealthCheckResponse(healthy=True, message="ok")

        def GetModelInfo(self, request: Any, context: Any) -> Any:
            path = worker.tokenizer_dir
            return pb.GetModelInfoResponse(
                model_path=path,
                tokenizer_path=path,
                is_generation=True,
                served_model_name="parsebridge",
                max_context_length=1 << 20,
                vocab_size=EOS_ID + 1,
                eos_token_ids=[EOS_ID],
                max_req_input_len=1 << 20,
                model_type="llama",
                architectures=["LlamaForCausalLM"],
            )

        def GetServerInfo(self, request: Any, context: Any) -> Any:
            return pb.GetServerInfoResponse(server_type="grpc")

        def Abort(self, request: Any, context: Any) -> Any:
            return pb.AbortResponse(success=True)

        def GetLoads(self, request: Any, context: Any) -> Any:
            return pb.GetLoadsResponse()

        def GetTokenizer(self, request: Any, context: Any) -> Iterator[Any]:
            return _unimplemented(context)

        def SubscribeKvEvents(self, request: Any, context: Any) -> Iterator[Any]:
            return _unimplemented(context)

    return Servicer()


def _unimplemented(context: Any) -> Iterator[Any]:
    """An UNIMPLEMENTED status without grpc logging a traceback (the generated stubs raise)."""
    import grpc

    context.set_code(grpc.StatusCode.UNIMPLEMENTED)
    context.set_details("not served by parsebridge's scripted worker")
    return iter(())


def _whole(pb: Any, rid: str, ids: list[int], prompt: int, stream: bool) -> Iterator[Any]:
    """A request answered at once: one step with every id (streamed) or the final message only."""
    if stream and ids:
        chunk = pb.GenerateStreamChunk(token_ids=ids, prompt_tokens=prompt, completion_tokens=len(ids))
        yield pb.GenerateResponse(request_id=rid, chunk=chunk)
    yield pb.GenerateResponse(
        request_id=rid,
        complete=pb.GenerateComplete(
            output_ids=[] if stream else ids,
            finish_reason="stop",
            prompt_tokens=prompt,
            completion_tokens=len(ids),
        ),
    )


def _stepped(pb: Any, rid: str, script: Script, prompt: int, ticks: bool, context: Any) -> Iterator[Any]:
    """A streamed request answered step by step as its stream feeds, a tick after every step."""
    done = 0
    while True:
        try:
            ids = script.steps.get(timeout=STEP_TIMEOUT)
        except queue.Empty:
            return
        if ids is _END or not context.is_active():
            break
        done += len(ids)
        chunk = pb.GenerateStreamChunk(token_ids=ids, prompt_tokens=prompt, completion_tokens=done, index=0)
        yield pb.GenerateResponse(request_id=rid, chunk=chunk)
        if ticks:
            tick = pb.GenerateStreamChunk(
                token_ids=TICK_IDS, prompt_tokens=prompt, completion_tokens=1, index=1
            )
            yield pb.GenerateResponse(request_id=rid, chunk=tick)
    for index in (0, 1) if ticks else (0,):
        complete = pb.GenerateComplete(
            finish_reason="stop", prompt_tokens=prompt, completion_tokens=done, index=index
        )
        yield pb.GenerateResponse(request_id=rid, complete=complete)

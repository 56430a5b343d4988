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

Requests find their script on the worker's `ScriptBoard` (`_served.steps`, the
one Dynamo's engine uses too) by the key the prompt carries (`prompt_for`); the
gRPC server's threads take the steps (`Script.blocking_steps`). A worker
serves one model folder (`_served.model_folder`: the approximate one, one
token per byte, or a real tokenizer's): its `GetModelInfo` names it, and smg's
gateway detokenizes what the worker streams with that tokenizer, so each
folder has a worker of its own (`_gateway.Runtime.worker_for`). grpcio and
smg-grpc-proto are imported when the worker starts, never at import of
parsebridge.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._served.model_folder import ModelFolder
from .._served.steps import Script, ScriptBoard

#: The tick's text: one character every smg parser passes straight through on a choice of its own.
TICK = "."
#: Seconds a streamed request waits for the next step before the worker gives up on it.
STEP_TIMEOUT = 300.0


class ScriptedWorker:
    """One gRPC server on a free 127.0.0.1 port; requests keyed by `prompt_for` keys."""

    def __init__(self, folder: ModelFolder) -> None:
        #: The model folder its gateways read: named in `GetModelInfo` (the gateway detokenizes with
        #: it), and the prompts' ids are read back with it to find their script.
        self.folder = folder
        self.tokenizer_dir = str(folder.path)
        #: The tick's token ids in this folder's vocabulary.
        self.tick = folder.encode(TICK)
        #: The scripts of the requests in flight (their keys are what the prompts carry).
        self.board = ScriptBoard("smg")
        self._server: Any = None
        self._pool: Any = None
        self.port = 0

    def start(self) -> int:
        import os
        from concurrent import futures

        # grpc logs an INFO line at every fork of a process that has a server (conformance --jobs).
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

        import grpc
        from smg_grpc_proto.generated import sglang_scheduler_pb2_grpc as pbg

        self._pool = futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="pb-smg-worker")
        server = grpc.server(self._pool)
        pbg.add_SglangSchedulerServicer_to_server(_servicer(self), server)
        self.port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self._server = server
        return self.port

    def stop(self) -> None:
        server, self._server = self._server, None
        pool, self._pool = self._pool, None
        if server is not None:
            server.stop(grace=None).wait(5)
        self.board.cancel_all()  # a request still waiting for a step ends: its pool thread is free
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def script_for(self, input_ids: Any) -> Script | None:
        return self.board.take(self.folder.decode(list(input_ids)))


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
            if script is None or not request.stream:  # a readiness probe (no script), or a one-shot
                ids = worker.folder.encode("ok") if script is None else _every_step(script)
                yield from _whole(pb, rid, ids, prompt, bool(request.stream))
                return
            ticks = worker.tick if request.sampling_params.n == 2 else None
            yield from _stepped(pb, rid, script, prompt, ticks, context)

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
                vocab_size=worker.folder.vocab_size,
                eos_token_ids=[worker.folder.eos_id],
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


def _every_step(script: Script) -> list[int]:
    """A one-shot request's token ids: every step its script was given before it was sent."""
    return [i for item in script.blocking_steps(STEP_TIMEOUT) if not isinstance(item, str) for i in item]


def _stepped(
    pb: Any, rid: str, script: Script, prompt: int, ticks: list[int] | None, context: Any
) -> Iterator[Any]:
    """A streamed request answered step by step as its stream feeds, a tick after every step."""
    done = 0
    for ids in script.blocking_steps(STEP_TIMEOUT):
        if isinstance(ids, str) or not context.is_active():
            break  # the end (a finish reason, or the stream was abandoned)
        done += len(ids)
        chunk = pb.GenerateStreamChunk(token_ids=ids, prompt_tokens=prompt, completion_tokens=done, index=0)
        yield pb.GenerateResponse(request_id=rid, chunk=chunk)
        if ticks:
            tick = pb.GenerateStreamChunk(token_ids=ticks, prompt_tokens=prompt, completion_tokens=1, index=1)
            yield pb.GenerateResponse(request_id=rid, chunk=tick)
    else:  # no step for STEP_TIMEOUT seconds: the caller is gone
        return
    for index in (0, 1) if ticks else (0,):
        complete = pb.GenerateComplete(
            finish_reason="stop", prompt_tokens=prompt, completion_tokens=done, index=index
        )
        yield pb.GenerateResponse(request_id=rid, complete=complete)

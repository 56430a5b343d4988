"""What differs between the supported `ai-dynamo-runtime` releases, found by looking, not by version.

Every release from 0.8 on serves an OpenAI frontend in-process (`make_engine`
+ `run_input(runtime, "http", engine)`) over models registered on a
`DistributedRuntime` with the "mem" store and the "tcp" request plane. What
moved: how an endpoint is named (``runtime.endpoint("ns.comp.ep")`` from 1.0;
``namespace().component().endpoint()`` before), the registration function
(`register_model` from 1.0; `register_llm` before), `WorkerType` (required
from 1.3), `make_engine`'s first argument (the runtime, from 1.0), and NATS (connected
unless ``enable_nats=False`` before 1.3).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from typing import Any

from .._common import framework_logs_wanted, version_tuple


@dataclass(frozen=True)
class DynamoApi:
    """The installed release's entry points and the shape of each call."""

    version: str
    core: Any
    llm: Any
    runtime_cls: Any
    register: Any
    worker_type: Any
    engine_takes_runtime: bool
    path_endpoints: bool

    @property
    def streams(self) -> bool:
        """Whether the frontend honours the engine's choice index, which the stream fences need.

        Measured: 1.3.1, 1.4.2, 1.5.1 and 1.6.1 do; 1.0.2 and 0.8.1 put every engine output on choice 0
        (one-shot parsing works there, streaming cannot be attributed per step).
        """
        return version_tuple(self.version) >= (1, 3)

    def tool_parser_names(self) -> list[str]:
        return sorted(set(self.core.get_tool_parser_names()))

    def reasoning_parser_names(self) -> list[str]:
        return sorted(set(self.core.get_reasoning_parser_names()))

    def api_shape(self) -> str:
        reg = "register_model" if self.register.__name__ == "register_model" else "register_llm"
        worker = ", WorkerType" if self.worker_type is not None else ""
        return f"in-process OpenAI frontend, scripted engine ({reg}{worker})"

    def runtime(self, loop: Any) -> Any:
        if version_tuple(self.version) < (1, 3):  # NATS was on unless turned off (deprecated since)
            return self.runtime_cls(loop, "mem", "tcp", enable_nats=False)
        return self.runtime_cls(loop, "mem", "tcp")

    def endpoint(self, runtime: Any, namespace: str, component: str, name: str) -> Any:
        if self.path_endpoints:
            return runtime.endpoint(f"{namespace}.{component}.{name}")
        return runtime.namespace(namespace).component(component).endpoint(name)

    async def register_model(self, endpoint: Any, folder: str, model: str, runtime_config: Any) -> None:
        llm = self.llm
        kwargs: dict[str, Any] = {"runtime_config": runtime_config}
        if self.worker_type is not None:
            kwargs["worker_type"] = self.worker_type.Aggregated
        await self.register(llm.ModelInput.Tokens, llm.ModelType.Chat, endpoint, folder, model, **kwargs)

    def runtime_config(self, reasoning: str | None, tool: str | None) -> Any:
        config = self.llm.ModelRuntimeConfig()
        if tool is not None:
            config.tool_call_parser = tool
        if reasoning is not None:
            config.reasoning_parser = reasoning
        return config

    async def serve_http(self, runtime: Any, port: int) -> Any:
        """Make the HTTP engine on 127.0.0.1:`port`; the coroutine that runs it (to schedule)."""
        llm = self.llm
        args = llm.EntrypointArgs(llm.EngineType.Dynamic, http_host="127.0.0.1", http_port=port)
        if self.engine_takes_runtime:
            engine = await llm.make_engine(runtime, args)
        else:
            engine = await llm.make_engine(args)
        return llm.run_input(runtime, "http", engine)


#: The hosts Dynamo's request plane listens on (1.6.1), set to 127.0.0.1 unless already set.
LOOPBACK_VARIABLES = ("DYN_TCP_RPC_HOST", "DYN_TCP_RESPONSE_STREAM_HOST")
#: The first release known to take an address there: 1.4.2 reads the value as an interface to
#: look up ("Interface not found: 127.0.0.1", and no model is ever listed; "lo" neither).
LOOPBACK_FROM = (1, 6)


@cache
def get_api() -> DynamoApi:
    """The installed release's API (imports Dynamo: call only when a `dynamo:` parser is used)."""
    import importlib
    import importlib.metadata
    import os

    # Dynamo reads DYN_LOG once, when it is first imported, and logs at INFO without it: errors
    # only, unless set. Its per-request INFO lines, which no DYN_LOG value removes, are kept off
    # standard error by `_quiet` (PARSEBRIDGE_DYNAMO_LOG=1 shows them).
    if not framework_logs_wanted():  # --framework-logs: Dynamo logs at its own level
        os.environ.setdefault("DYN_LOG", "error")
    try:
        version = importlib.metadata.version("ai-dynamo-runtime")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    # Its request plane (the frontend's link to the scripted engine) listens on the machine's
    # network address unless told otherwise: two ports other hosts could reach, on a machine with
    # one, while a parser runs. Everything here is in this process: loopback is enough.
    if version_tuple(version) >= LOOPBACK_FROM:
        for variable in LOOPBACK_VARIABLES:
            os.environ.setdefault(variable, "127.0.0.1")

    import dynamo._core as core

    llm: Any = importlib.import_module("dynamo.llm")
    from dynamo.runtime import DistributedRuntime

    register = getattr(llm, "register_model", None) or llm.register_llm
    try:
        engine_params: int | None = len(inspect.signature(llm.make_engine).parameters)
    except (TypeError, ValueError):  # a Rust function without a text signature
        engine_params = None
    return DynamoApi(
        version=version,
        core=core,
        llm=llm,
        runtime_cls=DistributedRuntime,
        register=register,
        worker_type=getattr(llm, "WorkerType", None),
        engine_takes_runtime=engine_params >= 2
        if engine_params is not None
        else version_tuple(version) >= (1, 0),
        path_endpoints=hasattr(DistributedRuntime, "endpoint"),
    )

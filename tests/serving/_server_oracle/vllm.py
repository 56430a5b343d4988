"""vLLM's own chat server, driven with a scripted engine.

`run` builds vLLM's `OpenAIServingChat` (the class its `/v1/chat/completions`
route calls) with stand-ins only for what sits outside the streaming path —
the engine client, model config, model registry and renderer — and runs its
`chat_completion_stream_generator` over an async generator of real
`vllm.outputs.RequestOutput` objects. Nothing of vLLM's loop is restated here:
the SSE text it yields is parsed back into deltas by `common.run_from_sse`.

Release shims: the chat serving module moved (0.15+:
`vllm.entrypoints.openai.chat_completion.serving`, older:
`vllm.entrypoints.openai.serving_chat`); 0.11's constructor takes the model
config itself and its generator `enable_force_include_usage` instead of the
template kwargs (`make_server`, `run`). Releases whose constructor this
driver does not know raise `Undrivable`, which the support table reports.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from types import SimpleNamespace
from typing import Any

from .common import MODEL, Run, Script, request_body, run_from_sse


class Undrivable(RuntimeError):
    """This vLLM release's server cannot be driven by this harness (the reason says why)."""


def serving_module() -> Any:
    """The module holding `OpenAIServingChat` in the installed release."""
    errors = []
    for name in (
        "vllm.entrypoints.openai.chat_completion.serving",
        "vllm.entrypoints.openai.serving_chat",
    ):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            errors.append(f"{name}: {exc}")
            continue
        if hasattr(module, "OpenAIServingChat"):
            return module
    raise Undrivable("no OpenAIServingChat module: " + "; ".join(errors))


def _request_class() -> type:
    for name in (
        "vllm.entrypoints.openai.chat_completion.protocol",
        "vllm.entrypoints.openai.protocol",
    ):
        try:
            return importlib.import_module(name).ChatCompletionRequest  # type: ignore[no-any-return]
        except (ModuleNotFoundError, AttributeError):
            continue
    raise Undrivable("no ChatCompletionRequest")


def _metadata(request_id: str) -> Any:
    for name in (
        "vllm.entrypoints.generate.base.protocol",
        "vllm.entrypoints.openai.protocol",
    ):
        try:
            return importlib.import_module(name).RequestResponseMetadata(request_id=request_id)
        except (ModuleNotFoundError, AttributeError):
            continue
    raise Undrivable("no RequestResponseMetadata")


def make_request(
    tools: list[dict[str, Any]] | None,
    tool_choice: Any = None,
    chat_template_kwargs: dict[str, Any] | None = None,
    **fields: Any,
) -> Any:
    """A streaming `ChatCompletionRequest` as a client sends it (`tool_choice` None: not sent)."""
    return _request_class()(**request_body(tools, tool_choice, chat_template_kwargs, **fields))


def _engine_client(tokenizer: Any) -> Any:
    """What the serving constructor reads from the engine client: model config, renderer."""
    model_config = SimpleNamespace(
        model=MODEL,
        hf_config=SimpleNamespace(model_type="oracle"),
        generation_config="auto",
        override_generation_config={},
        max_model_len=1 << 20,
        get_diff_sampling_param=lambda: {},
        logits_processor_pattern=None,
    )
    return SimpleNamespace(
        model_config=model_config,
        renderer=SimpleNamespace(tokenizer=tokenizer),
        input_processor=None,
        vllm_config=None,
        errored=False,
    )


def make_server(reasoning: str | None, tool: str | None, tokenizer: Any) -> Any:
    """vLLM's `OpenAIServingChat` for these parser names (`--reasoning-parser`, `--tool-call-parser`),
    with `--enable-auto-tool-choice` when a tool parser is given."""
    cls = serving_module().OpenAIServingChat
    params = inspect.signature(cls.__init__).parameters
    client = _engine_client(tokenizer)
    models = SimpleNamespace(model_name=lambda lora=None: MODEL)
    options: dict[str, Any] = {
        "request_logger": None,
        "chat_template": None,
        "chat_template_content_format": "auto",
        "reasoning_parser": reasoning or "",
        "enable_auto_tools": tool is not None,
        "tool_parser": tool,
    }
    if "online_renderer" in params:  # 0.33: the renderer holds the tokenizer and template maps
        return cls(
            client, models, "assistant", online_renderer=SimpleNamespace(reasoning_effort_map={}), **options
        )
    if list(params)[1:3] == ["engine_client", "model_config"]:  # 0.11: the model config is passed in
        return cls(client, client.model_config, models, "assistant", **options)
    raise Undrivable(f"unknown OpenAIServingChat constructor: {list(params)}")


def forced_output_format(tool: str | None, tools: list[dict[str, Any]], tool_choice: Any) -> str:
    """What the server constrains a required/named request's output to, for this tool parser:
    ``"native"`` (the parser's own format: it sets `supports_required_and_named` False, 0.33+),
    else JSON — ``"arguments"`` (a named function's arguments object) or ``"array"``."""
    if tool is not None:
        from parsebridge.adapters.vllm._compat import get_api

        cls = get_api().tool_parser_class(tool)  # the release's registry, wherever it lives
        if not getattr(cls, "supports_required_and_named", True):
            return "native"
    return "array" if tool_choice == "required" else "arguments"


def stream_kwargs(server: Any, request: Any) -> dict[str, Any]:
    """This release's arguments to `chat_completion_stream_generator` past the seven all take."""
    params = inspect.signature(server.chat_completion_stream_generator).parameters
    extra: dict[str, Any] = {}
    if "chat_template_kwargs" in params:  # 0.15+: the server's merged template kwargs
        extra["chat_template_kwargs"] = server._effective_chat_template_kwargs(request)
    if "enable_force_include_usage" in params:  # 0.11
        extra["enable_force_include_usage"] = False
    return extra


def full_kwargs(server: Any, request: Any, tokenizer: Any) -> dict[str, Any]:
    """This release's arguments to `chat_completion_full_generator` past the seven all take: 0.33's
    route builds the request's `vllm.parser` Parser and passes it in; 0.11 builds its parsers inside."""
    params = inspect.signature(server.chat_completion_full_generator).parameters
    if "parser" not in params or getattr(server, "parser_cls", None) is None:
        return {}
    kwargs = server._effective_chat_template_kwargs(request)
    return {"parser": server._make_parser(request, tokenizer, kwargs)}


async def _outputs(script: Script, request_id: str) -> Any:
    from vllm.outputs import CompletionOutput, RequestOutput

    for text, ids, finish in script.engine_steps():
        out = CompletionOutput(
            index=0,
            text=text,
            token_ids=ids,
            cumulative_logprob=None,
            logprobs=None,
            finish_reason=finish,
        )
        yield RequestOutput(
            request_id=request_id,
            prompt=None,
            prompt_token_ids=list(script.prompt_token_ids),
            prompt_logprobs=None,
            outputs=[out],
            finished=finish is not None,
        )


def run(
    reasoning: str | None,
    tool: str | None,
    tokenizer: Any,
    script: Script,
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    chat_template_kwargs: dict[str, Any] | None = None,
    server: Any = None,
) -> Run:
    """Stream `script` through vLLM's own chat server; what the client saw (choice 0).

    `reasoning`/`tool`: vLLM's registered parser names (any registered name,
    plugins included). `server`: a `make_server` result to reuse.
    """
    server = server or make_server(reasoning, tool, tokenizer)
    request = make_request(tools, tool_choice, chat_template_kwargs)
    request_id = "chatcmpl-oracle"
    extra = stream_kwargs(server, request)

    async def collect() -> list[str]:
        gen = server.chat_completion_stream_generator(
            request,
            _outputs(script, request_id),
            request_id,
            MODEL,
            [],
            tokenizer,
            _metadata(request_id),
            **extra,
        )
        return [part async for part in gen]

    return run_from_sse(asyncio.run(collect()))

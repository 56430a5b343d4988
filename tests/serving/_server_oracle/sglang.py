"""SGLang's own chat server, driven with a scripted engine.

`run` builds SGLang's `OpenAIServingChat` (what its `/v1/chat/completions`
route calls) over stand-ins for the tokenizer manager and template manager,
and runs its `_generate_chat_stream`. The stand-in tokenizer manager's
`generate_request` yields what SGLang's does for a streamed request: one dict
per engine step with the *cumulative* text so far and `meta_info` (id,
completion token count, and the finish reason on the last step). SGLang's
loop, parsers and SSE framing are its own; `common.run_from_sse` reads the
result back.

Server configuration the code reads through `get_serving()` comes from a real
`ServerArgs` published into SGLang's runtime context once per process.

Release shims: the serving module's path is the same from 0.4.10 to 0.5.23;
`_generate_chat_stream`'s signature and the runtime context differ — releases
this driver does not know raise `Undrivable`.

`torchvision`: SGLang 0.5.11+ imports `torchvision.transforms` at import time
(multimodal helpers the chat path never calls). PyPI's torchvision wheels are
built against CUDA torch and do not load against the CPU torch of the
parsers-only install (`operator torchvision::nms does not exist`), and no CPU
build is on PyPI. `torchvision_stub` therefore stands in for torchvision
*only while the serving module is imported* when torchvision itself cannot be
imported; it is removed again afterwards, so nothing later sees a fake
torchvision.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import inspect
import sys
import types
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from .common import MODEL, Run, Script, request_body, run_from_sse


class Undrivable(RuntimeError):
    """This SGLang release's server cannot be driven by this harness (the reason says why)."""


class _Anything:
    """Any attribute, call or base class: what import-time uses of the stub module get."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name == "torchvision" or name.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name)

        def getattr_(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return _Anything()

        module.__getattr__ = getattr_  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []
        if module.__name__ == "torchvision":
            module.__version__ = "0.0.0+parsebridge-oracle-stub"  # type: ignore[attr-defined]


def _torchvision_loads() -> bool:
    try:
        import torchvision  # noqa: F401
    except Exception:
        for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
            del sys.modules[name]
        return False
    return True


@contextlib.contextmanager
def torchvision_stub() -> Iterator[None]:
    """A stand-in torchvision for the duration of an import, when the real one cannot load."""
    if _torchvision_loads():
        yield
        return
    finder = _StubFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
            del sys.modules[name]


def serving_module() -> Any:
    """`sglang.srt.entrypoints.openai.serving_chat`, imported (with the torchvision stand-in if needed)."""
    name = "sglang.srt.entrypoints.openai.serving_chat"
    if name in sys.modules:
        return sys.modules[name]
    with torchvision_stub():
        return importlib.import_module(name)


_published = False


def _publish_server_args() -> None:
    """SGLang's serving code reads server settings from its runtime context: publish defaults once."""
    global _published
    if _published:
        return
    try:
        from sglang.srt.runtime_context import get_context
    except ModuleNotFoundError:  # older releases read `ServerArgs` from the tokenizer manager only
        _published = True
        return
    from sglang.srt.server_args import ServerArgs

    ctx = get_context()
    if not ctx.is_config_namespace_published("serving"):
        ctx.set_server_args(ServerArgs(model_path=MODEL, skip_tokenizer_init=True, device="cpu"))
    _published = True


class TokenizerManager:
    """Stand-in for SGLang's TokenizerManager: configuration reads and a scripted `generate_request`."""

    def __init__(self, reasoning: str | None, tool: str | None, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.served_model_name = MODEL
        self.model_path = MODEL
        self.server_args = SimpleNamespace(
            tool_call_parser=tool, reasoning_parser=reasoning, enable_custom_logit_processor=False
        )
        self.model_config = SimpleNamespace(
            hf_config=SimpleNamespace(model_type="oracle", architectures=[]),
            get_default_sampling_params=lambda: {},
        )
        self.script: Script | None = None

    def config_value(self, name: str) -> Any:
        return getattr(self.server_args, name, None)

    async def generate_request(self, adapted_request: Any, raw_request: Any = None) -> Any:
        """One dict per engine step, the text cumulative, as SGLang's tokenizer manager streams."""
        assert self.script is not None
        text = ""
        tokens = 0
        for delta, ids, finish in self.script.engine_steps():
            text += delta
            tokens += len(ids)
            reason = None
            if finish is not None:
                reason = {"type": finish}
                if finish == "stop" and self.script.eos_ids:
                    reason["matched"] = self.script.eos_ids[0]
            yield {
                "text": text,
                "index": 0,
                "meta_info": {
                    "id": "oracle-request",
                    "prompt_tokens": len(self.script.prompt_token_ids),
                    "completion_tokens": tokens,
                    "cached_tokens": 0,
                    "finish_reason": reason,
                },
            }


def _template_manager(force_reasoning: bool) -> Any:
    """Stand-in TemplateManager: no chat template, or one that opened reasoning in the prompt."""
    return SimpleNamespace(
        force_reasoning=force_reasoning,
        reasoning_config=None,
        chat_template_name=None,
        jinja_template_content_format="string",
        python_chat_template=None,
    )


def make_request(
    tools: list[dict[str, Any]] | None,
    tool_choice: Any = None,
    chat_template_kwargs: dict[str, Any] | None = None,
    **fields: Any,
) -> Any:
    """A streaming SGLang `ChatCompletionRequest` as a client sends it (`tool_choice` None: not sent)."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    return ChatCompletionRequest(**request_body(tools, tool_choice, chat_template_kwargs, **fields))


def make_server(
    reasoning: str | None, tool: str | None, tokenizer: Any, *, reasoning_started: bool = False
) -> Any:
    """SGLang's `OpenAIServingChat` for `--reasoning-parser`/`--tool-call-parser` names.

    `reasoning_started`: the chat template ends the prompt inside reasoning
    (SGLang's TemplateManager then reports `force_reasoning`).
    """
    module = serving_module()
    _publish_server_args()
    params = inspect.signature(module.OpenAIServingChat._generate_chat_stream).parameters
    if list(params)[1:] != ["adapted_request", "request", "raw_request"]:
        raise Undrivable(f"unknown _generate_chat_stream signature: {list(params)}")
    manager = TokenizerManager(reasoning, tool, tokenizer)
    return module.OpenAIServingChat(manager, _template_manager(reasoning_started))


def forced_output_format(tool: str | None, tools: list[dict[str, Any]], tool_choice: Any) -> str:
    """What the server constrains a required/named request's output to, for this tool parser:
    ``"native"`` when the parser owns its format (structural tags, native required parsing),
    else a JSON ``"array"`` of ``{"name", "parameters"}`` objects (a named function too)."""
    if tool is None:
        return "array"
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    request = make_request(tools, tool_choice)
    parser = FunctionCallParser(request.tools, tool, tool_choice=request.tool_choice)
    owns = getattr(parser, "owns_tool_format", None)
    return "native" if owns is not None and owns() else "array"


def run(
    reasoning: str | None,
    tool: str | None,
    tokenizer: Any,
    script: Script,
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    chat_template_kwargs: dict[str, Any] | None = None,
    reasoning_started: bool = False,
    server: Any = None,
) -> Run:
    """Stream `script` through SGLang's own chat server; what the client saw (choice 0).

    `reasoning`/`tool`: SGLang's parser names. `server`: a `make_server`
    result to reuse (its `reasoning_started` then applies).
    """
    server = server or make_server(reasoning, tool, tokenizer, reasoning_started=reasoning_started)
    server.tokenizer_manager.script = script
    request = make_request(tools, tool_choice, chat_template_kwargs)

    async def collect() -> list[str]:
        gen = server._generate_chat_stream(SimpleNamespace(rid="oracle-request"), request, None)
        return [part async for part in gen]

    return run_from_sse(asyncio.run(collect()))

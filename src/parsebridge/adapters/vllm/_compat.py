"""What the installed vLLM looks like: import paths, names and behaviours per release.

Everything that moved between releases is looked up here once, by feature
detection where a feature can be seen (a module exists, a constructor takes a
keyword, a manager has `list_registered`). What cannot be seen from outside
(how the server's streaming loop orders its steps) is keyed on the release
number, measured on 0.11.0, 0.13.0, 0.15.1 and 0.33.0; releases
in between get the behaviour of the nearest measured one below them.

This is the only module that imports vLLM, always inside functions.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...protocol import new_call_id
from ...protocol.tools import openai_tool
from .._common import import_first, importable, process_wide, quiet_framework_logs, version_tuple


@dataclass(frozen=True)
class ServingBehaviour:
    """How the release's OpenAI chat server drives parsers (pre-`vllm.parser` releases).

    `transition_same_chunk`: after the chunk that ends reasoning, the tool
    parser runs on that same chunk's remaining content (0.13+) instead of on
    the next chunk only (0.11). `prompt_check_first`: the "reasoning ended in
    the prompt" test runs before the reasoning parser sees the chunk (0.13+).
    `remaining_args`: the end-of-stream flush of unstreamed arguments either
    replaces the final delta with a bare arguments delta (``"replace"``,
    ≤0.14) or keeps the final delta's id/name (``"preserve"``, 0.15+).
    `oneshot_helper`: one-shot goes through `_parse_tool_calls_from_content`
    (0.13+: whitespace-only content → None, no calls → the content before the
    tool parser) rather than the inline 0.11 code (tool parser content kept).
    """

    transition_same_chunk: bool
    prompt_check_first: bool
    remaining_args: str
    oneshot_helper: bool


class VllmApi:
    """The installed vLLM's parser API, resolved once per process."""

    def __init__(self) -> None:
        quiet_framework_logs()  # before the first import: vLLM configures its logger then
        import vllm

        self.vllm = vllm
        self.version: str = getattr(vllm, "__version__", "0")
        self.version_tuple = version_tuple(self.version)
        self.tool_module = import_first("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers")
        self.reasoning_module = importlib.import_module("vllm.reasoning")
        self.ToolParserManager = self.tool_module.ToolParserManager
        self.ReasoningParserManager = self.reasoning_module.ReasoningParserManager
        self.protocol = import_first(
            "vllm.entrypoints.openai.chat_completion.protocol", "vllm.entrypoints.openai.protocol"
        )
        self.ChatCompletionRequest = self.protocol.ChatCompletionRequest
        delta_mod = import_first(
            "vllm.entrypoints.generate.base.protocol",
            "vllm.entrypoints.openai.engine.protocol",
            "vllm.entrypoints.openai.protocol",
        )
        self.DeltaMessage = getattr(delta_mod, "DeltaMessage", None) or self.protocol.DeltaMessage
        self.DeltaToolCall = getattr(delta_mod, "DeltaToolCall", None) or self.protocol.DeltaToolCall
        self.DeltaFunctionCall = (
            getattr(delta_mod, "DeltaFunctionCall", None) or self.protocol.DeltaFunctionCall
        )

    # ------------------------------------------------------------------ shape

    @property
    def forced_choices(self) -> bool:
        """Tool parsers built with ``tool_choice="required"``/named do what the server does (0.33+:
        vLLM's own Parser picks JSON or the native format per parser; older releases' servers
        handle those choices outside the parsers, which parsebridge does not drive)."""
        return self.has_parser_driver

    @cached_property
    def has_parser_driver(self) -> bool:
        """0.33+: `vllm.parser` (per-request Parser) and ChatStreamProcessor drive parsing."""
        return importable(
            "vllm.parser.abstract_parser", "vllm.entrypoints.openai.chat_completion.stream_processor"
        )

    @cached_property
    def ChatStreamProcessor(self) -> Any:
        """0.33+: the server's per-request stream driver (looked up once, not per stream)."""
        module = importlib.import_module("vllm.entrypoints.openai.chat_completion.stream_processor")
        return module.ChatStreamProcessor

    @cached_property
    def serving(self) -> ServingBehaviour:
        v = self.version_tuple
        return ServingBehaviour(
            transition_same_chunk=v >= (0, 13),
            prompt_check_first=v >= (0, 13),
            remaining_args="preserve" if v >= (0, 15) else "replace",
            oneshot_helper=v >= (0, 13),
        )

    @cached_property
    def reasoning_method(self) -> str:
        base = self.reasoning_module.ReasoningParser
        return "extract_reasoning" if hasattr(base, "extract_reasoning") else "extract_reasoning_content"

    @cached_property
    def delta_reasoning_field(self) -> str:
        fields = getattr(self.DeltaMessage, "model_fields", {})
        return "reasoning" if "reasoning" in fields else "reasoning_content"

    def api_shape(self) -> str:
        tool_path = self.tool_module.__name__
        parts = [f"vllm {self.version}", tool_path, self.reasoning_method]
        if self.has_parser_driver:
            parts.append("vllm.parser driver")
        else:
            s = self.serving
            parts.append(
                "serving loop ("
                + ("same-chunk" if s.transition_same_chunk else "next-chunk")
                + f" tool start, {s.remaining_args} flush)"
            )
        return "; ".join(parts)

    # ------------------------------------------------------------------ names

    def _names(self, manager: Any, dict_attr: str) -> list[str]:
        lister = getattr(manager, "list_registered", None)
        if callable(lister):
            return list(lister())
        return list(getattr(manager, dict_attr))

    def tool_parser_names(self) -> list[str]:
        return self._names(self.ToolParserManager, "tool_parsers")

    def reasoning_parser_names(self) -> list[str]:
        return self._names(self.ReasoningParserManager, "reasoning_parsers")

    def tool_parser_class(self, name: str) -> type:
        return self.ToolParserManager.get_tool_parser(name)

    def reasoning_parser_class(self, name: str) -> type:
        return self.ReasoningParserManager.get_reasoning_parser(name)

    # ------------------------------------------------------------------ construction

    @staticmethod
    def _accepts(func: Any, param: str) -> bool:
        try:
            sig = inspect.signature(func)
        except (TypeError, ValueError):
            return False
        return param in sig.parameters or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()
        )

    @cached_property
    def tool_parser_takes_tools(self) -> bool:
        """Whether the release's base ToolParser takes the request's tools (0.19+); before, servers pass only the tokenizer.

        Decided on the base class, not the subclass: a subclass with ``**kwargs``
        would otherwise receive tools its server never passes.
        """
        base = getattr(self.tool_module, "ToolParser", None)
        try:
            return base is not None and "tools" in inspect.signature(base.__init__).parameters
        except (TypeError, ValueError):
            return False

    def new_tool_parser(self, cls: type, tokenizer: Any, request: Any) -> Any:
        """Build a tool parser the way the release's server does."""
        if self.tool_parser_takes_tools:
            return cls(tokenizer, request.tools)
        return cls(tokenizer)

    def new_reasoning_parser(
        self, cls: type, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None
    ) -> Any:
        """Build a reasoning parser as the server does: 0.11 passes only the tokenizer; 0.13–0.14
        pass the request's own ``chat_template_kwargs`` (None when it has none); 0.15+ a dict
        merged with the server defaults."""
        if self.version_tuple >= (0, 13) and self._accepts(cls.__init__, "chat_template_kwargs"):
            if self.version_tuple < (0, 15):
                return cls(tokenizer, chat_template_kwargs=chat_template_kwargs or None)
            return cls(tokenizer, chat_template_kwargs=dict(chat_template_kwargs or {}))
        return cls(tokenizer)

    def make_request(
        self,
        tools: Sequence[dict[str, Any]] | None,
        tool_choice: Any = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        **extra: Any,
    ) -> Any:
        """A chat request carrying the tools and tool_choice, as the server builds it.

        Without tools vLLM refuses ``tool_choice="auto"``; parsebridge still
        wants the parser's calls, so the choice is set after validation.
        """
        fields: dict[str, Any] = {
            "model": "parsebridge",
            "messages": [{"role": "user", "content": "parsebridge"}],
            **extra,
        }
        if chat_template_kwargs:
            fields["chat_template_kwargs"] = chat_template_kwargs
        if tools:
            fields["tools"] = [dict(openai_tool(t)) for t in tools]  # (its model takes only that form)
            if tool_choice is not None:
                fields["tool_choice"] = tool_choice
        request = self.ChatCompletionRequest(**fields)
        if not tools:
            request.tool_choice = tool_choice
        return request

    @cached_property
    def _tool_call_id_maker(self) -> Callable[[], str]:
        for mod in ("vllm.renderers.chat_utils", "vllm.entrypoints.chat_utils"):
            try:
                return importlib.import_module(mod).make_tool_call_id  # type: ignore[no-any-return]
            except (ModuleNotFoundError, AttributeError):
                continue

        return new_call_id

    def make_tool_call_id(self) -> str:
        """A call id the way this release's server mints one (the helper is looked up once)."""
        return self._tool_call_id_maker()

    @cached_property
    def filter_parallel_tool_calls(self) -> Callable[[list[Any], Any], list[Any]]:
        """The server's `maybe_filter_parallel_tool_calls` (0.33+ serving utils), looked up once."""
        from vllm.entrypoints.serve.utils.tool_calls_utils import maybe_filter_parallel_tool_calls

        return maybe_filter_parallel_tool_calls  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ deltas

    def delta_reasoning(self, delta: Any) -> str | None:
        value = getattr(delta, "reasoning", None)
        if value is None:
            value = getattr(delta, "reasoning_content", None)
        return value

    def new_delta(self, **fields: Any) -> Any:
        if "reasoning" in fields and self.delta_reasoning_field != "reasoning":
            fields["reasoning_content"] = fields.pop("reasoning")
        return self.DeltaMessage(**fields)


@process_wide
def get_api() -> VllmApi:
    """The process-wide `VllmApi` (imports vLLM on first call)."""
    return VllmApi()

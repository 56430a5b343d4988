"""`OutputProcessor`: raw engine output → OpenAI chat messages and stream chunks.

One processor per server configuration (parsers, policy) is cheap and
shareable across threads; each request gets its own `RequestProcessor`
(`processor.request(...)`), and each streamed choice its own state.

    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", on_error="fallback")
    req = proc.request(tools=tools, tool_choice="auto", model="m")
    resp = req.response(engine_text)                    # a chat.completion dict
    stream = req.stream()                               # chat.completion.chunk dicts
    for text, ids in engine:
        yield from stream.feed(text, ids)
    yield from stream.finish("stop")

See docs/serving.md for the tool_choice semantics and the failure policy.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

from ..adapters import get_pipeline, get_reasoning_parser, get_tool_parser
from ..policy.call_options import check_start_values
from ..policy.guard import GuardedReasoningParser, GuardedToolParser
from ..protocol import (
    ParserSpec,
    Pipeline,
    ReasoningParserConfig,
    ToolCallParserConfig,
    ToolSpec,
)
from ..protocol.prompt_rule import start_options
from ..protocol.tools import checked_tools
from . import _server_rules
from ._choice import OnError
from ._chunks import SSE_DONE, ChunkStream, EngineOutput, error_body, sse
from ._request import ChoiceOutput, RequestProcessor, ToolChoice, _mode
from ._server_rules import ForcedFormat
from ._settings import (
    check_parser_source,
    check_processor_settings,
    check_request_keywords,
    check_request_template_kwargs,
    check_unused_options,
)
from .flags import configs_from_args

# Re-exported: these lived here before the chunk-level code moved to `_chunks` and the
# per-request code to `_request`.
__all__ = [
    "SSE_DONE",
    "ChoiceOutput",
    "ChunkStream",
    "EngineOutput",
    "OutputProcessor",
    "RequestProcessor",
    "ToolChoice",
    "error_body",
    "sse",
]
log = logging.getLogger("parsebridge")

ReasoningSource = str | ParserSpec | ReasoningParserConfig | Any
ToolSource = str | ParserSpec | ToolCallParserConfig | Any


def _tools_key(tools: Sequence[ToolSpec] | None, tool_choice: ToolChoice = None) -> str:
    key = json.dumps(list(tools or []), sort_keys=True, default=str)
    return key if tool_choice is None else f"{json.dumps(tool_choice, sort_keys=True)}|{key}"


#: The constructor's keywords a processor for another request's chat_template_kwargs keeps.
_SETTINGS = (
    "tools",
    "tool_choice",
    "reasoning_started",
    "on_error",
    "cumulative",
    "forced_format",
    "named_finish_reason",
    "reasoning_key",
    "native",
    "model",
    "cache_size",
)


class OutputProcessor:
    """Reasoning then tool-call parsing for a server, speaking OpenAI chat completions.

    `reasoning` and `tool`: a config string (``"vllm:hermes"``), a
    `ParserSpec`, a `ReasoningParserConfig`/`ToolCallParserConfig`, or a
    parser object; either may be None. `tools`/`tool_choice` are defaults
    that each request may override. `reasoning_started`: the prompt already
    opened reasoning (None: the parser's default, or derived per request from
    `prompt`/`prompt_token_ids`). `on_error`: the failure policy (docs/serving.md).
    `cumulative`: the engine sends all text so far instead of deltas (a trailing U+FFFD is
    held back until the text goes on; text that takes back what was sent: docs/serving.md).
    `forced_format`: how ``required``/named output is read — ``"json"`` (the
    JSON-schema-constrained output, by parsebridge's own stages), ``"native"``
    (the engine constrained output to the model's own call format; the tool
    parser reads it) or ``"server"`` (the tool parser's framework parses the
    request as its own server does: JSON or native per parser; vLLM 0.33+,
    SGLang 0.5.23). None (default): ``"server"`` where the tool parser's
    backend offers it, else ``"json"``. `named_finish_reason`: finish reason
    after a named call (``"tool_calls"`` as SGLang; ``"stop"`` as OpenAI and
    vLLM); None (default): the server's with ``"server"``, else ``"tool_calls"``.
    `native`: use a framework's own reasoning→tool chain when both specs name it.
    `options` go to the parser factories.
    """

    def __init__(
        self,
        reasoning: ReasoningSource | None = None,
        tool: ToolSource | None = None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice = "auto",
        reasoning_started: bool | None = None,
        on_error: OnError = "raise",
        cumulative: bool = False,
        forced_format: ForcedFormat | None = None,
        named_finish_reason: Literal["tool_calls", "stop"] | None = None,
        reasoning_key: str = "reasoning_content",
        native: bool = True,
        model: str = "parsebridge",
        cache_size: int = 64,
        **options: Any,
    ) -> None:
        tools = checked_tools(tools)  # the caller's input: InvalidToolsError now, not a parser's failure
        # What a processor for another request's chat_template_kwargs is built from (`_for_template`).
        self._sources = (reasoning, tool)
        self._settings = {k: v for k, v in locals().items() if k in _SETTINGS}
        check_processor_settings(self._settings)
        _mode(tool_choice, [{"type": "function", "function": {"name": "_"}}])  # validate early
        self.on_error: OnError = on_error
        self.tools: list[ToolSpec] = tools
        self.tool_choice = tool_choice
        self.reasoning_started = reasoning_started
        self.cumulative = cumulative
        self._forced_format = forced_format
        self._named_finish_reason = named_finish_reason
        self.reasoning_key = reasoning_key
        self.native = native
        self.model = model
        self._options = options
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._tool_cache: OrderedDict[str, GuardedToolParser] = OrderedDict()
        self._pipe_cache: OrderedDict[str, Pipeline | None] = OrderedDict()
        self._template_cache: OrderedDict[str, OutputProcessor] = OrderedDict()

        self._reasoning_spec: ParserSpec | None = None
        self.reasoning_parser: GuardedReasoningParser | None = None
        if reasoning is not None:
            self._set_reasoning(reasoning)
        self._tool_spec: ParserSpec | None = None
        self._tool_object: GuardedToolParser | None = None
        if tool is not None:
            self._set_tool(tool)
        has_spec = self._reasoning_spec is not None or self._tool_spec is not None
        check_unused_options(options, {*self._settings, "reasoning", "tool", "tools"}, has_spec)

    def _set_reasoning(self, reasoning: ReasoningSource) -> None:
        """A spec is resolved with the processor's options; a parser object is guarded as it is."""
        if isinstance(reasoning, str | ParserSpec | ReasoningParserConfig):
            self._reasoning_spec = (
                reasoning.to_spec()
                if isinstance(reasoning, ReasoningParserConfig)
                else ParserSpec.parse(reasoning)
            )
            self.reasoning_parser = get_reasoning_parser(
                self._reasoning_spec, on_error=self.on_error, **self._options
            )
        else:
            check_parser_source("reasoning", reasoning)
            inner = reasoning.inner if isinstance(reasoning, GuardedReasoningParser) else reasoning
            self.reasoning_parser = GuardedReasoningParser(inner, self.on_error)

    def _set_tool(self, tool: ToolSource) -> None:
        """A spec is built once here so a bad one fails at startup, not on the first request."""
        if isinstance(tool, str | ParserSpec | ToolCallParserConfig):
            self._tool_spec = (
                tool.to_spec() if isinstance(tool, ToolCallParserConfig) else ParserSpec.parse(tool)
            )
            self._tool_parser_for(self.tools)
            if self._forced_format == "server":
                self.forced_format  # noqa: B018 - a backend without it fails here
        else:
            check_parser_source("tool", tool)
            inner = tool.inner if isinstance(tool, GuardedToolParser) else tool
            self._tool_object = GuardedToolParser(inner, self.on_error)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_args(
        cls,
        namespace: argparse.Namespace,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice = "auto",
        **kwargs: Any,
    ) -> OutputProcessor:
        """A processor from the flags of `parsebridge.add_parser_arguments` (``--parser-on-error`` too)."""

        reasoning_cfg, tool_cfg = configs_from_args(namespace)
        kwargs.setdefault("on_error", getattr(namespace, "parser_on_error", None) or "raise")
        return cls(reasoning_cfg, tool_cfg, tools=tools, tool_choice=tool_choice, **kwargs)

    @property
    def has_tool_parser(self) -> bool:
        return self._tool_spec is not None or self._tool_object is not None

    @property
    def specs(self) -> tuple[str | None, str | None]:
        """The reasoning and tool parser specs in use (``backend:name``)."""
        r = self.reasoning_parser.spec if self.reasoning_parser is not None else None
        t = (
            self._tool_object.spec
            if self._tool_object is not None
            else (str(self._tool_spec) if self._tool_spec else None)
        )
        return r, t

    def __repr__(self) -> str:
        """``<OutputProcessor reasoning=builtin:qwen3 tool=builtin:hermes on_error=raise>`` (a parser's style)."""
        named = zip(("reasoning", "tool"), self.specs, strict=True)
        parts = [f"{kind}={spec}" for kind, spec in named if spec is not None]
        return f"<OutputProcessor {' '.join([*parts, f'on_error={self.on_error}'])}>"

    def _cached(self, cache: OrderedDict[str, Any], key: str, build: Any) -> Any:
        with self._lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        value = build()
        with self._lock:
            cache[key] = value
            while len(cache) > self._cache_size:
                cache.popitem(last=False)
        return value

    @property
    def server_none_mode(self) -> Literal["drop", "keep"] | None:
        """How the tool parser's framework server treats ``tool_choice="none"``/no tools (None: skip it)."""
        return _server_rules.none_mode(self._tool_spec)

    @functools.cached_property
    def forced_format(self) -> ForcedFormat:
        """How ``required``/named output is read (the resolved `forced_format` option)."""
        return _server_rules.forced_format(self._forced_format, self._tool_spec, self.specs[1])

    @property
    def named_finish_reason(self) -> str:
        """The finish reason after a named call that ended normally."""
        if self._named_finish_reason is not None:
            return self._named_finish_reason
        return _server_rules.named_finish_reason(self.forced_format, self._tool_spec)

    def _options_for(self, tool_choice: ToolChoice) -> dict[str, Any]:
        return self._options if tool_choice is None else {**self._options, "tool_choice": tool_choice}

    def _tool_parser_for(
        self, tools: Sequence[ToolSpec] | None, tool_choice: ToolChoice = None
    ) -> GuardedToolParser | None:
        """The tool parser for a request's tools (parsers are built per tool list and cached).

        `tool_choice` ("none", "required", a named function) builds a framework parser for
        that request shape.
        """
        if self._tool_object is not None:
            return self._tool_object
        if self._tool_spec is None:
            return None
        spec = self._tool_spec
        options = self._options_for(tool_choice)
        return self._cached(  # type: ignore[no-any-return]
            self._tool_cache,
            _tools_key(tools, tool_choice),
            lambda: get_tool_parser(spec, tools, on_error=self.on_error, **options),
        )

    def _native_pipeline_for(
        self, tools: Sequence[ToolSpec] | None, tool_choice: ToolChoice = None
    ) -> Pipeline | None:
        """A framework's own reasoning→tool chain, when both specs name the same framework."""
        r, t = self._reasoning_spec, self._tool_spec
        if (
            not self.native
            or r is None
            or t is None
            or r.backend != t.backend
            or r.backend in ("builtin", "python")
        ):
            return None
        options = self._options_for(tool_choice)

        def build() -> Pipeline | None:
            pipe = get_pipeline(r, t, tools=tools, on_error=self.on_error, native=True, **options)
            return None if type(pipe) is Pipeline else pipe

        return self._cached(  # type: ignore[no-any-return]
            self._pipe_cache, _tools_key(tools, tool_choice), build
        )

    def engine_chunks(
        self, text: str, per: int = 1, tools: Sequence[ToolSpec] | None = None
    ) -> list[tuple[str, tuple[int, ...] | None]]:
        """`text` as an engine using the backend's tokenizer streams it: `per` tokens a step.

        Framework parsers need token ids (vLLM's reasoning parsers find the
        end of reasoning by token id), so a fake or text-only engine should
        feed these. Without a tokenizer among the parsers: `per` characters a
        step, without ids.
        """
        sources: list[Any] = [
            self._native_pipeline_for(tools or self.tools),
            self._tool_parser_for(tools or self.tools),
        ]
        sources.append(self.reasoning_parser)
        for source in sources:
            chunker = getattr(source, "chunks", None) if source is not None else None
            if callable(chunker):
                try:
                    return [(c.text, tuple(c.token_ids)) for c in chunker(text, per)]
                except Exception as exc:  # a parser without a usable tokenizer: try the next
                    log.debug("no token chunks from %r: %s", source, exc)
        per = max(1, per)
        return [(text[i : i + per], None) for i in range(0, len(text), per)]

    def resolve_reasoning_started(
        self,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> bool | None:
        """Did the prompt open reasoning? The request's flag, else what its prompt says by the
        backend's rule (`_start_for`; a builtin parser answers itself), else the processor's
        `reasoning_started` (None: the parser decides, e.g. a vLLM parser given the prompt)."""
        started, options = self._start_for(reasoning_started, prompt, prompt_token_ids)
        is_started = getattr(getattr(self.reasoning_parser, "inner", None), "is_started", None)
        if started is None and "prompt" in options and callable(is_started):  # builtin: it says itself
            try:
                return bool(is_started(None, options["prompt"]))
            except TypeError:
                pass
        return started

    def _start_for(
        self, reasoning_started: bool | None, prompt: str | None, prompt_token_ids: Sequence[int] | None
    ) -> tuple[bool | None, dict[str, Any]]:
        """(start state, prompt options for the parser): `parsebridge.protocol.prompt_rule.start_options`."""
        return start_options(
            self.reasoning_parser, reasoning_started, self.reasoning_started, prompt, prompt_token_ids
        )

    # ------------------------------------------------------------------ per request
    def request(
        self,
        *,
        tools: Sequence[ToolSpec] | Literal[False] | None = False,
        tool_choice: ToolChoice | Literal[False] = False,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
        request_id: str | None = None,
        model: str | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> RequestProcessor:
        """Per-request state: the request's tools/tool_choice (default: the processor's) and prompt.

        `tools` are checked as `get_tool_parser` checks them (`InvalidToolsError` for a malformed list).

        `chat_template_kwargs`: the request's own (as vLLM's and SGLang's servers take them, e.g.
        ``{"enable_thinking": False}``), given to the parsers built from specs in place of the
        processor's; None: the processor's. A parser object is used as it is. A thinking switch
        (``enable_thinking``, ``thinking``) that is no boolean, e.g. ``"no"``, is
        `UnsupportedOptionError`: a template reads a non-empty string as true, thinking on.

        `parallel_tool_calls=False`: the request's first call only, one-shot and streamed, as vLLM's
        server sends (SGLang's only constrains the engine with it).
        """
        # Checked here, before the prompt is read by the rule: the parser is later called without its
        # guard's checks, and a wrong type failing inside it would be blamed on it (under
        # on_error="fallback": the output as content, its reasoning lost).
        check_start_values(
            self.specs[0] or "OutputProcessor.request",
            reasoning_started,
            {"prompt": prompt, "prompt_token_ids": prompt_token_ids},
        )
        check_request_template_kwargs(chat_template_kwargs)
        proc = self._for_template(chat_template_kwargs)
        started, prompt_kwargs = proc._start_for(reasoning_started, prompt, prompt_token_ids)
        return RequestProcessor(
            proc,
            tools=self.tools if tools is False else checked_tools(tools),
            tool_choice=self.tool_choice if tool_choice is False else tool_choice,
            reasoning_started=started,
            prompt_kwargs=prompt_kwargs,
            request_id=request_id or f"chatcmpl-{uuid.uuid4().hex[:24]}",
            model=model or self.model,
            parallel_tool_calls=parallel_tool_calls,
        )

    def _for_template(self, chat_template_kwargs: dict[str, Any] | None) -> OutputProcessor:
        """This processor, or one like it whose parsers get `chat_template_kwargs` (built once per value)."""
        if chat_template_kwargs is None or chat_template_kwargs == self._options.get("chat_template_kwargs"):
            return self
        options = {**self._options, "chat_template_kwargs": dict(chat_template_kwargs)}
        return self._cached(  # type: ignore[no-any-return]
            self._template_cache,
            json.dumps(chat_template_kwargs, sort_keys=True, default=str),
            lambda: OutputProcessor(*self._sources, **self._settings, **options),
        )

    def parse(self, text: str, finish_reason: str | None = None, **request: Any) -> ChoiceOutput:
        """One-shot: a whole output → `ChoiceOutput` (message dict and finish reason)."""
        check_request_keywords("parse", self.request, request, ["finish_reason"])
        return self.request(**request).parse(text, finish_reason)

    def message(
        self, text: str, finish_reason: str | None = None, **request: Any
    ) -> tuple[dict[str, Any], str]:
        """One-shot: an OpenAI chat `message` dict and its `finish_reason`."""
        check_request_keywords("message", self.request, request, ["finish_reason"])
        out = self.request(**request).parse(text, finish_reason)
        return out.message, out.finish_reason

    def response(
        self,
        outputs: str | Sequence[str],
        finish_reasons: str | Sequence[str | None] | None = None,
        *,
        usage: dict[str, Any] | None = None,
        **request: Any,
    ) -> dict[str, Any]:
        """One-shot: a full ``chat.completion`` dict (one choice per output)."""
        check_request_keywords("response", self.request, request, ["finish_reasons", "usage"])
        return self.request(**request).response(outputs, finish_reasons, usage=usage)

    def stream(self, n: int = 1, **request: Any) -> ChunkStream:
        """Streaming: a `ChunkStream` for a new request with `n` choices."""
        check_request_keywords("stream", self.request, request, ["n"])
        return self.request(**request).stream(n)

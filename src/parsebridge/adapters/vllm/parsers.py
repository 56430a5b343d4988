"""parsebridge parser objects backed by vLLM parsers.

A parser object holds configuration only (names, tokenizer, tools, request
options, resolved once in a `VllmEngine`); every `parse` and every `stream()`
gets a fresh vLLM session, because vLLM parsers keep per-request state on
themselves. A stream is a `VllmStepper` (see `_stream` for the end-of-stream
conventions) inside the streams shared with the SGLang adapter.

The parts live in their own modules: `_engine` (parser classes, tokenizer,
request, prompt ids), `_stream` (the per-chunk path), `_served_tokenizer`
(the default tokenizer), `_driver` (vLLM's per-request sessions),
`_translate` (vLLM objects → parsebridge models). Their public names are
importable from here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...protocol import (
    ParseResult,
    ReasoningParserBase,
    ReasoningParseResult,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.models import make_reasoning_result, make_tool_result
from .._stepped import (
    EndOfStream,
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
)
from .._token_chunks import EngineTokens
from . import _tokenizer
from ._engine import VllmEngine, refuse_stub
from ._served_tokenizer import as_served, probe_special_tokens, resolve_tokenizer
from ._stream import VllmStepper
from ._translate import locate_reasoning, none_if_empty, to_tool_call

__all__ = [
    "VllmEngine",
    "VllmPipeline",
    "VllmReasoningParser",
    "VllmStepper",
    "VllmToolParser",
    "as_served",
    "probe_special_tokens",
    "refuse_stub",
    "resolve_tokenizer",
]

# ====================================================================== tool calls


class _EngineTokens(EngineTokens):
    """The token views every vLLM parser offers, read from its engine (one tokenizer per parser)."""

    engine: VllmEngine

    def token_pieces(
        self, text: str, token_ids: Sequence[int] | None = None, prompt_ids: Sequence[int] = ()
    ) -> list[_tokenizer.TokenChunk]:
        """Per-token (text, id) as vLLM's server streams them (`VllmEngine.token_pieces`)."""
        return self.engine.token_pieces(text, token_ids, prompt_ids)

    def special_ids(self) -> set[int]:
        return self.engine.special_ids()


class _Prompted(_EngineTokens):
    """The generation prompt of the parsers that read reasoning (the reasoning parser, the pipeline):
    the `prompt`/`prompt_token_ids` options, which a call's own keywords override."""

    prompt: str | None
    prompt_token_ids: Sequence[int] | None

    def _take_prompt(self, options: dict[str, Any]) -> None:
        """Take the prompt options out of `options` (the engine does not read them)."""
        self.prompt = options.pop("prompt", None)
        self.prompt_token_ids = options.pop("prompt_token_ids", None)

    def _prompt_ids(self, started: bool | None, kw: dict[str, Any]) -> list[int]:
        """The prompt ids of a request whose start state is `started` (`VllmEngine.prompt_ids`)."""
        return self.engine.prompt_ids(
            started,
            kw.get("prompt", self.prompt),
            kw.get("prompt_token_ids", self.prompt_token_ids),
        )


class VllmToolParser(_EngineTokens, ToolParserBase):
    """`vllm:NAME` tool-call parser: vLLM's parser, driven as vLLM's server drives it.

    Options: `tokenizer` (object, or path to tokenizer.json / a tokenizer
    dir; default: a built-in one holding every vLLM special token),
    `tool_choice` (default ``"auto"``), `chat_template_kwargs`,
    `request_fields` (extra ChatCompletionRequest fields), `end_of_stream`.
    """

    backend = "vllm"

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        self.engine = VllmEngine(name, None, tools=self.tools, **options)

    def parse(self, text: str) -> ToolParseResult:
        raw = self.engine.oneshot(text, [], "extract_tool_calls")
        return make_tool_result(none_if_empty(raw.content), [to_tool_call(c, text) for c in raw.calls])

    def has_tool_calls(self, text: str) -> bool:
        return bool(self.parse(text).tool_calls)

    def stream(self, *, end_of_stream: EndOfStream | None = None, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(VllmStepper(self.engine, [], end_of_stream))


# ====================================================================== reasoning


class VllmReasoningParser(_Prompted, ReasoningParserBase):
    """`vllm:NAME` reasoning parser (options as for `VllmToolParser`, plus `prompt`/`prompt_token_ids`)."""

    backend = "vllm"

    def __init__(self, name: str, **options: Any) -> None:
        self._take_prompt(options)
        super().__init__(**options)
        self.name = name
        self.engine = VllmEngine(None, name, **options)
        start, end = self.engine.markers()
        self.markers = tuple(m for m in (start, end) if m)  # type: ignore[misc]

    def parse(self, text: str, *, reasoning_started: bool | None = None, **kw: Any) -> ReasoningParseResult:
        raw = self.engine.oneshot(text, self._prompt_ids(reasoning_started, kw), "extract_reasoning")
        reasoning = none_if_empty(raw.reasoning)
        start, end = self.engine.markers()
        return make_reasoning_result(
            reasoning, none_if_empty(raw.content), locate_reasoning(text, reasoning, start, end)
        )

    def stream(
        self, *, reasoning_started: bool | None = None, end_of_stream: EndOfStream | None = None, **kw: Any
    ) -> SteppedReasoningStream:
        stepper = VllmStepper(self.engine, self._prompt_ids(reasoning_started, kw), end_of_stream)
        return SteppedReasoningStream(stepper, self.engine.markers)


# ====================================================================== native pipeline


class VllmPipeline(_Prompted, FrameworkPipeline):
    """vLLM's own reasoning→tool chain for one request shape (one session, not two parsers)."""

    backend = "vllm"

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self._take_prompt(options)
        self.engine = VllmEngine(self.tool_name, self.reasoning_name, tools=tools, **options)

    def parse(self, text: str, *, reasoning_started: bool | None = None, **kw: Any) -> ParseResult:
        raw = self.engine.oneshot(text, self._prompt_ids(self._started(reasoning_started), kw), "parse")
        reasoning = none_if_empty(raw.reasoning)
        start, end = self.engine.markers()
        return ParseResult(
            reasoning=reasoning,
            content=none_if_empty(raw.content),
            tool_calls=[to_tool_call(c, text) for c in raw.calls],
            block=locate_reasoning(text, reasoning, start, end),
        )

    def stream(  # type: ignore[override]
        self, *, reasoning_started: bool | None = None, end_of_stream: EndOfStream | None = None, **kw: Any
    ) -> SteppedPipelineStream:
        stepper = VllmStepper(
            self.engine, self._prompt_ids(self._started(reasoning_started), kw), end_of_stream
        )
        return SteppedPipelineStream(stepper, self.engine.markers)

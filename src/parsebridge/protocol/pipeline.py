"""Reasoning then tool calls, chained per request.

Servers parse reasoning first and hand only the visible content to the
tool-call parser; this is that chain for any two parsers, from any backends.
Backends whose framework has its own per-request chain (vLLM 0.33's
`vllm.parser`) may provide a native pipeline instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .errors import InvalidInputError
from .models import (
    ParseResult,
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolParseResult,
    make_delta,
    set_raw_text,
)
from .parsers import Closable, ReasoningParser, ReasoningStream, ToolParser, ToolStream
from .streams import DeltaAccumulator


class PipelineStream:
    """Per-request state of a `Pipeline`: one reasoning stream feeding one tool stream."""

    def __init__(self, reasoning: ReasoningStream | None, tools: ToolStream | None) -> None:
        self._reasoning = reasoning
        self._tools = tools
        self._acc = DeltaAccumulator()
        self._flushed = False
        self._reasoning_result: ReasoningParseResult | None = None
        self._tool_result: ToolParseResult | None = None

    def _through_tools(self, delta: StreamDelta, token_ids: Sequence[int] | None) -> StreamDelta:
        if self._tools is None or not delta.content:
            return delta
        tool_delta = self._tools.feed(delta.content, token_ids)
        return make_delta(tool_delta.content, delta.reasoning, tool_delta.tool_calls)

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if not isinstance(text, str):  # (a tool stream alone would never see an empty chunk)
            raise InvalidInputError("stream.feed", text)
        if self._reasoning is not None:
            r = self._reasoning.feed(text, token_ids)
            # Token ids belong to the whole chunk; pass them on only when the
            # reasoning parser handed the chunk through untouched.
            ids = token_ids if (not r.reasoning and r.content == text) else None
            out = self._through_tools(r, ids)
        else:
            out = self._through_tools(make_delta(text), token_ids)
        self._acc.add(out)
        return out

    def flush(self) -> StreamDelta:
        if self._flushed:
            return StreamDelta()
        self._flushed = True
        out = StreamDelta()
        if self._reasoning is not None:
            out = self._through_tools(self._reasoning.flush(), None)
            self._reasoning_result = self._reasoning.finish()
        if self._tools is not None:
            out = out.merged(self._tools.flush())
            self._tool_result = self._tools.finish()
        self._acc.add(out)
        return out

    @property
    def block(self) -> ReasoningBlock | None:
        """Where the reasoning block was found (known after `flush`). Made inside
        `without_history()`, its `content` is empty: the reasoning deltas carried it."""
        return self._reasoning_result.block if self._reasoning_result else None

    def finish(self) -> ParseResult:
        self.flush()
        block = self.block
        return ParseResult(
            reasoning=self._acc.reasoning,
            content=self._acc.content,
            tool_calls=self._calls(),
            block=block,
            dropped=self._tool_result.dropped if self._tool_result is not None else None,
        )

    def _calls(self) -> list[ToolCall]:
        """The calls the deltas built, each with the `raw_text` the tool stream read it from (the
        deltas do not carry it; a stream's result equals the one-shot parse's, `raw_text` included)."""
        calls = self._acc.tool_calls()
        done = self._tool_result.tool_calls if self._tool_result is not None else []
        for call, read in zip(calls, done, strict=False):
            if read.raw_text and not call.raw_text:
                set_raw_text(call, read.raw_text)
        return calls

    @property
    def accumulator(self) -> DeltaAccumulator:
        return self._acc

    def observe_tools(self, wrap: Callable[[ToolStream], ToolStream]) -> None:
        """Put `wrap(tool stream)` in the tool stream's place, before the first chunk (an observer
        of what the tool parser is fed, such as the CLI's raw call text recorder)."""
        if self._tools is not None:
            self._tools = wrap(self._tools)


class Pipeline(Closable):
    """A reasoning parser and a tool-call parser, either optional."""

    def __init__(
        self,
        reasoning: ReasoningParser | None = None,
        tools: ToolParser | None = None,
        *,
        reasoning_started: bool | None = None,
    ) -> None:
        self.reasoning = reasoning
        self.tools = tools
        self.reasoning_started = reasoning_started

    @property
    def specs(self) -> tuple[str | None, str | None]:
        def spec(p: ToolParser | ReasoningParser | None) -> str | None:
            return None if p is None else f"{p.backend}:{p.name}"

        return spec(self.reasoning), spec(self.tools)

    def parse(self, text: str, *, reasoning_started: bool | None = None, **options: Any) -> ParseResult:
        """`options` (``prompt=`` …) go to the reasoning parser, or to the tool parser when there is
        none: a parser handed out by the registry refuses one it does not take, typed."""
        if not isinstance(text, str):  # (a tool parser alone would never see empty text)
            raise InvalidInputError("parse", text)
        started = self.reasoning_started if reasoning_started is None else reasoning_started
        reasoning: str | None = None
        block = None
        content: str | None = text or None
        if self.reasoning is not None:
            r = self.reasoning.parse(text, reasoning_started=started, **options)
            reasoning, content, block = r.reasoning, r.content, r.block
        tool_options = {} if self.reasoning is not None else options
        calls = []
        dropped = None
        if self.tools is not None and (content or tool_options):
            t = self.tools.parse(content or "", **tool_options)
            content, calls, dropped = t.content, t.tool_calls, t.dropped
        return ParseResult(
            reasoning=reasoning, content=content, tool_calls=calls, block=block, dropped=dropped
        )

    def has_tool_calls(self, text: str) -> bool:
        """Whether `text` holds (the start of) a tool call this pipeline would read: the tool-call
        parsers' `has_tool_calls` (a cheap marker test where the tool parser declares markers, so
        usable on a partial stream), asked of the content the reasoning parser leaves, read with
        the pipeline's `reasoning_started`. A call written inside the reasoning is no call (the
        tool parser alone would say True); with no tool parser, False."""
        if not isinstance(text, str):
            raise InvalidInputError("has_tool_calls", text)
        if self.tools is None:
            return False
        content: str | None = text
        if self.reasoning is not None:
            content = self.reasoning.parse(text, reasoning_started=self.reasoning_started).content
        return bool(content) and bool(self.tools.has_tool_calls(content or ""))

    def close(self) -> None:
        """Close both parsers (what only they hold: see `Closable`); also at the end of a ``with``."""
        for parser in (self.reasoning, self.tools):
            close = getattr(parser, "close", None)
            if callable(close):
                close()

    def stream(self, *, reasoning_started: bool | None = None, **options: Any) -> PipelineStream:
        """`options` go where `parse` sends them."""
        started = self.reasoning_started if reasoning_started is None else reasoning_started
        r = (
            self.reasoning.stream(reasoning_started=started, **options)
            if self.reasoning is not None
            else None
        )
        tool_options = options if r is None else {}
        t = self.tools.stream(**tool_options) if self.tools is not None else None
        return PipelineStream(r, t)

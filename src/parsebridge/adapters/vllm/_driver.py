"""Per-request sessions that drive vLLM parsers the way the release's server does.

Two shapes:

* `NativeSession` (0.33+): vLLM's own per-request `Parser` (from
  `vllm.parser.ParserManager`) stepped through `ChatStreamProcessor`, which
  is exactly what its chat server calls; one-shot is `Parser.parse`.
* `ServingLoopSession` (older releases): the chat server's streaming loop
  for "auto" tool choice, re-stated here step by step: previous/current/delta
  text and token ids per chunk, reasoning first and tools after it, the
  reasoning-ended-in-prompt test, and the end-of-stream flush of argument
  text the parser had parsed but not yet streamed. See
  `_compat.ServingBehaviour` for what differs per release (read from each
  release's serving_chat.py: 0.11.0, 0.13.0, 0.15.1).

Both return vLLM objects (`DeltaMessage`, `FunctionCall`-like calls); the
translation into parsebridge models happens in `_translate`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._compat import VllmApi

#: What vLLM's streaming extraction methods take, in their order: previous text, current text,
#: delta text, previous token ids, current token ids, delta token ids.
StreamTexts = tuple[str, str, str, list[int], list[int], list[int]]


@dataclass
class RawCall:
    """A tool call as vLLM's server would return it."""

    id: str | None
    name: str
    arguments: str


@dataclass
class RawResult:
    """One-shot output as the server assembles its chat message."""

    reasoning: str | None
    content: str | None
    calls: list[RawCall] = field(default_factory=list)


def _fields(obj: Any) -> dict[str, Any] | None:
    """An object's attributes as a dict where it has one (pydantic models, dataclasses)."""
    attrs = getattr(obj, "__dict__", None)
    return attrs if isinstance(attrs, dict) else None


def _fn(tc: Any) -> tuple[str | None, str | None]:
    # Attributes are read from `__dict__` where there is one: vLLM 0.33 returns bare
    # `FunctionCall`s (no `function`, no `id`), and a missing attribute on a pydantic
    # model costs an exception inside pydantic's `__getattr__`.
    attrs = _fields(tc)
    fn = attrs.get("function") if attrs is not None else getattr(tc, "function", None)
    if fn is None:
        if attrs is not None:
            return attrs.get("name"), attrs.get("arguments")
        return getattr(tc, "name", None), getattr(tc, "arguments", None)
    if isinstance(fn, dict):
        return fn.get("name"), fn.get("arguments")
    return getattr(fn, "name", None), getattr(fn, "arguments", None)


def _raw_calls(calls: Sequence[Any] | None) -> list[RawCall]:
    out = []
    for tc in calls or ():
        name, args = _fn(tc)
        attrs = _fields(tc)
        call_id = attrs.get("id") if attrs is not None else getattr(tc, "id", None)
        out.append(RawCall(call_id, name or "", args if isinstance(args, str) else json.dumps(args)))
    return out


class ServingFlushError(RuntimeError):
    """vLLM's own serving code raises at the end of the stream (a framework bug, reproduced)."""


class NativeSession:
    """vLLM ≥ 0.33: one `vllm.parser` Parser per request, streamed through ChatStreamProcessor."""

    def __init__(
        self,
        api: VllmApi,
        parser_cls: type,
        tokenizer: Any,
        request: Any,
        prompt_token_ids: list[int],
        chat_template_kwargs: dict[str, Any] | None,
    ) -> None:
        self.api = api
        self.request = request
        self.prompt_token_ids = prompt_token_ids
        self._parser_cls = parser_cls
        # Built as the server's _make_parser does: tokenizer, request tools, template kwargs.
        self.parser = parser_cls(
            tokenizer, request.tools, chat_template_kwargs=dict(chat_template_kwargs or {}), model_config=None
        )
        self._processor: Any = None  # streaming only: a one-shot parse never builds it

    @property
    def processor(self) -> Any:
        """vLLM's per-request ChatStreamProcessor, built on the first streamed chunk."""
        if self._processor is None:
            processor = self.api.ChatStreamProcessor(
                self.request, self.parser, enable_auto_tools=True, parser_cls=self._parser_cls
            )
            # The server drops calls when the request has no tools or tool_choice
            # forbids them; parsebridge reports what the parser found.
            processor.keep_tool_calls = True
            self._processor = processor
        return self._processor

    def oneshot(self, text: str, token_ids: Sequence[int]) -> RawResult:
        self.parser.set_prompt_token_ids(self.prompt_token_ids)
        # `token_ids` is the caller's fresh list (never reused): no second copy.
        ids = token_ids if isinstance(token_ids, list) else list(token_ids)
        reasoning, content, calls = self.parser.parse(
            text, self.request, enable_auto_tools=True, model_output_token_ids=ids
        )
        if not self.request.include_reasoning:
            reasoning = None
        if not calls:
            return RawResult(reasoning, content, [])
        kept = self.api.filter_parallel_tool_calls(list(calls), self.request)
        raw = _raw_calls(kept)
        for call in raw:  # the server fills ids the parser left empty
            if not call.id:
                call.id = self.api.make_tool_call_id()
        return RawResult(reasoning, content, raw)

    def step(self, text: str, token_ids: Sequence[int], finished: bool) -> Any:
        processor = self._processor or self.processor
        if not text and not token_ids and not processor.num_output_tokens and not finished:
            return None  # the server skips empty chunks before any token (chunked prefill)
        # `token_ids` is the stepper's own fresh list (never reused): no second copy.
        ids = token_ids if isinstance(token_ids, list) else list(token_ids)
        return processor.step(text, ids, "stop" if finished else None, self.prompt_token_ids).delta


class ServingLoopSession:
    """vLLM < 0.33: the chat server's "auto" tool-choice streaming loop, for one choice."""

    def __init__(
        self,
        api: VllmApi,
        tool_cls: type | None,
        reasoning_cls: type | None,
        tokenizer: Any,
        request: Any,
        prompt_token_ids: list[int],
        chat_template_kwargs: dict[str, Any] | None,
    ) -> None:
        self.api = api
        self.behaviour = api.serving
        self.request = request
        self.prompt_token_ids = prompt_token_ids
        self.reasoning = (
            api.new_reasoning_parser(reasoning_cls, tokenizer, chat_template_kwargs)
            if reasoning_cls
            else None
        )
        auto = request.tool_choice in ("auto", None)
        self.tool = api.new_tool_parser(tool_cls, tokenizer, request) if (tool_cls and auto) else None
        # Loop state, per choice, as the server keeps it.
        self.previous_text = ""
        self.previous_token_ids: list[int] = []
        self.reasoning_ended = False
        self.added_content_delta = False
        self.num_tokens = 0

    # ------------------------------------------------------------------ one-shot

    def oneshot(self, text: str, token_ids: Sequence[int]) -> RawResult:
        reasoning: str | None = None
        content: str | None = text
        if self.reasoning is not None:
            reasoning, content = getattr(self.reasoning, self.api.reasoning_method)(
                text, request=self.request
            )
            if not getattr(self.request, "include_reasoning", True):
                reasoning = None
        if self.tool is None:
            return RawResult(reasoning, content)
        info = self.tool.extract_tool_calls(content if content is not None else "", request=self.request)
        if self.behaviour.oneshot_helper:
            if info is not None and info.tools_called:
                new_content = info.content
                if new_content and new_content.strip() == "":
                    new_content = None
                # The helper keeps only name and arguments; the message's ToolCall
                # then gets a fresh id from its default factory (make_tool_call_id),
                # so a parser's own ids (kimi_k2's "functions.NAME:0") never reach the client.
                calls = _raw_calls(info.tool_calls)
                for call in calls:
                    call.id = self.api.make_tool_call_id()
                return RawResult(reasoning, new_content, calls)
            return RawResult(reasoning, content)
        if info.tools_called:
            return RawResult(reasoning, info.content, _raw_calls(info.tool_calls))
        return RawResult(reasoning, info.content if info.content else content)

    # ------------------------------------------------------------------ streaming

    def _reasoning_streaming(self, texts: StreamTexts) -> Any:
        assert self.reasoning is not None
        return getattr(self.reasoning, self.api.reasoning_method + "_streaming")(*texts)

    def _tool_streaming(self, texts: StreamTexts) -> Any:
        assert self.tool is not None
        previous_text, current_text, delta_text, previous_ids, current_ids, delta_ids = texts
        return self.tool.extract_tool_calls_streaming(
            previous_text=previous_text,
            current_text=current_text,
            delta_text=delta_text,
            previous_token_ids=previous_ids,
            current_token_ids=current_ids,
            delta_token_ids=delta_ids,
            request=self.request,
        )

    def step(self, delta_text: str, delta_ids: Sequence[int], finished: bool) -> Any:
        output_ids = list(delta_ids)
        if not delta_text and not output_ids and not self.num_tokens and not finished:
            return None  # the server skips empty chunks before any token (chunked prefill)
        tool, rp = self.tool, self.reasoning
        previous_text, previous_ids = self.previous_text, self.previous_token_ids
        current_text, current_ids = delta_text, output_ids
        if tool is not None or rp is not None:
            current_text = previous_text + delta_text
            current_ids = previous_ids + output_ids if previous_ids else output_ids
        texts = (previous_text, current_text, delta_text, previous_ids, current_ids, output_ids)
        if tool is not None and rp is not None:
            return self._chain_step(texts, finished)
        if tool is not None:
            delta = self._tool_streaming(texts)
        elif rp is not None:
            delta = self._reasoning_streaming(texts)
        else:
            delta = self.api.new_delta(content=delta_text)
        return self._finish_step(delta, current_text, current_ids, output_ids, finished)

    def _chain_step(self, texts: StreamTexts, finished: bool) -> Any:
        """Reasoning first; the tool parser once reasoning has ended (0.13+: from the chunk that ends it)."""
        previous_text, current_text, delta_text, previous_ids, current_ids, output_ids = texts
        delta: Any = None
        if not self.reasoning_ended:
            if self.behaviour.prompt_check_first:
                delta, current_text, current_ids = self._reasoning_part_prompt_first(texts)
            else:
                delta, current_text, current_ids = self._reasoning_part_prompt_last(texts)
                if not self.reasoning_ended or not self.behaviour.transition_same_chunk:
                    return self._finish_step(delta, current_text, current_ids, output_ids, finished)
        if self.reasoning_ended:
            tool_delta_ids = output_ids
            if not self.added_content_delta:  # the tool parser's first chunk: all content so far
                self.added_content_delta = True
                previous_text, previous_ids = "", []
                delta_text, tool_delta_ids = current_text, current_ids
            delta = self._tool_streaming(
                (previous_text, current_text, delta_text, previous_ids, current_ids, tool_delta_ids)
            )
        return self._finish_step(delta, current_text, current_ids, output_ids, finished)

    def _reasoning_part_prompt_first(self, texts: StreamTexts) -> tuple[Any, str, list[int]]:
        """0.13+: "did the prompt end reasoning?" before the reasoning parser sees the chunk.

        (delta, current text, current ids): what the tool parser sees if reasoning has ended.
        """
        rp = self.reasoning
        assert rp is not None
        current_text, current_ids, output_ids = texts[1], texts[4], texts[5]
        prompt_ids = self.prompt_token_ids
        if prompt_ids and rp.is_reasoning_end(prompt_ids):
            self.reasoning_ended = True
            return None, current_text, output_ids
        delta = self._reasoning_streaming(texts)
        if rp.is_reasoning_end(output_ids):
            self.reasoning_ended = True
            current_ids = rp.extract_content_ids(output_ids)
            current_text, delta = self._take_content(delta)
        return delta, current_text, current_ids

    def _reasoning_part_prompt_last(self, texts: StreamTexts) -> tuple[Any, str, list[int]]:
        """0.11: the reasoning parser sees the chunk first, then the prompt and the chunk are tested."""
        rp = self.reasoning
        assert rp is not None
        current_text, current_ids, output_ids = texts[1], texts[4], texts[5]
        delta = self._reasoning_streaming(texts)
        prompt_ids = self.prompt_token_ids
        if prompt_ids and rp.is_reasoning_end(prompt_ids):
            self.reasoning_ended = True
            current_ids = output_ids
            current_text, delta = self._take_content(delta)
        if rp.is_reasoning_end(output_ids):
            self.reasoning_ended = True
            current_ids = rp.extract_content_ids(output_ids)
            current_text, delta = self._take_content(delta)
        return delta, current_text, current_ids

    @staticmethod
    def _take_content(delta: Any) -> tuple[str, Any]:
        """On the reasoning→content switch the chunk's content is held for the tool parser."""
        if delta is not None and delta.content:
            text = delta.content
            delta.content = None
            return text, delta
        return "", delta

    def _finish_step(
        self, delta: Any, current_text: str, current_ids: list[int], output_ids: list[int], finished: bool
    ) -> Any:
        if self.tool is not None or self.reasoning is not None:
            self.previous_text = current_text
            self.previous_token_ids = current_ids
        self.num_tokens += len(output_ids)
        if delta is None:
            if not finished:
                return None
            delta = self.api.new_delta()
        if finished:
            delta = self._flush_unstreamed_args(delta)
        return delta

    def _flush_unstreamed_args(self, delta: Any) -> Any:
        """The server's end-of-stream check for arguments parsed but never streamed."""
        tool = self.tool
        if tool is None or not delta.tool_calls:
            return delta
        first = delta.tool_calls[0]
        if not first or not first.function:
            return delta
        _name, first_args = _fn(first)
        if first_args is None:
            return delta
        api = self.api
        called = len(tool.prev_tool_call_arr) > 0
        index = len(tool.prev_tool_call_arr) - 1 if called else 0
        latest = len(first_args) if isinstance(first_args, str) else 0
        try:
            expected = json.dumps(tool.prev_tool_call_arr[index].get("arguments", {}), ensure_ascii=False)
            actual = tool.streamed_args_for_tool[index]
        except (IndexError, KeyError, AttributeError, TypeError) as exc:
            # The server indexes the parser's bookkeeping without a guard, so a
            # parser that streams call deltas but never fills prev_tool_call_arr /
            # streamed_args_for_tool makes the server itself fail the stream here.
            raise ServingFlushError(
                f"vLLM {api.version}'s chat server fails the same way in its end-of-stream check of "
                f"unstreamed tool arguments ({type(exc).__name__}: {exc})"
            ) from exc
        if latest > 0:
            actual = actual[:-latest]
        remaining = expected.replace(actual, "", 1)
        if self.behaviour.remaining_args == "preserve":
            original = next((tc for tc in delta.tool_calls if tc.index == index), None)
            name = _fn(original)[0] if original is not None else None
            return api.new_delta(
                tool_calls=[
                    api.DeltaToolCall(
                        index=index,
                        id=original.id if original is not None else None,
                        type=original.type if original is not None else None,
                        function=api.DeltaFunctionCall(name=name, arguments=remaining),
                    )
                ]
            )
        return api.new_delta(
            tool_calls=[api.DeltaToolCall(index=index, function=api.DeltaFunctionCall(arguments=remaining))]
        )

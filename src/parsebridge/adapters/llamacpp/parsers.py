"""`llamacpp:NAME` parser objects: llama.cpp's chat parsing (common/chat.cpp) through the harness.

Every parser renders one request through its chat template the way llama-server does
(`common_chat_templates_apply` with the tools and the request's switches) and parses with the
parser llama.cpp built for it (`common_chat_parse`). One-shot: the whole text, not partial.
Streams: each `feed` is one engine step: the harness parses all the text so far with
``is_partial`` and returns the difference from the previous message
(`common_chat_msg_diff::compute_diffs`, as llama-server streams); `flush` is the server's final
step (nothing added, not partial).

llama.cpp parses reasoning and tool calls in one pass; the three kinds differ in the request:

* a tool parser renders with the tools and thinking off (the output it reads opened no reasoning
  block); what llama.cpp reads as reasoning all the same is the result's ``reasoning``;
* a reasoning parser renders without tools (tool-call markup stays in content);
* a pipeline renders with both, as llama-server does by default.

``reasoning_started`` (the prompt opened the reasoning block) is the request's ``enable_thinking``:
True/False render with thinking on/off, None leaves llama-server's default (on where the template
supports it; a tool parser: off). The options are the request fields llama-server reads:
``tool_choice`` (a string; any other value is ``auto``, as the server reads it),
``chat_template_kwargs`` (``enable_thinking`` among them overrides, as in the server),
``parallel_tool_calls``, ``reasoning_format`` (llama-server's default ``auto``; ``none`` leaves
the reasoning in the content, and puts back there the reasoning markers the prompt opened),
``messages`` (the conversation rendered before the output; a user turn by default).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    ParseResult,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.errors import (
    InvalidInputError,
    ServerUnavailableError,
    UnsupportedOptionError,
    call_typed,
    refused_chunk,
)
from ...protocol.models import (
    make_call_delta,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)
from ...protocol.tools import openai_tool
from .._common import locate_reasoning
from .._stepped import (
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
    closed_error,
    record_into,
)
from ._harness import Harness, harness
from ._templates import load, snapshot

#: The conversation rendered before the output when a request gives none.
DEFAULT_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Hello"}]


def _tool_entry(tool: ToolSpec) -> dict[str, Any]:
    return dict(openai_tool(tool))


def _template_kwargs(label: str, given: Any) -> dict[str, Any]:
    """``chat_template_kwargs`` as llama-server takes them: an object, whose ``enable_thinking``
    (the request's thinking switch) is a boolean or absent (the server refuses a string)."""
    if given is None:
        return {}
    spec = f"llamacpp:{label}"
    if not isinstance(given, dict):
        reason = "it is the template's extra variables, a dict (an object in a request)"
        raise UnsupportedOptionError(spec, "chat_template_kwargs", given, reason)
    if isinstance(given.get("enable_thinking"), str):
        reason = 'llama-server refuses it: invalid type for "enable_thinking" (expected boolean, got string)'
        raise UnsupportedOptionError(spec, "chat_template_kwargs", given, reason)
    return dict(given)


class Rendered:
    """One request rendered through a template: the apply request, its harness, and its answer."""

    def __init__(
        self,
        name: str,
        label: str,
        tools: Sequence[ToolSpec] | None,
        *,
        thinking: bool | None,
        options: dict[str, Any],
    ) -> None:
        snap = snapshot()
        template = load(name, None if snap is None else str(snap.root))
        assert snap is not None  # the backend's require() ran before any parser is built
        self.label = label
        self.harness: Harness = harness(snap)
        kwargs = _template_kwargs(label, options.get("chat_template_kwargs"))
        choice = options.get("tool_choice", "auto")
        self.apply: dict[str, Any] = {
            "template": template.for_tools(bool(tools)),
            "bos": template.bos,
            "eos": template.eos,
            "messages": list(options.get("messages") or DEFAULT_MESSAGES),
            "tools": [_tool_entry(t) for t in tools or ()],
            "tool_choice": choice if isinstance(choice, str) else "auto",
            "reasoning_format": str(options.get("reasoning_format") or "auto"),
            "parallel_tool_calls": options.get("parallel_tool_calls"),
            "kwargs": {k: json.dumps(v) for k, v in kwargs.items()},
        }
        if isinstance(kwargs.get("enable_thinking"), bool):
            thinking = kwargs["enable_thinking"]
        if thinking is not None:  # None: the server's default (on where the template supports it)
            self.apply["enable_thinking"] = thinking

    def request(self, reasoning_started: bool | None) -> dict[str, Any]:
        if reasoning_started is None:
            return self.apply
        return {**self.apply, "enable_thinking": reasoning_started}

    def session(self, reasoning_started: bool | None = None) -> tuple[int, dict[str, Any]]:
        return self.harness.session(self.request(reasoning_started), self.label)

    def parse(
        self, text: str, reasoning_started: bool | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The message llama.cpp parses from a complete `text`, and the apply answer."""
        harness = self.harness
        with harness.lock:  # the session's number is this harness's until the parse is answered
            sid, info = self.session(reasoning_started)
            request = {"op": "parse", "session": sid, "text": text, "partial": False}
            answer = harness.call(request, self.label, harness.generation)
        return answer["message"], info


def markers_of(info: dict[str, Any]) -> tuple[str | None, str | None]:
    """The reasoning markers llama.cpp found in the template (to locate the block in the text)."""
    ends = info.get("thinking_end_tags") or []
    return info.get("thinking_start_tag") or None, (ends[0] if ends else None)


def _calls(message: dict[str, Any]) -> list[ToolCall]:
    return [make_tool_call(c["name"], c["arguments"], c.get("id") or None) for c in message["tool_calls"]]


def _delta(diffs: list[dict[str, Any]]) -> StreamDelta:
    """One step's diffs as one delta (llama-server sends each diff as a chunk of that step)."""
    if not diffs:
        return make_delta()
    calls: list[ToolCallDelta] = []
    for d in diffs:
        call = d.get("tool_call_delta")
        if call is not None:
            calls.append(
                make_call_delta(
                    d["tool_call_index"], call["id"] or None, call["name"] or None, call["arguments"]
                )
            )
    content = "".join(d["content_delta"] for d in diffs)
    reasoning = "".join(d["reasoning_content_delta"] for d in diffs)
    return make_delta(content, reasoning, calls or None)


class LlamacppStepper:
    """One llama-server stream: a harness stream stepped per `feed` (the `_stepped.Stepper` protocol)."""

    def __init__(self, rendered: Rendered, reasoning_started: bool | None = None) -> None:
        self.spec = ("llamacpp", rendered.label)
        self.text_seen: list[str] = []
        self._harness = rendered.harness
        self._label = rendered.label
        with self._harness.lock:  # the stream's number is this harness's: its steps say so
            sid, self.info = rendered.session(reasoning_started)
            self._generation = self._harness.generation
            opened = self._harness.call(
                {"op": "open_stream", "session": sid}, rendered.label, self._generation
            )
        self._stream = opened["stream"]
        self._closed = False
        self._pid = os.getpid()  # the process whose harness holds the stream (`_step`)

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        self._record = record_into(acc)
        return self.feed

    def _step(self, text: str, final: bool) -> StreamDelta:
        if os.getpid() != self._pid:  # a forked copy: the stream lives in the parent's harness
            raise ServerUnavailableError(
                "llamacpp",
                f"this stream was opened in process {self._pid}, of which this one is a fork: its "
                "state is in that process's harness; start a new stream() here",
            )
        request = {"op": "step", "stream": self._stream, "text": text, "final": final}
        answer = call_typed(
            "llamacpp",
            self._label,
            "stream.flush" if final else "stream.feed",
            lambda: self._harness.call(request, self._label, self._generation),
        )
        return _delta(answer["diffs"])

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if self._closed or not isinstance(text, str):
            raise refused_chunk(text)
        self.text_seen.append(text)
        delta = self._step(text, False)
        self._record(delta.content, delta.reasoning, delta.tool_calls)
        return delta

    def feed_many(self, texts: Sequence[str]) -> list[StreamDelta]:
        """`feed` for each text in turn, in one exchange with the harness (`Harness.pipeline`): the
        same steps, deltas and errors as feeding them one by one, without a wait per step."""
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInputError("stream.feed", text)
        if self._closed:
            raise closed_error()
        answers = call_typed(
            "llamacpp",
            self._label,
            "stream.feed",
            lambda: self._harness.steps(self._stream, texts, self._label, self._generation),
        )
        deltas: list[StreamDelta] = []
        for text, answer in zip(texts, answers, strict=True):
            self.text_seen.append(text)
            if not answer.get("ok"):  # the step that failed; the stream ended there, as in the server
                raise BackendError("llamacpp", self._label, "step", str(answer.get("error")))
            delta = _delta(answer["diffs"])
            self._record(delta.content, delta.reasoning, delta.tool_calls)
            deltas.append(delta)
        return deltas

    def flush(self) -> StreamDelta:
        if self._closed:
            return make_delta()
        self._closed = True
        return self._step("", True)

    def pending_text(self) -> str:
        return ""

    def markers(self) -> tuple[str | None, str | None]:
        return markers_of(self.info)


class _FeedsMany:
    """`feed_many`: a stream's chunks in one exchange with the harness (`LlamacppStepper.feed_many`);
    the conformance runner and compare feed a whole stream so."""

    _stepper: LlamacppStepper

    def feed_many(self, texts: Sequence[str]) -> list[StreamDelta]:
        return self._stepper.feed_many(texts)


class LlamacppToolStream(_FeedsMany, SteppedToolStream):
    """A `SteppedToolStream` that also takes all its chunks at once."""


class LlamacppReasoningStream(_FeedsMany, SteppedReasoningStream):
    """A `SteppedReasoningStream` that also takes all its chunks at once."""


class LlamacppPipelineStream(_FeedsMany, SteppedPipelineStream):
    """A `SteppedPipelineStream` that also takes all its chunks at once."""


class LlamacppToolParser(ToolParserBase):
    """`llamacpp:NAME` tool-call parser: the template's parser, rendered with the tools."""

    backend = "llamacpp"

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        # Thinking off: the output a tool parser reads opened no reasoning block (with it on,
        # DeepSeek V3.1's template opens one in the prompt and the whole output is reasoning).
        self.rendered = Rendered(name, name, self.tools, thinking=False, options=options)

    def parse(self, text: str) -> ToolParseResult:
        msg, _ = call_typed("llamacpp", self.name, "parse", lambda: self.rendered.parse(text))
        return make_tool_result(
            msg["content"] or None, _calls(msg), reasoning=msg["reasoning_content"] or None
        )

    def stream(self, **_: Any) -> LlamacppToolStream:
        return LlamacppToolStream(LlamacppStepper(self.rendered))


class LlamacppReasoningParser(ReasoningParserBase):
    """`llamacpp:NAME` reasoning parser: the template's parser, rendered without tools."""

    backend = "llamacpp"

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.rendered = Rendered(name, name, None, thinking=None, options=options)

    def parse(self, text: str, *, reasoning_started: bool | None = None, **_: Any) -> ReasoningParseResult:
        msg, info = call_typed(
            "llamacpp", self.name, "parse", lambda: self.rendered.parse(text, reasoning_started)
        )
        reasoning = msg["reasoning_content"] or None
        return make_reasoning_result(
            reasoning, msg["content"] or None, locate_reasoning(text, reasoning, *markers_of(info))
        )

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> LlamacppReasoningStream:
        stepper = LlamacppStepper(self.rendered, reasoning_started)
        return LlamacppReasoningStream(stepper, stepper.markers)


class LlamacppPipeline(FrameworkPipeline):
    """llama-server's own pass: one template parser for reasoning and tool calls together."""

    backend = "llamacpp"

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        # One template parses both: the tool parser's (the one that renders the tools), also
        # where a family's reasoning row names another template of the same model line.
        label = self.tool_name
        self.rendered = Rendered(label, label, tools, thinking=None, options=options)

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ParseResult:
        started = self._started(reasoning_started)
        msg, info = call_typed(
            "llamacpp", self.tool_name, "parse", lambda: self.rendered.parse(text, started)
        )
        reasoning = msg["reasoning_content"] or None
        return ParseResult(
            reasoning=reasoning,
            content=msg["content"] or None,
            tool_calls=_calls(msg),
            block=locate_reasoning(text, reasoning, *markers_of(info)),
        )

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> LlamacppPipelineStream:  # type: ignore[override]
        stepper = LlamacppStepper(self.rendered, self._started(reasoning_started))
        return LlamacppPipelineStream(stepper, stepper.markers)

"""parsebridge parser objects backed by Dynamo's frontend (see `_frontend`).

A parser object holds configuration only; the frontend is started, and the
parser pair registered on it, the first time one parses. One-shot: the
whole text is one engine step of a non-streamed request, and the answer's
message is the result. Streamed: one streamed request per stream; each
`feed` is one engine step, and returns what the frontend streamed for that
step (read up to the step's fence: deterministic, see `_served`); `flush`
ends the engine with ``finish_reason="stop"`` in an empty last step and
returns what the frontend sent from then to the end.

What Dynamo's request carries: the parser's tools (as ``tools``), and the
options `tool_choice`, `chat_template_kwargs` and `reasoning_effort` when
given. ``reasoning_started`` is accepted for protocol compatibility but
Dynamo's parsers decide where reasoning starts themselves (from the parser
name): the frontend is not told about the prompt.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    ParseResult,
    ParserUnsupportedError,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
    family_table,
)
from ...protocol.models import (
    make_call_delta,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)
from .._common import locate_reasoning
from .._served import HttpStatusError, SseReader, open_sse, post_json, read_to_fence
from .._served.steps import Script
from .._stepped import (
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
    closed_error,
    record_into,
)
from . import REQUEST_OPTIONS
from ._frontend import DynamoFrontend, frontend

PATH = "/v1/chat/completions"
#: Seconds a stream waits for the frontend's answer to one step before it fails (BackendError).
STEP_TIMEOUT = 60.0


def _markers(reasoning: str | None) -> tuple[str | None, str | None]:
    """The reasoning format's markers for a Dynamo reasoning parser name (to locate the block)."""
    if reasoning is None:
        return None, None
    fam = family_table().get("reasoning", reasoning)
    if fam is None:
        return None, None
    from ...formats import reasoning_format

    try:
        fmt = reasoning_format(fam.name)
    except Exception:  # a family without a reasoning format of its own
        return None, None
    return fmt.start or None, fmt.end or None


class DynamoEngine:
    """One parser pair on the frontend: the request body, one-shot calls, and new streams."""

    def __init__(
        self,
        reasoning: str | None,
        tool: str | None,
        tools: Sequence[ToolSpec] | None = None,
        **options: Any,
    ) -> None:
        self.reasoning, self.tool = reasoning, tool
        self.label = "+".join(n for n in (reasoning, tool) if n)
        self.tools = list(tools or [])
        self.fields = {k: options[k] for k in REQUEST_OPTIONS if options.get(k) is not None}
        self.markers = _markers(reasoning)
        self._model: str | None = None
        self._frontend: DynamoFrontend | None = None

    def model(self) -> tuple[DynamoFrontend, str]:
        """The frontend (started) and the model name of this pair (registered on first use)."""
        fe = frontend()
        model = self._model
        if model is None or self._frontend is not fe or not fe.running:
            model = self._model = fe.model_for(self.reasoning, self.tool)
            self._frontend = fe
        return fe, model

    def body(self, model: str, key: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": key}],
            "stream": stream,
            **self.fields,
        }
        if self.tools:
            body["tools"] = self.tools
        if stream:  # choice 1 carries the fences; usage on every chunk keeps empty deltas coming
            body["n"] = 2
            body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
        return body

    def oneshot(self, text: str) -> dict[str, Any]:
        """The frontend's message for `text` as one engine step, non-streamed."""
        fe, model = self.model()
        script = fe.board.open()
        try:
            script.put(fe.folder.encode(text))
            script.end()
            answer = post_json(fe.ensure(), PATH, self.body(model, script.key, False))
        except HttpStatusError as exc:
            raise BackendError("dynamo", self.label, "chat completion", str(exc)) from exc
        except OSError as exc:
            raise BackendError.wrapping("dynamo", self.label, "chat completion", exc) from exc
        finally:
            script.cancel()
        choices = answer.get("choices") or []
        if not choices:
            raise BackendError("dynamo", self.label, "chat completion", f"no choices in {answer!r}")
        return choices[0].get("message") or {}

    def calls(self, message: dict[str, Any]) -> list[Any]:
        out = []
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            out.append(make_tool_call(fn.get("name") or "", fn.get("arguments") or "", call.get("id")))
        return out


def _choice0(event: Any) -> tuple[Any | None, bool]:
    """The fence test: choice 0's part of an event, and whether choice 1 (the fence) is in it."""
    choices = event.get("choices")
    if choices is None:
        if "error" in event:
            raise BackendError("dynamo", "stream", "chat completion", str(event["error"]))
        return None, False
    own = [c for c in choices if c.get("index", 0) == 0]
    return (own or None), any(c.get("index") == 1 for c in choices)


def _delta(parts: list[Any]) -> StreamDelta:
    """One `StreamDelta` from choice-0 chunks (content, reasoning and call fragments, in order)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCallDelta] = []
    for chunk in parts:
        for choice in chunk:
            d = choice.get("delta") or {}
            if d.get("content"):
                content.append(d["content"])
            if d.get("reasoning_content"):
                reasoning.append(d["reasoning_content"])
            for tc in d.get("tool_calls") or ():
                fn = tc.get("function") or {}
                calls.append(
                    make_call_delta(
                        tc.get("index", 0), tc.get("id"), fn.get("name"), fn.get("arguments") or ""
                    )
                )
    return make_delta("".join(content), "".join(reasoning), calls or None)


def _abandon(script: Script, reader: list[SseReader]) -> None:
    script.cancel()
    for r in reader:
        r.close()


class DynamoStepper:
    """One streamed request; each feed one engine step (the `_stepped.Stepper` protocol)."""

    def __init__(self, engine: DynamoEngine) -> None:
        self.engine = engine
        self.text_seen: list[str] = []
        self.spec = ("dynamo", engine.label)
        self.closed = False
        self._fe: DynamoFrontend | None = None
        self._script: Script | None = None
        self._reader: list[SseReader] = []

    def _open(self) -> tuple[DynamoFrontend, Script, SseReader]:
        if self._script is None:
            fe, model = self.engine.model()
            if fe.api is not None and not fe.api.streams:
                raise ParserUnsupportedError(
                    "dynamo",
                    self.engine.label,
                    f"streaming needs ai-dynamo-runtime 1.3 or newer (installed: {fe.api.version}): "
                    "older frontends put every engine output on choice 0, so a stream's steps cannot "
                    "be told apart; one-shot parsing works",
                )
            script = fe.board.open()
            try:
                reader = open_sse(fe.ensure(), PATH, self.engine.body(model, script.key, True), STEP_TIMEOUT)
            except Exception as exc:
                script.cancel()
                raise self._error(exc) from exc
            self._fe, self._script = fe, script
            self._reader.append(reader)
            weakref.finalize(self, _abandon, script, self._reader)
        assert self._fe is not None
        return self._fe, self._script, self._reader[0]

    def _error(self, exc: Exception) -> BackendError:
        if isinstance(exc, BackendError):
            return exc
        return BackendError.wrapping("dynamo", self.engine.label, "stream", exc)

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        record, step = record_into(acc), self.feed

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            delta = step(text, token_ids)
            record(delta.content, delta.reasoning, delta.tool_calls)
            return delta

        return feed

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """`token_ids` are ignored: the chunk's text is encoded with the frontend's vocabulary."""
        if self.closed:
            raise closed_error()
        self.text_seen.append(text)
        fe, script, reader = self._open()
        script.put(fe.folder.encode(text))
        try:
            parts, fenced = read_to_fence(reader, _choice0)
        except Exception as exc:
            raise self._error(exc) from exc
        if not fenced:
            raise BackendError("dynamo", self.engine.label, "stream", "the frontend ended the stream early")
        return _delta(parts)

    def flush(self) -> StreamDelta:
        self.closed = True
        _, script, reader = self._open()
        script.end()
        try:
            parts = [own for event in reader.rest() if (own := _choice0(event)[0]) is not None]
        except Exception as exc:
            raise self._error(exc) from exc
        finally:
            reader.close()
        return _delta(parts)

    def pending_text(self) -> str:
        """Not known from outside the frontend: Dynamo does not say what it holds back."""
        return ""


class DynamoToolParser(ToolParserBase):
    """`dynamo:NAME` tool-call parser: Dynamo's frontend with ``tool_call_parser=NAME``."""

    backend = "dynamo"

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        self.engine = DynamoEngine(None, name, self.tools, **options)

    def parse(self, text: str) -> ToolParseResult:
        message = self.engine.oneshot(text)
        return make_tool_result(message.get("content") or None, self.engine.calls(message))

    def has_tool_calls(self, text: str) -> bool:
        return bool(self.parse(text).tool_calls)

    def stream(self, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(DynamoStepper(self.engine))


class DynamoReasoningParser(ReasoningParserBase):
    """`dynamo:NAME` reasoning parser: Dynamo's frontend with ``reasoning_parser=NAME``."""

    backend = "dynamo"

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.engine = DynamoEngine(name, None, None, **options)
        self.markers = tuple(m for m in self.engine.markers if m)  # type: ignore[misc]

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        message = self.engine.oneshot(text)
        reasoning = message.get("reasoning_content") or None
        content = message.get("content") or None
        start, end = self.engine.markers
        block = locate_reasoning(text, reasoning, start, end) if reasoning else None
        return make_reasoning_result(reasoning, content, block)

    def stream(self, *, reasoning_started: bool | None = None, **_: Any) -> SteppedReasoningStream:
        engine = self.engine
        return SteppedReasoningStream(DynamoStepper(engine), lambda: engine.markers)


class DynamoPipeline(FrameworkPipeline):
    """Dynamo's own reasoning→tool chain: one frontend model with both parsers."""

    backend = "dynamo"

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self.engine = DynamoEngine(self.reasoning_name, self.tool_name, tools, **options)

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ParseResult:
        engine = self.engine
        message = engine.oneshot(text)
        reasoning = message.get("reasoning_content") or None
        start, end = engine.markers
        return ParseResult(
            reasoning=reasoning,
            content=message.get("content") or None,
            tool_calls=engine.calls(message),
            block=locate_reasoning(text, reasoning, start, end) if reasoning else None,
        )

    def stream(  # type: ignore[override]
        self, *, reasoning_started: bool | None = None, **_: Any
    ) -> SteppedPipelineStream:
        engine = self.engine
        return SteppedPipelineStream(DynamoStepper(engine), lambda: engine.markers)

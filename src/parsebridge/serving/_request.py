"""One request's view of an `OutputProcessor`: its tool handling, one-shot results and streams.

`RequestProcessor` is what `OutputProcessor.request(...)` returns: the
request's tools and ``tool_choice`` decide which parsers run (`_mode`), and
it builds the per-choice streaming state (`ChoiceStream`) and one-shot
results (`ChoiceOutput`). docs/serving.md has the tool_choice table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..policy.guard import GuardedReasoningParser, GuardedToolParser
from ..protocol import ParseResult, Pipeline, ReasoningParseResult, ToolSpec
from ..protocol.errors import InvalidInputError, UnsupportedOptionError
from ..protocol.streams import DeltaAccumulator
from ._choice import ChoiceStream, _TextStage, as_backend_error
from ._chunks import ChunkStream, check_finish_reason
from ._forced import NamedArgumentsStage, RequiredArrayStage, forced_tool_name

log = logging.getLogger("parsebridge")

ToolChoice = str | dict[str, Any] | None


class OutputProcessor(Protocol):
    """What a `RequestProcessor` reads of its `processor.OutputProcessor` (no import circle)."""

    reasoning_parser: GuardedReasoningParser | None
    on_error: Any
    cumulative: bool
    reasoning_key: str

    @property
    def forced_format(self) -> str: ...
    @property
    def named_finish_reason(self) -> str: ...
    @property
    def server_none_mode(self) -> Literal["drop", "keep"] | None: ...
    def _tool_parser_for(self, tools: Any, tool_choice: ToolChoice = None) -> GuardedToolParser | None: ...
    def _native_pipeline_for(self, tools: Any, tool_choice: ToolChoice = None) -> Pipeline | None: ...


@dataclass(frozen=True)
class _Mode:
    kind: Literal["none", "auto", "named", "required"]
    name: str | None = None


def _mode(tool_choice: ToolChoice, tools: Sequence[ToolSpec] | None) -> _Mode:
    """Which tool handling a request gets (servers parse tools only when the request declares some).

    A tool_choice that is none of OpenAI's forms is refused with or without tools (without, it was
    read as "none"); like the servers' 400, it is the request's mistake: `UnsupportedOptionError`.
    """
    if tool_choice is None or tool_choice in ("auto", "none", "required"):
        mode = _Mode("auto" if tool_choice is None else tool_choice)  # type: ignore[arg-type]
    else:
        name = forced_tool_name(tool_choice)
        if name is None:
            raise _refused(tool_choice, "it is 'none', 'auto', 'required' or a named function")
        mode = _Mode("named", name)
    if not tools:
        if mode.kind in ("required", "named"):
            raise _refused(tool_choice, "'required' or a named function needs the request's tools")
        return _Mode("none")
    return mode


def _refused(tool_choice: object, reason: str) -> UnsupportedOptionError:
    return UnsupportedOptionError("OutputProcessor", "tool_choice", tool_choice, reason)


@dataclass
class ChoiceOutput:
    """One choice of a one-shot response."""

    index: int
    result: ParseResult
    message: dict[str, Any]
    finish_reason: str

    def to_openai(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "message": self.message,
            "logprobs": None,
            "finish_reason": self.finish_reason,
        }


class RequestProcessor:
    """One request's view of an `OutputProcessor`: tools, tool_choice, prompt state, id, model."""

    def __init__(
        self,
        processor: OutputProcessor,
        *,
        tools: list[ToolSpec],
        tool_choice: ToolChoice,
        reasoning_started: bool | None,
        request_id: str,
        model: str,
        prompt_kwargs: dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> None:
        if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
            raise UnsupportedOptionError(
                "OutputProcessor", "parallel_tool_calls", parallel_tool_calls, "it is True, False or None"
            )
        #: At most this many calls go to the client (``parallel_tool_calls=False``: the first, as
        #: vLLM's server keeps); None: all.
        self.max_calls = 1 if parallel_tool_calls is False else None
        self.processor = processor
        self.prompt_kwargs = dict(prompt_kwargs or {})
        self.tools = tools
        self.tool_choice = tool_choice
        self.mode = _mode(tool_choice, tools)
        if (
            self.mode.kind == "named"
            and tools
            and self.mode.name
            not in {(t.get("function") or t).get("name") for t in tools if isinstance(t, dict)}
        ):
            raise _refused(
                tool_choice, f"it names {self.mode.name!r}, which is not among the request's tools"
            )
        self.reasoning_started = reasoning_started
        self.request_id = request_id
        self.model = model
        self.created = int(time.time())

    # ------------------------------------------------------------------ parts
    @property
    def _server_none(self) -> Literal["drop", "keep"] | None:
        """No tools / ``tool_choice="none"`` on a framework tool parser: what its server does (else None)."""
        return self.processor.server_none_mode if self.mode.kind == "none" else None

    def _uses_tool_parser(self) -> bool:
        kind = self.mode.kind
        return (
            kind == "auto"
            or (kind in ("named", "required") and self.processor.forced_format != "json")
            or self._server_none is not None
        )

    def _parser_choice(self) -> ToolChoice:
        """The tool_choice a framework parser is built with for this request (None: the default)."""
        if self._server_none is not None:
            return "none"
        if self.mode.kind == "required" and self.processor.forced_format == "server":
            return "required"
        if self.mode.kind == "named" and self.processor.forced_format == "server":
            return {"type": "function", "function": {"name": self.mode.name}}
        return None

    def _parsers(self) -> tuple[GuardedToolParser | None, Pipeline | None]:
        """The request's tool parser and native pipeline (None where the request runs none)."""
        if not self._uses_tool_parser():
            return None, None
        p = self.processor
        choice = self._parser_choice()
        tp = p._tool_parser_for(self.tools, choice)
        pipe = p._native_pipeline_for(self.tools, choice) if tp is not None else None
        return tp, pipe

    def _forced_stage(self) -> Any:
        if self.mode.kind == "named" and self.processor.forced_format == "json":
            assert self.mode.name is not None
            return NamedArgumentsStage(self.mode.name)
        if self.mode.kind == "required" and self.processor.forced_format == "json":
            return RequiredArrayStage()
        return None

    def choice_stream(self) -> ChoiceStream:
        """Fresh per-choice streaming state (protocol-level deltas; `stream()` gives chunks)."""
        p = self.processor
        rp = p.reasoning_parser
        tp, pipe = self._parsers()
        common: dict[str, Any] = {
            "mode": self.mode.kind,
            "on_error": p.on_error,
            "request_id": self.request_id,
            "cumulative": p.cumulative,
            "named_finish_reason": p.named_finish_reason,
            "drop_calls": self._server_none == "drop",
            "max_calls": self.max_calls,
        }
        if pipe is not None:
            try:
                pstream = pipe.stream(reasoning_started=self.reasoning_started, **self.prompt_kwargs)
            except Exception as exc:
                raise as_backend_error(exc, tp, "stream", self.request_id) from exc
            return ChoiceStream(reasoning=None, stage=None, pipeline=pstream, owners=(rp, tp), **common)
        rstream = (
            rp.stream(
                reasoning_started=self.reasoning_started, transcript=self.request_id, **self.prompt_kwargs
            )
            if rp
            else None
        )
        stage: Any = None
        forced = self._forced_stage()
        if forced is not None:
            stage = _TextStage(forced)
        elif tp is not None:
            stage = tp.stream(transcript=self.request_id)
        return ChoiceStream(reasoning=rstream, stage=stage, owners=(rp, tp), **common)

    def _oneshot(self, text: str) -> ParseResult:
        result = self._oneshot_parts(text)
        if result.tool_calls and self._server_none == "drop":
            return ParseResult(reasoning=result.reasoning, content=result.content)
        if self.max_calls is not None and len(result.tool_calls) > self.max_calls:
            return result.model_copy(update={"tool_calls": result.tool_calls[: self.max_calls]})
        return result

    def _oneshot_parts(self, text: str) -> ParseResult:
        p = self.processor
        rp = p.reasoning_parser
        tp, pipe = self._parsers()
        if pipe is not None:
            try:
                return pipe.parse(text, reasoning_started=self.reasoning_started, **self.prompt_kwargs)
            except Exception as exc:
                err = as_backend_error(exc, tp, "parse", self.request_id)
                if p.on_error == "raise":
                    raise err from exc
                log.warning(
                    "parser error in request %s, the output is plain content: %s", self.request_id, err
                )
                return ParseResult(content=text or None)
        reasoning = None
        content: str | None = text or None
        if rp is not None:
            r = self._reasoning_parse(rp, text)
            reasoning, content = r.reasoning, r.content
        forced = self._forced_stage()
        if forced is not None:
            # The same stage as streaming, over the whole text: one-shot == streamed by construction.
            acc = DeltaAccumulator()
            acc.add(forced.feed(content or ""))
            acc.add(forced.flush())
            return ParseResult(reasoning=reasoning, content=acc.content, tool_calls=acc.tool_calls())
        if tp is not None and content:
            t = tp.parse(content, transcript=self.request_id)
            return ParseResult(reasoning=reasoning, content=t.content, tool_calls=t.tool_calls)
        return ParseResult(reasoning=reasoning, content=content)

    def _reasoning_parse(self, rp: GuardedReasoningParser, text: str) -> ReasoningParseResult:
        if not self.prompt_kwargs:
            return rp.parse(text, reasoning_started=self.reasoning_started, transcript=self.request_id)
        # The guard's parse does not forward the prompt: call the parser under the same policy.
        try:
            return rp.inner.parse(text, reasoning_started=self.reasoning_started, **self.prompt_kwargs)
        except Exception as exc:
            err = as_backend_error(exc, rp, "parse", self.request_id)
            if self.processor.on_error == "raise":
                raise err from exc
            log.warning("parser error in request %s, the output is plain content: %s", self.request_id, err)
            return ReasoningParseResult(content=text or None)

    # ------------------------------------------------------------------ one-shot
    def message_of(self, result: ParseResult) -> dict[str, Any]:
        """An OpenAI chat `message` dict for a parse result."""
        message: dict[str, Any] = {"role": "assistant", "content": result.content}
        if result.reasoning is not None:
            message[self.processor.reasoning_key] = result.reasoning
        if result.tool_calls:
            message["tool_calls"] = [c.to_openai() for c in result.tool_calls]
        return message

    def finish_reason_of(self, result: ParseResult, engine_reason: str | None) -> str:
        reason = engine_reason or "stop"
        if result.tool_calls and reason == "stop":
            return self.processor.named_finish_reason if self.mode.kind == "named" else "tool_calls"
        return reason

    def parse(self, text: str, finish_reason: str | None = None, index: int = 0) -> ChoiceOutput:
        """A whole output → message and finish reason (`length` etc. pass through)."""
        if not isinstance(text, str):
            raise InvalidInputError("parse", text)
        result = self._oneshot(text)
        return ChoiceOutput(
            index, result, self.message_of(result), self.finish_reason_of(result, finish_reason)
        )

    def response(
        self,
        outputs: str | Sequence[str],
        finish_reasons: str | Sequence[str | None] | None = None,
        *,
        usage: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A full ``chat.completion`` dict; `usage` is included when given."""
        if (  # (bytes would be n ints; a number was "'int' object is not iterable", a dict its keys)
            outputs is None
            or isinstance(outputs, bytes | bytearray | Mapping)
            or not isinstance(outputs, str | Iterable)
        ):
            raise InvalidInputError("response", outputs)
        texts = [outputs] if isinstance(outputs, str) else list(outputs)
        if not texts:
            raise UnsupportedOptionError(
                "OutputProcessor",
                "outputs",
                outputs,
                "response() got no output: a chat completion has at least one choice",
            )
        if finish_reasons is None or isinstance(finish_reasons, str):
            reasons: list[str | None] = [finish_reasons] * len(texts)
        elif isinstance(finish_reasons, Sequence):
            reasons = list(finish_reasons)
        else:  # (a number: "'int' object is not iterable")
            reasons = [finish_reasons]  # type: ignore[list-item]
        for reason in reasons:
            check_finish_reason(reason)
        if len(reasons) != len(texts):
            raise UnsupportedOptionError(
                "OutputProcessor",
                "finish_reasons",
                finish_reasons,
                f"response() got {len(texts)} outputs but {len(reasons)} finish reasons: give one per "
                "output, or one string for all",
            )
        choices = [
            self.parse(t, r, i).to_openai() for i, (t, r) in enumerate(zip(texts, reasons, strict=True))
        ]
        body: dict[str, Any] = {
            "id": self.request_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }
        if usage is not None:
            body["usage"] = usage
        return body

    # ------------------------------------------------------------------ streaming
    def stream(self, n: int = 1) -> ChunkStream:
        """Chunk-level streaming state for `n` choices."""
        return ChunkStream(self, n)

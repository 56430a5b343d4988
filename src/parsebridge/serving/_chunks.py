"""Chunk-level streaming: engine outputs in, ``chat.completion.chunk`` dicts and SSE lines out.

Split from `processor` (which builds the per-request state): this is the
per-token path of a server, so `ChunkStream.feed` does one dict lookup, one
parser feed and builds chunks only for non-empty deltas.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..protocol import BackendError, ParsebridgeError, ParseResult, StreamDelta
from ..protocol.errors import InvalidInputError, StreamStateError, UnsupportedOptionError
from ._choice import ChoiceStream


class RequestProcessor(Protocol):
    """What a `ChunkStream` needs of its request (`processor.RequestProcessor`; no import circle)."""

    request_id: str
    created: int
    model: str
    processor: Any

    def choice_stream(self) -> ChoiceStream: ...


log = logging.getLogger("parsebridge")

SSE_DONE = "data: [DONE]\n\n"


def sse(obj: dict[str, Any]) -> str:
    """One server-sent event carrying a JSON object (``data: {...}\\n\\n``)."""
    return f"data: {json.dumps(obj, ensure_ascii=False, separators=(',', ':'))}\n\n"


def error_body(exc: BaseException, request_id: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error object (``{"error": {...}}``), what vLLM/SGLang send mid-stream."""
    err: dict[str, Any] = {
        "message": str(exc),
        # Input that is not text or ids is the server's own mistake, not a parser's.
        "type": "parser_error"
        if isinstance(exc, ParsebridgeError) and not isinstance(exc, InvalidInputError)
        else "internal_error",
        "param": None,
        "code": 500,
    }
    if isinstance(exc, BackendError):
        err["backend"], err["parser"] = exc.backend, exc.parser
    if request_id:
        err["request_id"] = request_id
    return {"error": err}


class ChunkStream:
    """Engine chunks in, ``chat.completion.chunk`` dicts out, in the convention clients rely on.

    Per choice: a role chunk first (once); then reasoning, content and
    tool-call deltas (per call a first delta with index, id, type and name,
    then argument-only fragments); `finish()` flushes what the parsers held
    back and ends with an empty delta carrying `finish_reason`. No other
    chunk has an empty delta.
    """

    def __init__(self, request: RequestProcessor, n: int = 1) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UnsupportedOptionError(
                "OutputProcessor", "n", n, "n must be at least 1, a whole number of choices"
            )
        self.request = request
        self.n = n
        self._choices: dict[int, ChoiceStream] = {}
        self._role_sent: set[int] = set()
        self._finished: dict[int, str] = {}

    @property
    def request_id(self) -> str:
        return self.request.request_id

    def choice(self, index: int = 0) -> ChoiceStream:
        """The per-choice state (created on first use)."""
        if isinstance(index, bool) or not isinstance(index, int):  # (a str compared with ints: TypeError)
            raise UnsupportedOptionError(
                "OutputProcessor", "index", index, f"a choice index is an int below n={self.n}"
            )
        if not 0 <= index < self.n:
            raise IndexError(f"choice index {index} out of range for n={self.n}")
        state = self._choices.get(index)
        if state is None:
            state = self._choices[index] = self.request.choice_stream()
        return state

    def _chunk(self, index: int, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.request.request_id,
            "object": "chat.completion.chunk",
            "created": self.request.created,
            "model": self.request.model,
            "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    def _role(self, index: int) -> list[dict[str, Any]]:
        if index in self._role_sent:
            return []
        self._role_sent.add(index)
        return [self._chunk(index, {"role": "assistant", "content": ""})]

    def chunks_of(self, index: int, delta: StreamDelta) -> list[dict[str, Any]]:
        """A normalised delta as chunks: reasoning, content, then one chunk per call fragment."""
        out: list[dict[str, Any]] = []
        if delta.reasoning:
            out.append(self._chunk(index, {self.request.processor.reasoning_key: delta.reasoning}))
        if delta.content:
            out.append(self._chunk(index, {"content": delta.content}))
        for d in delta.tool_calls:
            entry: dict[str, Any] = {"index": d.index}
            if d.id is not None:
                entry["id"] = d.id
                entry["type"] = "function"
                entry["function"] = {"name": d.name, "arguments": d.arguments}
            else:
                entry["function"] = {"arguments": d.arguments}
            out.append(self._chunk(index, {"tool_calls": [entry]}))
        return out

    def start(self) -> list[dict[str, Any]]:
        """Role chunks for every choice now (otherwise each is sent before its choice's first output)."""
        return [c for i in range(self.n) for c in self._role(i)]

    def feed(
        self, text: str, token_ids: Sequence[int] | None = None, *, index: int = 0
    ) -> list[dict[str, Any]]:
        """The next engine output of choice `index` → chunks to send (maybe none)."""
        state = self._choices.get(index)
        if state is not None and index in self._role_sent and index not in self._finished:
            # The per-token path: a choice under way; chunks only for a non-empty delta.
            delta = state.feed(text, token_ids)
            if delta.content or delta.reasoning or delta.tool_calls:
                return self.chunks_of(index, delta)
            return []
        if index in self._finished:
            raise StreamStateError(f"choice {index} of request {self.request_id} already finished")
        delta = self.choice(index).feed(text, token_ids)  # first: a refused chunk sends no role yet
        return self._role(index) + self.chunks_of(index, delta)

    def finish(self, finish_reason: str | None = None, *, index: int | None = None) -> list[dict[str, Any]]:
        """End of output for choice `index` (None: every choice): flushed deltas, then the final chunk."""
        check_finish_reason(finish_reason)
        out: list[dict[str, Any]] = []
        for i in range(self.n) if index is None else [index]:
            if i in self._finished:
                continue
            out += self._role(i)
            state = self.choice(i)
            out += self.chunks_of(i, state.flush())
            reason = state.finish_reason(finish_reason)
            self._finished[i] = reason
            out.append(self._chunk(i, {}, reason))
        return out

    def usage_chunk(self, usage: dict[str, Any]) -> dict[str, Any]:
        """The trailing usage chunk (``choices: []``) of ``stream_options.include_usage``."""
        return {
            "id": self.request.request_id,
            "object": "chat.completion.chunk",
            "created": self.request.created,
            "model": self.request.model,
            "choices": [],
            "usage": usage,
        }

    def error_event(self, exc: BaseException) -> dict[str, Any]:
        """The in-band error object that ends a stream whose parser failed under ``on_error="raise"``."""
        return error_body(exc, self.request_id)

    @property
    def finished(self) -> bool:
        return len(self._finished) == self.n

    def result(self, index: int = 0) -> ParseResult:
        """What a client assembled for choice `index` from everything sent."""
        return self.choice(index).result()

    # ------------------------------------------------------------------ SSE drivers
    def sse(
        self,
        outputs: Iterable[EngineOutput | str | tuple[str, Sequence[int] | None]],
        *,
        usage: dict[str, Any] | None = None,
    ) -> Iterator[str]:
        """Drive the whole stream: SSE lines, ending with ``data: [DONE]``; parser errors end it in-band."""
        try:
            for item in outputs:
                for chunk in self._output_chunks(item):
                    yield sse(chunk)
            for chunk in self._closing_chunks(usage):
                yield sse(chunk)
        except ParsebridgeError as exc:
            yield self._ended_by(exc)
        yield SSE_DONE

    async def asse(
        self,
        outputs: AsyncIterable[EngineOutput | str | tuple[str, Sequence[int] | None]],
        *,
        usage: dict[str, Any] | None = None,
    ) -> AsyncIterator[str]:
        """`sse` for an async engine."""
        try:
            async for item in outputs:
                for chunk in self._output_chunks(item):
                    yield sse(chunk)
            for chunk in self._closing_chunks(usage):
                yield sse(chunk)
        except ParsebridgeError as exc:
            yield self._ended_by(exc)
        yield SSE_DONE

    def _output_chunks(
        self, item: EngineOutput | str | tuple[str, Sequence[int] | None]
    ) -> Iterator[dict[str, Any]]:
        """The chunks of one engine output (lazily: each is sent before the next is made)."""
        out = _engine_output(item)
        yield from self.feed(out.text, out.token_ids, index=out.index)
        if out.finish_reason is not None:
            yield from self.finish(out.finish_reason, index=out.index)

    def _closing_chunks(self, usage: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
        """The chunks after the engine's last output: every choice finished, then the usage."""
        yield from self.finish()
        if usage is not None:
            yield self.usage_chunk(usage)

    def _ended_by(self, exc: ParsebridgeError) -> str:
        """The SSE line of a parser error that ends the stream in-band (logged)."""
        log.error("request %s: stream ended by a parser error: %s", self.request_id, exc)
        return sse(self.error_event(exc))


@dataclass
class EngineOutput:
    """One engine step for one choice: new text (or all text, with `cumulative`), token ids, finish."""

    text: str
    token_ids: Sequence[int] | None = None
    index: int = 0
    finish_reason: str | None = None


def check_finish_reason(reason: object) -> None:
    """Refuse an engine finish reason that is not a str or None (it would go to the client as it is)."""
    if reason is not None and not isinstance(reason, str):
        raise UnsupportedOptionError(
            "OutputProcessor", "finish_reason", reason, "the engine's finish reason is a str or None"
        )


def _engine_output(item: EngineOutput | str | tuple[str, Sequence[int] | None]) -> EngineOutput:
    """One of `sse`'s outputs as an `EngineOutput`; anything else (None, a number, a tuple of three)
    is the server's mistake, refused typed so that the stream ends in-band, never with a bare
    TypeError out of the SSE generator."""
    if isinstance(item, EngineOutput):
        return item
    if isinstance(item, str):
        return EngineOutput(item)
    if isinstance(item, tuple | list) and len(item) == 2:
        text, ids = item
        return EngineOutput(text, ids)
    raise InvalidInputError(
        "sse", item, expected="each engine output as an EngineOutput, a str or a (text, token_ids) pair"
    )

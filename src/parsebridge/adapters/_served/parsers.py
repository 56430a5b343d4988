"""The served-parser base: parser objects over a server's OpenAI answers, once for every served backend.

A served backend (Dynamo, smg) gives one `ServedEngine` subclass: a parser
pair (`ParserPair`, always reasoning first, then tool) on its server, with
the one-shot request (`oneshot`: the answer's message) and a streamed request
(`stream_request`: a `StreamRequest`). Everything else is here: the parser
classes (`ServedToolParser`, `ServedReasoningParser`, `ServedPipeline`) that
map a message to our results, and the stepper that maps each step's events to a
`StreamDelta` (`ServedStepper`). Reading the server's answers (a message's calls,
a step's deltas, the feed-to-delta attribution of a streamed request:
`StreamRequest`) is `answers`.

What the engine is fed, the same for every served backend (`ServedEngine`):
the token ids of the model folder's tokenizer — the real one given as the
`tokenizer` option (`model_folder.user_folder`), else the backend's
approximate vocabulary — so the server's own detokenizer runs, also on a
token that ends inside a multi-byte character; a stream's `feed` steps the
chunk's `token_ids` when given to an engine with a real tokenizer (taken as
that tokenizer's ids), else its text encoded.
The generation prompt reaches the server as a request brings it: the user
message the folder's chat template renders as is (`model_folder.prompt_text`),
so the server's reasoning parser sees a prefilled ``<think>`` or a closed
``<think></think>`` (`ServedEngine.prompt`: `reasoning_started` as the
template's tail, else `prompt=` text, else `prompt_token_ids=` decoded).

The server starts on the first parse, never when a parser is built; `close()`
(or leaving a ``with`` block) gives back what only this parser used
(`ServedEngine.close`). A stream dropped before its end is abandoned through
`weakref.finalize` (its script cancelled, its response closed).
"""

from __future__ import annotations

import abc
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from ...protocol import (
    DeltaAccumulator,
    ParseResult,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.errors import call_typed, refused_chunk, token_id_list
from ...protocol.models import (
    make_delta,
    make_reasoning_result,
    make_tool_result,
)
from ...protocol.prompt_rule import flag_prompt
from .._common import locate_reasoning
from .._stepped import (
    FrameworkPipeline,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
    record_into,
)
from .answers import StreamRequest, delta_of, message_calls
from .model_folder import ModelFolder, user_folder

Markers = tuple[str | None, str | None]
ResultT = TypeVar("ResultT")
StreamT = TypeVar("StreamT")


class ParserPair(NamedTuple):
    """The parsers one served configuration runs: (reasoning, tool), either may be None."""

    reasoning: str | None
    tool: str | None

    @property
    def label(self) -> str:
        """``reasoning+tool`` (the names given), for errors and logs."""
        return "+".join(n for n in self if n) or "none"


class ServedEngine(abc.ABC):
    """One parser pair on a served backend's server (see module doc); configuration only until used.

    Options read here: `tokenizer` (the model folder's real tokenizer: a path to tokenizer.json or
    its folder, or a tokenizer object) and `oneshot_step` (tokens per engine step of a one-shot
    request where the backend steps it: 1, as a deployment's engine does; 0: the whole output in
    one step).
    """

    backend: ClassVar[str]

    def __init__(self, pair: ParserPair, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self.pair = pair
        self.label = pair.label
        self.tools = list(tools or [])
        self.options = options
        tokenizer = options.get("tokenizer")
        #: The real tokenizer's model folder (None: the backend's approximate vocabulary).
        self.own_folder: ModelFolder | None = user_folder(tokenizer) if tokenizer is not None else None
        self._id_limit: int | None = None
        step = options.get("oneshot_step", 1)
        if not isinstance(step, int) or step < 0:
            raise ValueError(f"oneshot_step is a number of tokens >= 0 (0: one step), not {step!r}")
        self.oneshot_step = step

    @property
    def markers(self) -> Markers:
        """The reasoning markers used to locate the block in the text (the server returns strings)."""
        return None, None

    @abc.abstractmethod
    def folder(self) -> ModelFolder:
        """The model folder the server reads: `own_folder`, else the backend's approximate one."""

    @abc.abstractmethod
    def oneshot(
        self, text: str, prompt: str | None = None, token_ids: Sequence[int] | None = None
    ) -> dict[str, Any]:
        """The server's chat message for `text` (its `token_ids` when given) as the whole output, after
        the generation `prompt` (starts the server on first use)."""

    @abc.abstractmethod
    def stream_request(self, prompt: str | None = None) -> StreamRequest:
        """A new streamed request on the server after the generation `prompt` (starts it on first use)."""

    def encode(self, text: str) -> list[int]:
        """One chunk's token ids in the server's vocabulary."""
        return self.folder().encode(text)

    def id_limit(self) -> int | None:
        """The vocabulary size a stream's ids are checked against (`token_id_list`): the user's
        tokenizer's, whose ids the server is fed; None without one (the ids are not fed then).
        Asked of the tokenizer once."""
        if self.own_folder is None:
            return None
        limit = self._id_limit
        if limit is None:
            limit = self._id_limit = self.own_folder.vocab_size
        return limit

    def steps(self, text: str, token_ids: Sequence[int] | None = None) -> list[list[int]]:
        """A one-shot output as engine steps of `oneshot_step` tokens (see the class doc)."""
        ids = (
            token_id_list(token_ids, "parse", self.folder().vocab_size)
            if token_ids is not None
            else self.encode(text)
        )
        size = self.oneshot_step or max(1, len(ids))
        return [ids[i : i + size] for i in range(0, len(ids), size)]

    def prompt(
        self,
        reasoning_started: bool | None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> str | None:
        """The generation prompt a request brings (module doc); None: a plain chat prompt."""
        if reasoning_started is not None and self.pair.reasoning is not None:
            return flag_prompt(reasoning_started, *self.markers)
        if prompt is not None:
            return prompt
        if prompt_token_ids is not None:
            return self.folder().decode(
                token_id_list(prompt_token_ids, "prompt_token_ids", self.folder().vocab_size)
            )
        return None

    def chunks(self, text: str, per: int = 1) -> list[Any]:
        """`text` as the engine streams it with the real tokenizer (`ModelFolder.chunks`)."""
        return self.folder().chunks(text, per)

    def close(self) -> None:  # noqa: B027 - optional: an engine that holds nothing of its own
        """Give back what this engine holds (a shared server stays until its last user closes)."""


class ServedStepper:
    """One streamed request, one engine step per `feed` (the `_stepped.Stepper` protocol)."""

    def __init__(self, engine: ServedEngine, prompt: str | None = None) -> None:
        self.engine = engine
        self.prompt = prompt
        self.spec = (engine.backend, engine.label)
        self.text_seen: list[str] = []
        self.closed = False
        self._request: StreamRequest | None = None

    def _open(self) -> StreamRequest:
        request = self._request = self.engine.stream_request(self.prompt)
        weakref.finalize(self, request.abandon)
        return request

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        record, step = record_into(acc), self.feed

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            delta = step(text, token_ids)
            record(delta.content, delta.reasoning, delta.tool_calls)
            return delta

        return feed

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        """One engine step: `token_ids` when given and the engine has a real tokenizer (they are taken as
        its ids), else `text` encoded with the server's vocabulary (ids of another vocabulary mean
        nothing to the approximate one)."""
        if self.closed or not isinstance(text, str):
            raise refused_chunk(text)
        if token_ids is not None:  # the caller's mistake, before the stream changes (as vLLM's streams)
            token_ids = token_id_list(token_ids, vocab_size=self.engine.id_limit())
        self.text_seen.append(text)
        backend, label = self.spec
        return delta_of(call_typed(backend, label, "stream.feed", lambda: self._step(text, token_ids)))

    def _step(self, text: str, token_ids: Sequence[int] | None) -> list[dict[str, Any]]:
        request = self._request or self._open()
        engine = self.engine
        if token_ids is not None and engine.own_folder is not None:
            return request.step(list(token_ids))
        return request.step(engine.encode(text))

    def flush(self) -> StreamDelta:
        if self.closed:
            return make_delta()
        self.closed = True
        request = self._request
        if request is None:
            return make_delta()
        backend, label = self.spec
        return delta_of(call_typed(backend, label, "stream.flush", request.end))

    def pending_text(self) -> str:
        """Not known from outside the server: it does not say what it holds back."""
        return ""


def _oneshot(
    engine: ServedEngine, text: str, prompt: str | None = None, token_ids: Sequence[int] | None = None
) -> dict[str, Any]:
    return call_typed(
        engine.backend, engine.label, "chat completion", lambda: engine.oneshot(text, prompt, token_ids)
    )


def _reasoning_result(engine: ServedEngine, text: str, message: dict[str, Any]) -> ReasoningParseResult:
    reasoning = message.get("reasoning_content") or None
    block = locate_reasoning(text, reasoning, *engine.markers) if reasoning else None
    return make_reasoning_result(reasoning, message.get("content") or None, block)


#: How reports name the backend's own vocabulary (`model_folder`), used without `tokenizer=`.
APPROXIMATE_LABEL = "approximate (one token per byte)"


def _offer_chunks(parser: Any, engine: ServedEngine) -> None:
    """With a real tokenizer, the parser cuts token chunkings itself (`conformance.chunking`);
    either way it says which vocabulary its engine steps (``tokenizer_label``, for reports)."""
    parser.tokenizer_label = APPROXIMATE_LABEL
    if engine.own_folder is not None:
        parser.chunks = engine.chunks
        parser.tokenizer_label = engine.own_folder.label


class ServedToolParser(ToolParserBase):
    """A served backend's tool-call parser: its server with the tool parser ``NAME`` alone."""

    engine_class: ClassVar[type[ServedEngine]]

    def __init__(self, name: str, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        self.name = name
        self.engine = self.engine_class(ParserPair(None, name), self.tools, options)
        _offer_chunks(self, self.engine)

    def parse(self, text: str, *, token_ids: Sequence[int] | None = None, **_: Any) -> ToolParseResult:
        message = _oneshot(self.engine, text, None, token_ids)
        return make_tool_result(message.get("content") or None, message_calls(message))

    def has_tool_calls(self, text: str) -> bool:
        return bool(self.parse(text).tool_calls)

    def stream(self, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(ServedStepper(self.engine))

    def close(self) -> None:
        self.engine.close()


class _ServedReading(Generic[ResultT, StreamT]):
    """`parse`, `stream` and `close` of the served parsers that read reasoning (`ServedReasoningParser`,
    `ServedPipeline`): the same request, after the generation prompt it brings (`ServedEngine.prompt`:
    `reasoning_started`, `prompt` or `prompt_token_ids`). They differ only in the start state
    (`_start_state`), what they read in the server's message (`_result`) and their stream class."""

    engine: ServedEngine
    _stream_class: Callable[[ServedStepper, Callable[[], Markers]], StreamT]

    def _start_state(self, reasoning_started: bool | None) -> bool | None:
        """Whether reasoning has started: the call's say (a pipeline falls back on its own)."""
        return reasoning_started

    def _result(self, text: str, message: dict[str, Any]) -> ResultT:
        """The result of `text` from the server's chat `message`."""
        raise NotImplementedError

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
        token_ids: Sequence[int] | None = None,
        **_: Any,
    ) -> ResultT:
        said = self.engine.prompt(self._start_state(reasoning_started), prompt, prompt_token_ids)
        return self._result(text, _oneshot(self.engine, text, said, token_ids))

    def stream(
        self,
        *,
        reasoning_started: bool | None = None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
        **_: Any,
    ) -> StreamT:
        engine = self.engine
        said = engine.prompt(self._start_state(reasoning_started), prompt, prompt_token_ids)
        return self._stream_class(ServedStepper(engine, said), lambda: engine.markers)

    def close(self) -> None:
        self.engine.close()


class ServedReasoningParser(
    _ServedReading[ReasoningParseResult, SteppedReasoningStream], ReasoningParserBase
):
    """A served backend's reasoning parser: its server with the reasoning parser ``NAME`` alone.

    The server's parser decides where reasoning starts, from the generation prompt the request
    brings (`ServedEngine.prompt`: `reasoning_started`, `prompt` or `prompt_token_ids`).
    """

    engine_class: ClassVar[type[ServedEngine]]
    _stream_class = SteppedReasoningStream

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(**options)
        self.name = name
        self.engine = self.engine_class(ParserPair(name, None), None, options)
        self.markers = tuple(m for m in self.engine.markers if m)  # type: ignore[misc]
        _offer_chunks(self, self.engine)

    def _result(self, text: str, message: dict[str, Any]) -> ReasoningParseResult:
        return _reasoning_result(self.engine, text, message)


class ServedPipeline(_ServedReading[ParseResult, SteppedPipelineStream], FrameworkPipeline):
    """A served backend's own reasoning→tool chain: one server configuration with both parsers."""

    engine_class: ClassVar[type[ServedEngine]]
    _stream_class = SteppedPipelineStream

    def _open(self, tools: Sequence[ToolSpec] | None, options: dict[str, Any]) -> None:
        self.engine = self.engine_class(ParserPair(self.reasoning_name, self.tool_name), tools, options)
        _offer_chunks(self, self.engine)

    def _start_state(self, reasoning_started: bool | None) -> bool | None:
        return self._started(reasoning_started)

    def _result(self, text: str, message: dict[str, Any]) -> ParseResult:
        r = _reasoning_result(self.engine, text, message)
        return ParseResult(
            reasoning=r.reasoning, content=r.content, tool_calls=message_calls(message), block=r.block
        )

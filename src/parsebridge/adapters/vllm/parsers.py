"""parsebridge parser objects backed by vLLM parsers.

A parser object holds configuration only (names, tokenizer, tools, request
options); every `parse` and every `stream()` gets a fresh vLLM session,
because vLLM parsers keep per-request state on themselves.

End of stream: vLLM's server marks the *last* engine chunk as finished and
parses it with that flag (which is when the flush of unstreamed arguments
happens). parsebridge's `feed` cannot know which chunk is the last, so by
default a stream holds each chunk back until the next `feed` (or `flush`)
shows whether it was the last (``end_of_stream="last_chunk"``, one chunk of
latency, faithful to a stream that ends on a stop string or max_tokens).
``end_of_stream="empty_chunk"`` parses every chunk at once and ends with an
empty finished chunk, as when generation stops on an EOS token whose text is
empty.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...protocol import (
    BackendError,
    DeltaAccumulator,
    ParseResult,
    Pipeline,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolSpec,
)
from ...protocol.models import alloc, make_delta, make_reasoning_result, make_tool_result
from .._stepped import (
    END_OF_STREAM_CHOICES,
    EndOfStream,
    SteppedPipelineStream,
    SteppedReasoningStream,
    SteppedToolStream,
    call_framework,
    closed_error,
    record_into,
)
from . import _mistral, _tokenizer
from ._compat import VllmApi, get_api
from ._driver import NativeSession, RawResult, ServingLoopSession
from ._translate import (
    call_deltas,
    locate_reasoning,
    none_if_empty,
    reasoning_markers,
    to_tool_call,
)

T = TypeVar("T")


def _wrap(spec_name: str, call: str, fn: Callable[[], T]) -> T:
    """Run a vLLM call; anything it raises becomes a `BackendError` with the original as cause."""
    return call_framework("vllm", spec_name, call, fn)


#: The one-shot extraction method of each kind, newest name first.
_EXTRACT_METHODS = {
    "tool": ("extract_tool_calls",),
    "reasoning": ("extract_reasoning", "extract_reasoning_content"),
}


def refuse_stub(kind: str, name: str | None, cls: type | None) -> None:
    """`ParserUnsupportedError` for a vLLM harmony capability stub, with vLLM's own reason.

    vLLM 0.33 registers `openai` / `openai_gptoss` (gpt-oss) as stubs whose
    extraction methods only raise NotImplementedError pointing at
    `HarmonyParser`: its server parses harmony output with that, on the
    token ids of the harmony encoding, never through these classes. Only a
    method the class defines itself, raising nothing but NotImplementedError
    with a message naming HarmonyParser, counts (an inherited abstract
    default, as in parsers vLLM drives another way, does not).
    """
    if cls is None or name is None:
        return
    for method in _EXTRACT_METHODS[kind]:
        own = next((vars(c)[method] for c in cls.__mro__ if method in vars(c)), None)
        code = getattr(own, "__code__", None)
        if code is None:
            continue
        said = next((c for c in code.co_consts if isinstance(c, str) and "HarmonyParser" in c), None)
        defined_here = method in vars(cls)
        if defined_here and said and set(code.co_names) == {"NotImplementedError"}:
            from ...protocol import ParserUnsupportedError

            raise ParserUnsupportedError(
                "vllm",
                name,
                f"vLLM's {cls.__name__} is a stub whose {method} only raises NotImplementedError "
                f"({said.strip()!r}); vLLM's server parses this format with HarmonyParser on the "
                "model's token ids instead",
            )
        return


class VllmEngine:
    """Everything needed to open vLLM sessions for one (reasoning, tool) parser pair."""

    def __init__(
        self,
        tool_name: str | None,
        reasoning_name: str | None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tokenizer: Any = None,
        tool_choice: Any = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        request_fields: dict[str, Any] | None = None,
        end_of_stream: EndOfStream = "last_chunk",
        native: bool | None = None,
    ) -> None:
        if end_of_stream not in END_OF_STREAM_CHOICES:
            raise ValueError(f"end_of_stream must be one of {END_OF_STREAM_CHOICES}, not {end_of_stream!r}")
        self.api: VllmApi = get_api()
        self.tool_name = tool_name
        self.reasoning_name = reasoning_name
        self.label = "+".join(n for n in (reasoning_name, tool_name) if n)
        self.tools = list(tools or [])
        self.tool_choice = tool_choice
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.request_fields = dict(request_fields or {})
        self.end_of_stream: EndOfStream = end_of_stream
        self.native = (
            self.api.has_parser_driver if native is None else (native and self.api.has_parser_driver)
        )
        self.tool_cls = (
            _wrap(self.label, "get_tool_parser", lambda: self.api.tool_parser_class(tool_name))
            if tool_name
            else None
        )
        self.reasoning_cls = (
            _wrap(self.label, "get_reasoning_parser", lambda: self.api.reasoning_parser_class(reasoning_name))
            if reasoning_name
            else None
        )
        refuse_stub("tool", tool_name, self.tool_cls)
        refuse_stub("reasoning", reasoning_name, self.reasoning_cls)
        self.tokenizer = _wrap(
            self.label, "tokenizer", lambda: resolve_tokenizer(tokenizer, tool_name or reasoning_name or "")
        )
        self._parser_cls: type | None = None
        self._request: Any = None
        self._started_prompt: list[int] | None = None
        self._encoder: Callable[[str], list[int]] | None = None
        self._markers: tuple[str | None, str | None] | None = None
        self._lock = threading.Lock()
        # Construct once now: a parser that cannot be built fails at creation, typed.
        try:
            self.session([])
        except BackendError as exc:
            # Some releases' Mistral parsers accept only vLLM's MistralTokenizer;
            # the default then becomes one (see `_mistral`). A user's tokenizer is never swapped.
            if tokenizer is not None or "MistralTokenizer" not in str(exc):
                raise
            self.tokenizer = _wrap(self.label, "tokenizer", _mistral.build_mistral_tokenizer)
            self._parser_cls = None
            self.session([])

    # ------------------------------------------------------------------ sessions

    def request(self) -> Any:
        """A request object per session, as the server has one per request.

        Validating a ChatCompletionRequest costs about as much as parsing a
        short output (benchmarks/overhead.py), so it is validated once per
        engine and shared by every session, as a server shares one request
        between its choices: parsing only reads the request (`adjust_request`,
        which writes, runs before generation and parsebridge never calls it).
        """
        if self._request is None:
            self._request = self.api.make_request(
                self.tools or None, self.tool_choice, self.chat_template_kwargs, **self.request_fields
            )
        return self._request

    def _native_cls(self) -> type:
        with self._lock:
            if self._parser_cls is None:
                from vllm.parser import ParserManager

                cls = ParserManager.get_parser(
                    tool_parser_name=self.tool_name,
                    reasoning_parser_name=self.reasoning_name,
                    enable_auto_tools=True,
                    tokenizer=self.tokenizer,
                )
                if cls is None:
                    raise RuntimeError("vLLM's ParserManager composed no parser")
                self._parser_cls = cls
            return self._parser_cls

    def _new_session(self, prompt_token_ids: list[int]) -> NativeSession | ServingLoopSession:
        request = self._request or self.request()
        if self.native:
            return NativeSession(
                self.api,
                self._parser_cls or self._native_cls(),
                self.tokenizer,
                request,
                prompt_token_ids,
                self.chat_template_kwargs,
            )
        return ServingLoopSession(
            self.api,
            self.tool_cls,
            self.reasoning_cls,
            self.tokenizer,
            request,
            prompt_token_ids,
            self.chat_template_kwargs,
        )

    def session(self, prompt_token_ids: list[int]) -> NativeSession | ServingLoopSession:
        return _wrap(self.label, "construct", lambda: self._new_session(prompt_token_ids))

    # ------------------------------------------------------------------ prompt / tokens

    def markers(self) -> tuple[str | None, str | None]:
        if self._markers is None:
            if self.reasoning_cls is None:
                self._markers = (None, None)
            else:
                try:
                    parser = self.api.new_reasoning_parser(
                        self.reasoning_cls, self.tokenizer, self.chat_template_kwargs
                    )
                    self._markers = reasoning_markers(parser)
                except Exception:
                    self._markers = (None, None)
        return self._markers

    def prompt_ids(
        self,
        reasoning_started: bool | None,
        prompt: str | None = None,
        prompt_token_ids: Sequence[int] | None = None,
    ) -> list[int]:
        """The prompt the server would pass: given ids, given text, or one ending in the start marker.

        `reasoning_started=True` stands for a chat template that ends the
        prompt with the reasoning start marker; otherwise the prompt carries
        no reasoning markup and the parser's own default applies.
        """
        if prompt_token_ids is not None:
            return list(prompt_token_ids)
        if prompt is not None:
            return self.encode(prompt)
        if reasoning_started:
            if self._started_prompt is None:
                start, _ = self.markers()
                self._started_prompt = self.encode(start) if start else []
            return list(self._started_prompt)  # encoded once per engine; each session its own list
        return []

    def _make_encoder(self) -> Callable[[str], list[int]]:
        """text → ids with this engine's tokenizer, chosen once (the Mistral test imports vLLM modules)."""
        tokenizer = self.tokenizer
        if _mistral.is_mistral(tokenizer):
            self._encoder = functools.partial(_mistral.encode, tokenizer)
        else:
            self._encoder = functools.partial(_tokenizer.encode_ids, tokenizer)
        return self._encoder

    def encode(self, text: str) -> list[int]:
        """Token ids for text the caller gave without ids (typed error if the tokenizer refuses it,
        e.g. lone surrogates, which no engine could have produced)."""
        try:
            return (self._encoder or self._make_encoder())(text)
        except Exception as exc:
            raise BackendError.wrapping("vllm", self.label, "tokenize", exc) from exc

    def chunks(self, text: str, per: int = 1) -> list[_tokenizer.TokenChunk]:
        """`text` as the engine would stream it with this tokenizer, `per` tokens a chunk."""
        if _mistral.is_mistral(self.tokenizer):
            return _mistral.chunks(self.tokenizer, text, per)
        return _tokenizer.token_chunks(self.tokenizer, text, per)

    # ------------------------------------------------------------------ one-shot

    def oneshot(self, text: str, prompt_ids: list[int], call: str) -> RawResult:
        # No closures: a one-shot parse is what a server pays per request.
        stage = "construct"
        try:
            session = self._new_session(prompt_ids)
            ids = self.encode(text)  # its own typed error ("tokenize")
            stage = call
            return session.oneshot(text, ids)
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("vllm", self.label, stage, exc) from exc


class _Stepper:
    """One vLLM session fed chunk by chunk, with the chosen end-of-stream convention.

    On 0.33+ a chunk is one `ChatStreamProcessor.step` (the processor is built
    with the stream), its `DeltaMessage` read field by field here; older
    releases step the re-stated serving loop (`ServingLoopSession.step`).
    """

    def __init__(self, engine: VllmEngine, prompt_ids: list[int], end_of_stream: EndOfStream | None) -> None:
        self.engine = engine
        self.end: EndOfStream = end_of_stream or engine.end_of_stream
        if self.end not in END_OF_STREAM_CHOICES:
            raise ValueError(f"end_of_stream must be one of {END_OF_STREAM_CHOICES}, not {self.end!r}")
        # `engine.session` and the processor without their `_wrap` closures: a stream's set-up is
        # paid per request.
        try:
            session = self.session = engine._new_session(prompt_ids)
            native = isinstance(session, NativeSession)
            processor = session.processor if native else None
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("vllm", engine.label, "construct", exc) from exc
        self.call = "parse_delta" if native else "extract_*_streaming"
        self._step = session.step
        self._native: Any = None
        if native:
            self._processor = processor
            self._native = processor.step
            self._prompt_ids = session.prompt_token_ids
        self._reasoning_field = engine.api.delta_reasoning_field
        self._hold = self.end == "last_chunk"
        self.pending: tuple[str, list[int]] | None = None
        self.text_seen: list[str] = []
        self.closed = False

    def attach(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """Record into `acc`; the stream's per-chunk `feed` (on 0.33+ the closure built here).
        Not kept here: see `_stepped.Stepper`."""
        if self._native is not None:
            return self._native_feed(acc)
        self._record = record_into(acc)
        return self.feed

    def _native_feed(self, acc: DeltaAccumulator) -> Callable[..., StreamDelta]:
        """`feed` on 0.33+: one `ChatStreamProcessor.step` per chunk, every name bound once here.

        The delta's text goes straight into the accumulator's parts and the `StreamDelta`
        is built inline (`record_into` and `make_delta` without their frames).
        """
        stepper, step, processor, prompt_ids = self, self._native, self._processor, self._prompt_ids
        field, hold = self._reasoning_field, self._hold
        seen, encode, api = self.text_seen.append, self.engine.encode, self.engine.api
        tool_cls, fn_cls = api.DeltaToolCall, api.DeltaFunctionCall  # vLLM's own delta classes
        c_append, r_append, add_calls = acc.content_parts.append, acc.reasoning_parts.append, acc.add_calls

        def feed(text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
            if stepper.closed:
                raise closed_error()
            try:  # a caller's ids that are not a sequence of ints fail typed, as a framework error would
                ids = list(token_ids) if token_ids is not None else encode(text)
            except BackendError:
                raise
            except Exception as exc:
                raise stepper._error(exc) from exc
            seen(text)
            previous = None
            if hold:
                previous = stepper.pending
                stepper.pending = (text, ids)
                if previous is None:
                    return make_delta()
                text, ids = previous
            if not (text or ids or processor.num_output_tokens):
                return make_delta()  # the empty chunk before any token, which the server skips
            try:
                delta = step(text, ids, None, prompt_ids).delta
            except BaseException as exc:
                if hold:
                    # The failing chunk is the held one: under the fallback policy the guard
                    # shows pending_text() + the caller's text, so it must still be pending.
                    stepper.pending = previous
                if isinstance(exc, Exception):
                    raise stepper._error(exc) from exc
                raise
            if delta is None:
                return make_delta()
            content = delta.content
            if content:
                c_append(content)
            else:
                content = ""
            reasoning = getattr(delta, field)
            if reasoning:
                r_append(reasoning)
            else:
                reasoning = ""
            tool_calls = delta.tool_calls
            if tool_calls:
                # One call of vLLM's own classes (every argument fragment is one): its fields read
                # as attributes and its `ToolCallDelta` built here, no `getattr(…, default)` probing.
                if (
                    len(tool_calls) == 1
                    and type(tc := tool_calls[0]) is tool_cls
                    and type(fn := tc.function) is fn_cls
                ):
                    call = alloc(ToolCallDelta)
                    call.index = tc.index or 0
                    call.id = tc.id or None
                    call.name = fn.name or None
                    args = fn.arguments
                    call.arguments = args if isinstance(args, str) else ""
                    calls = [call]
                else:
                    calls = call_deltas(tool_calls)
                add_calls(calls)
            else:
                calls = []
            out = alloc(StreamDelta)
            out.content = content
            out.reasoning = reasoning
            out.tool_calls = calls
            return out

        return feed

    def _run(self, text: str, ids: list[int], finished: bool) -> tuple[str, str, list[ToolCallDelta] | None]:
        """One engine chunk: (content, reasoning, call deltas or None)."""
        # `call_framework` inlined: no closure per chunk.
        try:
            delta = self._step(text, ids, finished)
        except BackendError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        if delta is None:
            return "", "", None
        tool_calls = delta.tool_calls
        return (
            delta.content or "",
            getattr(delta, self._reasoning_field) or "",
            call_deltas(tool_calls) if tool_calls else None,
        )

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> StreamDelta:
        if self.closed:
            raise closed_error()
        try:
            ids = list(token_ids) if token_ids is not None else self.engine.encode(text)
        except BackendError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        self.text_seen.append(text)
        if not self._hold:
            content, reasoning, calls = self._run(text, ids, False)
            self._record(content, reasoning, calls)
            return make_delta(content, reasoning, calls)
        previous, self.pending = self.pending, (text, ids)
        if previous is None:
            return make_delta()
        try:
            content, reasoning, calls = self._run(previous[0], previous[1], False)
        except BaseException:
            # The failing chunk is `previous`; `text` is the caller's. Under the
            # fallback policy the guard shows pending_text() + text, so the
            # held-back chunk must be what pending_text() reports now.
            self.pending = previous
            raise
        self._record(content, reasoning, calls)
        return make_delta(content, reasoning, calls)

    @property
    def spec(self) -> tuple[str, str]:
        return "vllm", self.engine.label

    def _error(self, exc: Exception) -> BackendError:
        return BackendError.wrapping("vllm", self.engine.label, self.call, exc)

    def flush(self) -> StreamDelta:
        """The final chunk (recorded by the stream, not here)."""
        self.closed = True
        if not self._hold:
            return make_delta(*self._run("", [], True)) if self.text_seen else make_delta()
        if self.pending is None:
            return make_delta()  # nothing was generated: the server sends an empty final chunk
        text, ids = self.pending
        self.pending = None
        return make_delta(*self._run(text, ids, True))

    def pending_text(self) -> str:
        return self.pending[0] if self.pending else ""


# ====================================================================== tool calls


class VllmToolParser(ToolParserBase):
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

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def parse(self, text: str) -> ToolParseResult:
        raw = self.engine.oneshot(text, [], "extract_tool_calls")
        return make_tool_result(none_if_empty(raw.content), [to_tool_call(c, text) for c in raw.calls])

    def has_tool_calls(self, text: str) -> bool:
        return bool(self.parse(text).tool_calls)

    def stream(self, *, end_of_stream: EndOfStream | None = None, **_: Any) -> SteppedToolStream:
        return SteppedToolStream(_Stepper(self.engine, [], end_of_stream))

    def chunks(self, text: str, per: int = 1) -> list[_tokenizer.TokenChunk]:
        return self.engine.chunks(text, per)


# ====================================================================== reasoning


class VllmReasoningParser(ReasoningParserBase):
    """`vllm:NAME` reasoning parser (options as for `VllmToolParser`, plus `prompt`/`prompt_token_ids`)."""

    backend = "vllm"

    def __init__(self, name: str, **options: Any) -> None:
        self.prompt = options.pop("prompt", None)
        self.prompt_token_ids = options.pop("prompt_token_ids", None)
        super().__init__(**options)
        self.name = name
        self.engine = VllmEngine(None, name, **options)
        start, end = self.engine.markers()
        self.markers = tuple(m for m in (start, end) if m)  # type: ignore[misc]

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def _prompt(self, reasoning_started: bool | None, **kw: Any) -> list[int]:
        return self.engine.prompt_ids(
            reasoning_started,
            kw.get("prompt", self.prompt),
            kw.get("prompt_token_ids", self.prompt_token_ids),
        )

    def parse(self, text: str, *, reasoning_started: bool | None = None, **kw: Any) -> ReasoningParseResult:
        raw = self.engine.oneshot(text, self._prompt(reasoning_started, **kw), "extract_reasoning")
        reasoning = none_if_empty(raw.reasoning)
        start, end = self.engine.markers()
        return make_reasoning_result(
            reasoning, none_if_empty(raw.content), locate_reasoning(text, reasoning, start, end)
        )

    def stream(
        self, *, reasoning_started: bool | None = None, end_of_stream: EndOfStream | None = None, **kw: Any
    ) -> SteppedReasoningStream:
        stepper = _Stepper(self.engine, self._prompt(reasoning_started, **kw), end_of_stream)
        return SteppedReasoningStream(stepper, self.engine.markers)

    def chunks(self, text: str, per: int = 1) -> list[_tokenizer.TokenChunk]:
        return self.engine.chunks(text, per)


# ====================================================================== native pipeline


class VllmPipeline(Pipeline):
    """vLLM's own reasoning→tool chain for one request shape (one session, not two parsers)."""

    def __init__(
        self,
        reasoning: str,
        tool: str,
        *,
        tools: Sequence[ToolSpec] | None = None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> None:
        self.prompt = options.pop("prompt", None)
        self.prompt_token_ids = options.pop("prompt_token_ids", None)
        self.engine = VllmEngine(tool, reasoning, tools=tools, **options)
        super().__init__(None, None, reasoning_started=reasoning_started)
        self.reasoning_name, self.tool_name = reasoning, tool

    @property
    def specs(self) -> tuple[str | None, str | None]:
        return f"vllm:{self.reasoning_name}", f"vllm:{self.tool_name}"

    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def _prompt(self, reasoning_started: bool | None, **kw: Any) -> list[int]:
        started = self.reasoning_started if reasoning_started is None else reasoning_started
        return self.engine.prompt_ids(
            started, kw.get("prompt", self.prompt), kw.get("prompt_token_ids", self.prompt_token_ids)
        )

    def parse(self, text: str, *, reasoning_started: bool | None = None, **kw: Any) -> ParseResult:
        raw = self.engine.oneshot(text, self._prompt(reasoning_started, **kw), "parse")
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
        stepper = _Stepper(self.engine, self._prompt(reasoning_started, **kw), end_of_stream)
        return SteppedPipelineStream(stepper, self.engine.markers)

    def chunks(self, text: str, per: int = 1) -> list[_tokenizer.TokenChunk]:
        return self.engine.chunks(text, per)


# ====================================================================== tokenizer


_default_lock = threading.Lock()
_specials: list[str] | None = None


def probe_special_tokens() -> list[str]:
    """Every token string any registered vLLM parser looks up at construction (cached per process).

    Each parser class is built once against a tokenizer that answers every
    vocabulary lookup and records it; marker-like string constants on the
    classes are added as a static complement.
    """
    global _specials
    with _default_lock:
        if _specials is not None:
            return _specials
        api = get_api()
        base = _tokenizer.build_tokenizer((), None)
        seen: set[str] = set()
        request = api.make_request(None, "auto")
        for name in api.tool_parser_names():
            try:
                cls = api.tool_parser_class(name)
            except Exception:
                continue
            seen |= _tokenizer.marker_strings(cls)
            with contextlib.suppress(Exception):
                api.new_tool_parser(cls, _tokenizer.ProbeTokenizer(base, seen), request)
        for name in api.reasoning_parser_names():
            try:
                cls = api.reasoning_parser_class(name)
            except Exception:
                continue
            seen |= _tokenizer.marker_strings(cls)
            with contextlib.suppress(Exception):
                api.new_reasoning_parser(cls, _tokenizer.ProbeTokenizer(base, seen), {})
        # Only marker-shaped strings become atomic: a probe also sees lookups
        # of fragments ("</", ">") that would wreck tokenization if atomic.
        _specials = sorted(s for s in seen if _tokenizer.is_marker(s) or _tokenizer.is_vocab_internal(s))
        return _specials


def resolve_tokenizer(source: Any, parser_name: str) -> Any:
    """The user's tokenizer, or the default for `parser_name`'s family (see `_tokenizer`)."""
    if source is not None:
        return as_served(_tokenizer.load_tokenizer(source))
    return as_served(_tokenizer.build_tokenizer(probe_special_tokens(), _tokenizer.family_of(parser_name)))


_served: dict[int, tuple[Any, Any]] = {}


def as_served(tokenizer: Any) -> Any:
    """The tokenizer as vLLM's server holds it: behind vLLM's `get_cached_tokenizer`.

    Many vLLM parsers call `tokenizer.get_vocab()` in their constructor, and a
    parser is built per request. A bare transformers tokenizer rebuilds that
    dict on every call (about 1 s for a 150k vocabulary here: `vllm:qwen3`
    took over a second per parse); the server's wrapper memoises it. Parse
    results do not change. One wrapper per tokenizer object; non-transformers
    tokenizers (e.g. Mistral's) and already wrapped ones are returned as is.
    """
    try:
        from transformers import PreTrainedTokenizerBase
    except ImportError:
        return tokenizer
    if not isinstance(tokenizer, PreTrainedTokenizerBase) or type(tokenizer).__name__.startswith("Cached"):
        return tokenizer
    wrap = None
    for module in ("vllm.tokenizers.hf", "vllm.transformers_utils.tokenizer"):
        try:
            wrap = importlib.import_module(module).get_cached_tokenizer
            break
        except (ImportError, AttributeError):
            continue
    if wrap is None:
        return tokenizer
    with _default_lock:
        hit = _served.get(id(tokenizer))
        if hit is None or hit[0] is not tokenizer:
            hit = _served[id(tokenizer)] = (tokenizer, wrap(tokenizer))
        return hit[1]

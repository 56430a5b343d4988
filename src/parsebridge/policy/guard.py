"""The failure policy: what happens when a parser raises.

Every parser the registry hands out is wrapped here, so that no framework
exception escapes untranslated. Per parser, `on_error` chooses:

* ``"raise"`` (default) — a `BackendError` naming backend, parser and the
  failing call, with the original exception as ``__cause__``;
* ``"fallback"`` — the error is logged (logger ``parsebridge``, with backend,
  parser and request/transcript id) and the unparsed text becomes content.
  One-shot: the whole output is content. Streaming: the stream stays usable;
  from the failing chunk on, everything fed is passed through as content,
  preceded by whatever the parser reports it was holding back
  (``pending_text()``, which builtin streams implement).

Input that is not text (None, bytes, a number...) is no parser's failure: every parse and
every chunk is checked here, before the parser and the policy, and refused with
`InvalidInputError` whatever `on_error` (streams handed out as is check it themselves:
`_as_is`).

Runaway protection goes through the same policy: a stream that holds back
more than `max_held` characters fails with `BufferLimitError` (its held text
is released as content under "fallback"), and a parser under a time budget
(`timeout=`, see `budget`) fails with `ParseTimeoutError`.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from ..protocol import (
    BackendError,
    ParsebridgeError,
    ParseResult,
    ReasoningBlock,
    ReasoningParser,
    ReasoningParseResult,
    ReasoningStream,
    ToolCall,
    ToolParser,
    ToolParseResult,
    ToolStream,
)
from ..protocol.errors import (
    InvalidInputError,
    InvalidSpecError,
    ServerUnavailableError,
    StreamStateError,
    UnsupportedOptionError,
)
from ..protocol.parsers import Closable
from ..protocol.prompt_rule import PROMPT_OPTIONS, check_prompt_options
from ..protocol.streams import checked_result
from .call_options import check_call_options, check_start_values
from .guarded_streams import (
    PARSER_FAILURES,
    GuardedPipelineStream,
    GuardedReasoningStream,
    GuardedToolStream,
)

OnError = Literal["raise", "fallback"]
ON_ERROR_CHOICES: tuple[str, ...] = ("raise", "fallback")
log = logging.getLogger("parsebridge")


def _check_policy(on_error: str) -> OnError:
    if on_error not in ON_ERROR_CHOICES:
        raise InvalidSpecError(f"on_error must be one of {ON_ERROR_CHOICES}, not {on_error!r}")
    return on_error  # type: ignore[return-value]


class _Guard(Closable):
    backend: str
    name: str

    def __init__(self, inner: Any, on_error: str, *, max_held: int | None = None) -> None:
        self.inner = inner
        self.backend = getattr(inner, "backend", "python")
        self.name = getattr(inner, "name", type(inner).__name__)
        self.on_error: OnError = _check_policy(on_error)
        if max_held is not None and (
            isinstance(max_held, bool) or not isinstance(max_held, int) or max_held < 1
        ):
            raise InvalidSpecError(f"max_held must be a positive number of characters, not {max_held!r}")
        self.max_held = max_held

    @property
    def spec(self) -> str:
        return f"{self.backend}:{self.name}"

    def _error(self, exc: BaseException, call: str, transcript: str | None) -> ParsebridgeError:
        # A usage error stays one: never the framework's failure. A served backend's server that
        # could not start or stopped under the call stays `ServerUnavailableError`, as its streams
        # raise it (it was `BackendError` from a one-shot parse: a close racing it from another thread).
        if isinstance(exc, (BackendError, UnsupportedOptionError, ServerUnavailableError, InvalidInputError)):
            return exc
        err = BackendError(self.backend, self.name, call, f"{type(exc).__name__}: {exc}", transcript)
        err.__cause__ = exc
        return err

    def _handle(self, exc: BaseException, call: str, transcript: str | None) -> None:
        """Raise per policy, or log and return so the caller falls back."""
        if isinstance(exc, (StreamStateError, UnsupportedOptionError, InvalidInputError)):
            raise exc  # the caller's mistake (a chunk's token ids refused by the parser), not the parser's
        err = self._error(exc, call, transcript)
        if self.on_error == "raise":
            raise err from (exc if err is not exc else exc.__cause__)
        # One line: the error names backend, parser, call and cause; the traceback is for debugging.
        log.warning("parser error, falling back to plain content: %s", err)
        log.debug("traceback of the parser error above", exc_info=exc)

    def _as_is(self, stream: Any) -> bool:
        """Whether a stream is handed out without a guard around it.

        Under "raise" with no `max_held` to measure, a stream that says it is
        `guard_complete` (it records itself, refuses feed after flush and a chunk that
        is not text, `InvalidInputError`, and raises nothing but parsebridge errors,
        framework errors typed) would get nothing from the guard but two more objects
        and a layer at its end: a frame per chunk, which the type check inlined in its
        own `feed` does not cost.
        """
        return self.on_error == "raise" and self.max_held is None and getattr(stream, "guard_complete", False)

    def _test(self, call: str, text: str) -> bool:
        """``inner.<call>(text)`` as a bool (`has_tool_calls`, `has_reasoning`); False when it fails and
        the policy falls back. The lookup is under the policy too: a parser without the method fails alike."""
        if not isinstance(text, str):
            raise InvalidInputError(call, text)
        try:
            return bool(getattr(self.inner, call)(text))
        except PARSER_FAILURES as exc:
            self._handle(exc, call, None)
            return False

    def _check_request(
        self, kind: str, call: str, reasoning_started: object, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        """Refuse, typed and whatever `on_error`, what a request asks that its parser cannot honour:
        a start option of the wrong type (`check_start_values`), a keyword `call` does not take
        (`check_call_options`), a prompt form it does not read (`check_prompt_options`). Returns the
        keywords to pass on: a prompt option given as None says nothing, so it is left out (a
        parser that takes only the other form, or none, would fail on it as on a typo)."""
        if reasoning_started is None and not kwargs:
            return kwargs
        spec = f"{self.backend}:{self.name}"
        check_start_values(spec, reasoning_started, kwargs)
        if kwargs:
            fn = getattr(self.inner, call)
            check_call_options(spec, kind, call, fn, kwargs)
            check_prompt_options(spec, fn, kwargs)
        return {k: v for k, v in kwargs.items() if not (v is None and k in PROMPT_OPTIONS)}

    def _guarded(self, kwargs: dict[str, Any], transcript: str | None, guard: type) -> Any:
        """The parser's stream, opened with `kwargs` and wrapped in `guard` unless `_as_is`; a failure
        to open it is raised typed, whatever the policy (no stream to fall back in)."""
        try:
            inner = self.inner.stream(**kwargs)
            missing = [m for m in ("feed", "flush") if not callable(getattr(inner, m, None))]
            if missing:  # a parser of your own whose stream() returned something else (None...)
                got = "None" if inner is None else f"a {type(inner).__name__}"
                raise TypeError(f"stream() returned {got}, not a stream (it has no {' or '.join(missing)})")
        except PARSER_FAILURES as exc:
            raise self._error(exc, "stream", transcript) from exc
        if self._as_is(inner):
            return inner
        return guard(self, inner, transcript)

    def __getattr__(self, item: str) -> Any:
        # Anything beyond the protocol (tools, markers, tokenizer…) comes from the parser.
        return getattr(self.inner, item)

    def close(self) -> None:
        """Close the parser (a user's class without `close` owns nothing to give back)."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"<{self.spec} on_error={self.on_error}>"


class GuardedToolParser(_Guard):
    """A tool parser under the failure policy (what `get_tool_parser` returns)."""

    inner: ToolParser

    def parse(self, text: str, *, transcript: str | None = None, **kwargs: Any) -> ToolParseResult:
        if not isinstance(text, str):  # before the policy: `str(None)` is no model output to fall back to
            raise InvalidInputError("parse", text)
        if kwargs:  # a misspelt keyword is a usage error, before (and whatever) the policy
            check_call_options(f"{self.backend}:{self.name}", "tool", "parse", self.inner.parse, kwargs)
        try:
            result = self.inner.parse(text, **kwargs) if kwargs else self.inner.parse(text)
            return checked_result(result, ToolParseResult, self.inner)
        except PARSER_FAILURES as exc:
            self._handle(exc, "parse", transcript)
            return ToolParseResult(content=text or None)

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        return self.parse(text).tool_calls

    def has_tool_calls(self, text: str) -> bool:
        return self._test("has_tool_calls", text)

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        try:
            return self.inner.format_tool_result(tool_call_id, result)
        except ParsebridgeError:
            raise
        except PARSER_FAILURES as exc:
            raise self._error(exc, "format_tool_result", None) from exc

    def stream(self, *, transcript: str | None = None, **kwargs: Any) -> ToolStream:
        if kwargs:
            check_call_options(f"{self.backend}:{self.name}", "tool", "stream", self.inner.stream, kwargs)
        stream: ToolStream = self._guarded(kwargs, transcript, GuardedToolStream)
        return stream


class GuardedReasoningParser(_Guard):
    """A reasoning parser under the failure policy (what `get_reasoning_parser` returns)."""

    inner: ReasoningParser

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        transcript: str | None = None,
        **kwargs: Any,
    ) -> ReasoningParseResult:
        """`kwargs` go to the backend (e.g. ``prompt=`` / ``prompt_token_ids=`` for the start state:
        refused, typed, when its parse takes none; `parsebridge.protocol.prompt_rule`); a keyword
        it does not take at all is `UnknownOptionError` (`call_options`), whatever `on_error`. Text
        that is not a `str` is `InvalidInputError`, whatever `on_error`, as in every guarded call."""
        if not isinstance(text, str):
            raise InvalidInputError("parse", text)
        kwargs = self._check_request("reasoning", "parse", reasoning_started, kwargs)
        try:
            if kwargs:
                result = self.inner.parse(text, reasoning_started=reasoning_started, **kwargs)
            else:
                result = self.inner.parse(text, reasoning_started=reasoning_started)
            return checked_result(result, ReasoningParseResult, self.inner)
        except PARSER_FAILURES as exc:
            self._handle(exc, "parse", transcript)
            return ReasoningParseResult(content=text or None)

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        return self.parse(text).block

    def has_reasoning(self, text: str) -> bool:
        return self._test("has_reasoning", text)

    def stream(
        self, *, reasoning_started: bool | None = None, transcript: str | None = None, **kwargs: Any
    ) -> ReasoningStream:
        kwargs = self._check_request("reasoning", "stream", reasoning_started, kwargs)
        options = {"reasoning_started": reasoning_started, **kwargs}
        stream: ReasoningStream = self._guarded(options, transcript, GuardedReasoningStream)
        return stream


class GuardedPipeline(_Guard):
    """A framework's native reasoning→tool chain under the failure policy.

    Generic pipelines are made of guarded parsers already; a native chain
    (vLLM's `vllm.parser`, SGLang's per-chunk chain) is one object, so the
    policy wraps it whole: same errors, same fallback, same `max_held`.
    """

    def __init__(self, inner: Any, on_error: str, *, max_held: int | None = None) -> None:
        super().__init__(inner, on_error, max_held=max_held)
        reasoning_spec, tool_spec = getattr(inner, "specs", (None, None))
        self.backend = (tool_spec or reasoning_spec or "native:pipeline").partition(":")[0]
        self.name = " + ".join(s.partition(":")[2] for s in (reasoning_spec, tool_spec) if s)

    def parse(
        self,
        text: str,
        *,
        reasoning_started: bool | None = None,
        transcript: str | None = None,
        **kwargs: Any,
    ) -> ParseResult:
        if not isinstance(text, str):
            raise InvalidInputError("parse", text)
        kwargs = self._check_request("pipeline", "parse", reasoning_started, kwargs)
        try:
            return self.inner.parse(text, reasoning_started=reasoning_started, **kwargs)  # type: ignore[no-any-return]
        except PARSER_FAILURES as exc:
            self._handle(exc, "parse", transcript)
            return ParseResult(content=text or None)

    def has_tool_calls(self, text: str) -> bool:
        """The chain's own `has_tool_calls` when it has one, else whether its `parse` reads a call;
        under the policy either way (a failure under "fallback": False, the text being content)."""
        if callable(getattr(self.inner, "has_tool_calls", None)):
            return self._test("has_tool_calls", text)
        return bool(self.parse(text).tool_calls)

    def stream(self, *, transcript: str | None = None, **kwargs: Any) -> Any:
        """The native chain's stream (`feed`/`flush`/`finish` → `ParseResult`), guarded unless `_as_is`."""
        kwargs = self._check_request("pipeline", "stream", kwargs.get("reasoning_started"), kwargs)
        return self._guarded(kwargs, transcript, GuardedPipelineStream)

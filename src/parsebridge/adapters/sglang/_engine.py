"""`SglangEngine`: what opens SGLang sessions for one (reasoning, tool) parser pair.

It holds a parser's configuration (names, tools, request options, the
tokenizer) and opens a fresh `Session` per parse or stream, because SGLang's
detectors keep per-request state on themselves. It also decides the start
state: SGLang's server passes ``force_reasoning`` when the chat template
opened reasoning in the prompt or the request asks for thinking. Here
``reasoning_started=True``/``False`` is that flag; with None, the request
options (`chat_template_kwargs`, `reasoning_effort`, or their absence) decide
the way the release's server reads them (restated in `_compat`): on 0.5.23 a
request without them gets the detector's `reasoning_default` (qwen3:
reasoning first, as the server does). Releases before 0.5.1 take no such
flag at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...protocol import (
    BackendError,
    ToolCall,
    ToolSpec,
)
from ...protocol.prompt_rule import PROBE_TEXT, honoured, refuse_started
from .. import _tokenizers
from .._common import reasoning_markers
from .._stepped import (
    EndOfStream,
    call_framework,
    check_end_of_stream,
)
from ._compat import SglangApi, get_api
from ._driver import RequestShape, Session
from ._forced import is_forced

TOOL_CHOICES: tuple[str, ...] = ("auto", "none")
T = TypeVar("T")


def _wrap(spec_name: str, call: str, fn: Callable[[], T]) -> T:
    """Run an SGLang call; anything it raises becomes a `BackendError` with the original as cause."""
    return call_framework("sglang", spec_name, call, fn)


class SglangEngine:
    """Everything needed to open SGLang sessions for one (reasoning, tool) parser pair."""

    def __init__(
        self,
        tool_name: str | None,
        reasoning_name: str | None,
        *,
        tools: Sequence[ToolSpec] | None = None,
        tokenizer: Any = None,
        tool_choice: Any = "auto",
        chat_template_kwargs: dict[str, Any] | None = None,
        reasoning_effort: str | None = None,
        request_fields: dict[str, Any] | None = None,
        stream_reasoning: bool = True,
        end_of_stream: EndOfStream = "last_chunk",
    ) -> None:
        check_end_of_stream(end_of_stream)
        self.api: SglangApi = get_api()
        if tool_choice not in TOOL_CHOICES and not (is_forced(tool_choice) and self.api.forced_choices):
            raise ValueError(
                f"tool_choice must be one of {TOOL_CHOICES}, or 'required'/a named function on SGLang "
                f"releases whose server parses those through the tool parser (0.5.23), not {tool_choice!r}"
            )
        self.tool_name = tool_name
        self.reasoning_name = reasoning_name
        self.label = "+".join(n for n in (reasoning_name, tool_name) if n)
        self.tool_choice = tool_choice
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.reasoning_effort = reasoning_effort
        self.stream_reasoning = stream_reasoning
        self.end_of_stream: EndOfStream = end_of_stream
        self.tools = _wrap(self.label, "Tool", lambda: self.api.make_tools(tools))
        fields = dict(request_fields or {})
        if reasoning_effort is not None:
            fields.setdefault("reasoning_effort", reasoning_effort)
        # Only releases whose parsers read the request (0.5.9+: `request=`, 0.5.21+: `tool_choice=`) get one.
        needs_request = "request" in self.api.rp_accepts or "tool_choice" in self.api.fc_accepts
        self.request = (
            _wrap(
                self.label,
                "ChatCompletionRequest",
                lambda: self.api.make_request(self.tools, tool_choice, self.chat_template_kwargs, fields),
            )
            if needs_request
            else None
        )
        # The caller's tokenizer is loaded now: what cannot be had is theirs (TokenizerUnavailable).
        self._user_tokenizer = None if tokenizer is None else _tokenizers.load_user_tokenizer(tokenizer)
        self._tokenizer: Any = None
        self._markers: tuple[str | None, str | None] | None = None
        self._lock = threading.Lock()
        self._shapes: dict[bool | None, RequestShape] = {}
        self._honours: dict[bool, bool] = {}
        # Construct once now: a parser that cannot be built fails at creation, typed.
        _wrap(self.label, "construct", lambda: self.session(None).construct())

    # ------------------------------------------------------------------ tokenizer

    @property
    def tokenizer(self) -> Any:
        """The tokenizer passed to SGLang where it takes one, and used for `chunks()`.

        The user's, or one whose vocabulary holds every SGLang marker atomically
        (a real Qwen/DeepSeek vocabulary for those families when installed).
        """
        with self._lock:
            if self._tokenizer is None:
                if self._user_tokenizer is not None:
                    self._tokenizer = _tokenizers.load_tokenizer(self._user_tokenizer)
                else:
                    family = _tokenizers.family_of(self.tool_name or self.reasoning_name or "")
                    self._tokenizer = _tokenizers.build_tokenizer(self.api.marker_strings(), family)
            return self._tokenizer

    def _sglang_tokenizer(self) -> Any:
        # Only releases whose parsers take a tokenizer get one (building it costs a second).
        if "tokenizer" in self.api.fc_accepts or "tokenizer" in self.api.rp_accepts:
            return self.tokenizer
        return None

    def chunks(self, text: str, per: int = 1) -> list[_tokenizers.TokenChunk]:
        """`text` as an engine would stream it with this tokenizer, `per` tokens a chunk."""
        return _tokenizers.token_chunks(self.tokenizer, text, per)

    # ------------------------------------------------------------------ sessions

    def force_reasoning(self, reasoning_started: bool | None) -> bool | None:
        """The `force_reasoning` flag SGLang's server would pass for this prompt and request.

        The server forces reasoning when the chat template opened it in the
        prompt or the request asks for thinking. `reasoning_started` is the
        prompt half (True/False decide); with None, the release's request half
        decides as the server does — also for a request without
        `chat_template_kwargs`: SGLang 0.5.23 then falls back to the
        detector's `reasoning_default` (qwen3: "enable_thinking", so
        reasoning is on unless the request turns it off).
        """
        if self.reasoning_name is None:
            return None
        if reasoning_started is not None:
            self.check_started(reasoning_started)
            return reasoning_started
        return self.api.request_forces_reasoning(
            self.reasoning_name, self.chat_template_kwargs, self.reasoning_effort, self._sglang_tokenizer()
        )

    def check_started(self, value: bool) -> None:
        """Refuse a `force_reasoning` value SGLang's detector does not honour (probed once, typed)."""
        if self.reasoning_name is None:
            return
        if value:
            return  # True stands for the template's start; the server's reading stands (prompt_rule)
        ok = self._honours.get(value)
        if ok is None:
            ok = self._honours[value] = self._probe_started(value)
        if not ok:
            raise refuse_started(f"sglang:{self.label}", value, "SGLang")

    def _probe_started(self, value: bool) -> bool:
        """Whether ``force_reasoning=value`` gives the reading asked for on `PROBE_TEXT`."""
        shape = RequestShape(
            tool_name=None,
            reasoning_name=self.reasoning_name,
            tools=[],
            tool_choice="auto",
            request=self.request,
            force_reasoning=value,
            stream_reasoning=True,
            tokenizer=self._sglang_tokenizer(),
        )
        session = Session(self.api, shape)
        reasoning, content = session.reasoning_parser(stream=False).parse_non_stream(PROBE_TEXT)
        streaming = session.reasoning_parser(stream=True)
        r1, c1 = streaming.parse_stream_chunk(PROBE_TEXT)
        return honoured(value, reasoning, content) and honoured(value, r1, c1)

    def session(self, reasoning_started: bool | None) -> Session:
        """A fresh per-request session; its request shape is worked out once per start state."""
        shape = self._shapes.get(reasoning_started)
        if shape is None:
            shape = self._shapes[reasoning_started] = self._shape(reasoning_started)
        return Session(self.api, shape)

    def parser_factory(self, reasoning_started: bool | None, kind: str, stream: bool) -> Callable[[], Any]:
        """The request shape's "reasoning" or "tools" parser constructor (`Session.parser_factory`),
        read from the shape's cache without making a session once it is there."""
        shape = self._shapes.get(reasoning_started)
        factory = shape.factories.get((kind, stream)) if shape is not None else None
        if factory is None:
            factory = self.session(reasoning_started).parser_factory(kind, stream)
        return factory

    def _shape(self, reasoning_started: bool | None) -> RequestShape:
        return RequestShape(
            tool_name=self.tool_name,
            reasoning_name=self.reasoning_name,
            tools=self.tools,
            tool_choice=self.tool_choice,
            request=self.request,
            force_reasoning=self.force_reasoning(reasoning_started),
            stream_reasoning=self.stream_reasoning,
            tokenizer=self._sglang_tokenizer(),
        )

    def markers(self) -> tuple[str | None, str | None]:
        if self._markers is None:
            if self.reasoning_name is None:
                self._markers = (None, None)
            else:
                try:
                    parser = self.session(None).reasoning_parser(stream=False)
                    self._markers = reasoning_markers(parser.detector)
                except Exception:
                    self._markers = (None, None)
        return self._markers

    def oneshot(
        self, text: str, reasoning_started: bool | None, call: str
    ) -> tuple[str | None, str | None, list[ToolCall]]:
        # `_wrap` inlined (no closure): a one-shot parse is what a server pays per request.
        try:
            return self.session(reasoning_started).oneshot(text)
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError.wrapping("sglang", self.label, call, exc) from exc

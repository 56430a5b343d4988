"""parsebridge parsers inside vLLM's own server: a ``--tool-parser-plugin`` module.

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin parsebridge.plugins.vllm --tool-call-parser pb:builtin:hermes \\
        --reasoning-parser-plugin parsebridge.plugins.vllm --reasoning-parser pb:builtin:qwen3

Importing this module (which is what vLLM's ``--tool-parser-plugin`` and
``--reasoning-parser-plugin`` do) registers into vLLM's `ToolParserManager`
and `ReasoningParserManager`, under ``pb:`` + a parsebridge config string,
every builtin parser and, when SGLang is installed, every SGLang parser
(``pb:sglang:qwen25``), plus the ``PARSEBRIDGE_PLUGIN_PARSERS`` entries (see
`parsebridge.plugins`). A ``python:`` parser of your own: a file that calls
`register` and is passed as the plugin instead::

    # my_plugin.py
    from parsebridge.plugins.vllm import register
    register("python:my_pkg.parsers:MyToolParser", name="my-tools")

Each name is a real vLLM `ToolParser` / `ReasoningParser` subclass. vLLM
makes one instance per request (0.33's server builds a `vllm.parser` Parser
per request and choice, which builds the two parsers); the instance holds
that request's parsebridge stream, created at its first streamed chunk.
The classes declare ``engine_based_streaming`` so that vLLM 0.33's parser
driver calls `finish_streaming` at the end of output (parsebridge's
`flush`: text a stream still holds is shown) and asks the reasoning parser
itself whether reasoning has ended (`has_engine_confirmed_reasoning_end`:
once its stream shows content) instead of searching token ids. After that
point vLLM hands the rest of the output to the tool parser, as it does for
its own parsers.

Token-id methods (`is_reasoning_end`, `extract_content_ids`, used on the
prompt and by structured outputs in the engine) decode the ids with the
server's tokenizer and look for the format's start and end markers.

Releases before 0.33 drive parsers from their serving loop, which has no
end-of-stream call: there, text a stream still holds when the output ends
is not shown. vLLM 0.11 imports ``--tool-parser-plugin`` from a file path
only: give it `parsebridge.plugins.vllm_plugin_file()` (printed by
``python -m parsebridge.plugins vllm``), never the module name, which that
loader would half-import under the name ``parsebridge.plugins``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from ..adapters._common import import_first
from ..adapters.builtin.engines.reasoning_start import thinking_turned_off
from ..protocol import BackendError
from ..protocol.prompt_rule import prompt_rule, prompt_start_state, reads_whole_output, start_options
from . import (
    PARSERS,
    PREFIX,
    FrameworkMissingError,
    Registrar,
    Registration,
    _log,
    on_error_policy,
    plugin_name,
    reasoning_closed,
    reasoning_markers,
    tool_dicts,
    tool_start_marker,
)

try:
    from ..adapters.vllm._compat import get_api

    _api = get_api()
except ImportError as exc:  # vLLM absent, or a dependency of it
    raise FrameworkMissingError("vllm", "vllm", exc) from exc

_ToolParserBase: Any = _api.tool_module.ToolParser
_ReasoningParserBase: Any = _api.reasoning_module.ReasoningParser

#: The last N prompt tokens decoded to find reasoning markers (templates open or close it at the end).
PROMPT_TAIL_TOKENS = 2048


def _import(*paths: str) -> Any:
    return import_first(*paths)


_protocol = _import(
    "vllm.entrypoints.generate.base.protocol",
    "vllm.entrypoints.openai.engine.protocol",
    "vllm.entrypoints.openai.protocol",
)
_ExtractedToolCallInformation: Any = (
    getattr(_protocol, "ExtractedToolCallInformation", None) or _api.protocol.ExtractedToolCallInformation
)
_ToolCall: Any = getattr(_protocol, "ToolCall", None) or _api.protocol.ToolCall
_FunctionCall: Any = getattr(_protocol, "FunctionCall", None) or _api.protocol.FunctionCall


_DECODE_WARNED: set[tuple[str, str]] = set()


def _decode(tokenizer: Any, ids: Sequence[int], spec: str = "") -> str:
    """The text of `ids`. A tokenizer that cannot decode them fails under the plugin's policy
    (``PARSEBRIDGE_PLUGIN_ON_ERROR``): ``raise`` raises a `BackendError` naming the parser;
    ``fallback`` (the default) logs it once per parser and error type and reads no text there."""
    if not ids:
        return ""
    try:
        return str(tokenizer.decode(list(ids)))
    except Exception as exc:
        if on_error_policy() == "raise":
            raise BackendError.wrapping("pb", spec, "tokenizer.decode", exc) from exc
        key = (spec, type(exc).__name__)
        if key not in _DECODE_WARNED:
            _DECODE_WARNED.add(key)
            _log.warning(
                "parsebridge plugin %s: the tokenizer cannot decode token ids (%s: %s); "
                "no reasoning marker is found in them",
                spec,
                type(exc).__name__,
                exc,
            )
        return ""


def _composed_with_tool_parser(depth: int = 6) -> bool | None:
    """Whether the vLLM `Parser` constructing the caller (a reasoning parser) holds a tool parser too.

    vLLM 0.33's `Parser.__init__` builds its reasoning parser from its class's
    `reasoning_parser_cls` before its tool parser, from `tool_parser_cls`, and passes the
    reasoning parser nothing about it: the constructing frame's class says. None when no
    `Parser` is building it (releases before 0.33, Dynamo's processor, a direct construction).
    """
    frame = sys._getframe(1)
    for _ in range(depth):
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return None
        owner = type(frame.f_locals.get("self"))
        if hasattr(owner, "reasoning_parser_cls") and hasattr(owner, "tool_parser_cls"):
            return owner.tool_parser_cls is not None
    return None


def _tool_choice_none(request: Any) -> bool:
    return getattr(request, "tool_choice", None) == "none"


class _CallIds:
    """vLLM-style call ids, one per call index of one stream or parse."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: dict[int, str] = {}

    def of(self, index: int) -> str:
        got = self.ids.get(index)
        if got is None:
            got = self.ids[index] = _api.make_tool_call_id()
        return got


#: Releases before 0.33 stream from their serving loop, which rewrites the output's last delta
#: when its first tool call carries arguments: it recomputes them as `json.dumps` of the parser's
#: `prev_tool_call_arr` minus its `streamed_args_for_tool`, and sends only that (0.11-0.14 also
#: drop the call's id and name). parsebridge streams the model's own argument text and keeps no
#: such bookkeeping, so the rewrite would fail the stream (an IndexError, a 400 to the client) or
#: re-spell the arguments. A delta whose first entry carries no arguments is never rewritten.
_LAST_DELTA_REWRITTEN: bool = not _api.has_parser_driver


def _delta_message(delta: Any, ids: _CallIds) -> Any:
    """A parsebridge `StreamDelta` as vLLM's `DeltaMessage` (None when it shows nothing)."""
    if not delta:
        return None
    fields: dict[str, Any] = {}
    if delta.content:
        fields["content"] = delta.content
    if delta.reasoning:
        fields["reasoning"] = delta.reasoning
    if delta.tool_calls:
        calls = []
        for d in delta.tool_calls:
            first = d.id is not None or d.name is not None
            calls.append(
                _api.DeltaToolCall(
                    index=d.index,
                    id=ids.of(d.index) if first else None,
                    type="function" if first else None,
                    function=_api.DeltaFunctionCall(name=d.name, arguments=d.arguments or None),
                )
            )
        if _LAST_DELTA_REWRITTEN and calls[0].function.arguments is not None:
            calls[:1] = _arguments_apart(calls[0])
        fields["tool_calls"] = calls
    return _api.new_delta(**fields)


def _arguments_apart(call: Any) -> list[Any]:
    """`call` as two entries of the same index, the first without arguments: the call's id, type
    and name (or the index alone, for a call already opened), then its arguments. A client's
    fold (by index) reads the two as the one entry."""
    if call.id is None and call.function.name is None:
        head = _api.DeltaToolCall(index=call.index)
    else:
        head = _api.DeltaToolCall(
            index=call.index,
            id=call.id,
            type=call.type,
            function=_api.DeltaFunctionCall(name=call.function.name),
        )
    arguments = _api.DeltaToolCall(
        index=call.index, function=_api.DeltaFunctionCall(arguments=call.function.arguments)
    )
    return [head, arguments]


class ParsebridgeToolParser(_ToolParserBase):  # type: ignore[misc]
    """A parsebridge tool-call parser as a vLLM `ToolParser` (subclassed per spec by `register`)."""

    pb_spec: ClassVar[str] = ""
    engine_based_streaming: bool = True

    def __init__(self, tokenizer: Any, tools: Any = None, *args: Any, **kwargs: Any) -> None:
        if _api.tool_parser_takes_tools:  # 0.19+; before, servers pass the tokenizer only
            super().__init__(tokenizer, tools, *args, **kwargs)
        else:
            super().__init__(tokenizer)
            self.tools = list(tools or [])
        self._stream: Any = None
        self._ids = _CallIds()
        first = PARSERS.get(
            "tool", self.pb_spec, None, self._framework_tokenizer()
        )  # a broken spec fails here
        # The name vLLM's own parsers give their opening marker; frontends (Dynamo) read it to spot
        # tool markup that arrives with the end of reasoning (without it, Dynamo shows that markup as
        # content and the call is lost). No end marker is declared: formats do not all have one, and a
        # frontend waits for the end of output instead.
        self.tool_call_start_token: str | None = tool_start_marker(first, self.pb_spec)

    def _framework_tokenizer(self) -> Any:
        return self.model_tokenizer

    def _parser(self, request: Any) -> Any:
        tools = tool_dicts(getattr(request, "tools", None) or getattr(self, "tools", None))
        return PARSERS.get("tool", self.pb_spec, tools, self._framework_tokenizer())

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        if _tool_choice_none(request):
            return _ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        result = self._parser(request).parse(model_output)
        ids = _CallIds()
        calls = [
            _ToolCall(
                id=ids.of(i), type="function", function=_FunctionCall(name=c.name, arguments=c.arguments_json)
            )
            for i, c in enumerate(result.tool_calls)
        ]
        return _ExtractedToolCallInformation(
            tools_called=bool(calls), tool_calls=calls, content=result.content
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        if _tool_choice_none(request):
            return _api.new_delta(content=delta_text) if delta_text else None
        if self._stream is None:
            self._stream = self._parser(request).stream()
        return _delta_message(self._stream.feed(delta_text, list(delta_token_ids) or None), self._ids)

    def finish_streaming(self) -> Any:
        """End of output (vLLM 0.33's driver calls it): what the stream still held."""
        if self._stream is None:
            return None
        return _delta_message(self._stream.flush(), self._ids)


class ParsebridgeReasoningParser(_ReasoningParserBase):  # type: ignore[misc]
    """A parsebridge reasoning parser as a vLLM `ReasoningParser` (subclassed per spec by `register`)."""

    pb_spec: ClassVar[str] = ""
    engine_based_streaming: bool = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._backend = self.pb_spec.partition(":")[0]
        # The request's chat_template_kwargs (vLLM passes them here): a parser whose server decides the
        # start state from them (SGLang, `prompt_rule`) gets them as its own option; other parsers are
        # told that thinking is off.
        template = kwargs.get("chat_template_kwargs") or None
        own = prompt_rule(self._backend) == "ignored"
        options = {"chat_template_kwargs": dict(template)} if own and template else None
        self._pb = PARSERS.get("reasoning", self.pb_spec, None, self._framework_tokenizer(), options)
        self._start, self._end = reasoning_markers(self._pb)
        #: Whether the prompt opened reasoning (True), closed it (False), or says nothing (None).
        self._default: bool | None = False if not own and thinking_turned_off(template) else None
        self._started = self._default
        #: The prompt's options for the parser (`start_options`), and the prompt itself once given.
        self._options: dict[str, Any] = {}
        self._prompt_ids: list[int] | None = None
        self._prompt_closes = False
        #: SGLang's server reads the whole output through the reasoning parser (`reads_whole_output`):
        #: with no tool parser to hand the rest to, so does this one (it never confirms the end).
        self._whole = reads_whole_output(self._backend) and _composed_with_tool_parser() is False
        self._stream: Any = None
        self._ended = False
        self._reasoned = False

    def _framework_tokenizer(self) -> Any:
        return self.model_tokenizer

    # ------------------------------------------------------------------ markers

    @property
    def reasoning_start_str(self) -> str | None:
        return self._start

    @property
    def reasoning_end_str(self) -> str | None:
        return self._end

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """Whether reasoning has ended by the end of `input_ids`. vLLM's server asks it about the
        prompt (right after `set_prompt_token_ids`): that answer follows the backend's prompt rule
        (`parsebridge.protocol.prompt_rule`), so a backend whose server ignores the prompt (SGLang)
        is not switched to content by one; other ids: the last marker decides."""
        ids = list(input_ids)
        if self._prompt_ids is not None and ids == self._prompt_ids:
            return self._prompt_closes and not self._whole
        text = self._decode(ids[-PROMPT_TAIL_TOKENS:])
        return reasoning_closed(text, self._start, self._end)

    def _decode(self, ids: Sequence[int]) -> str:
        return _decode(self.model_tokenizer, ids, self.pb_spec)

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """Whether the end marker completes within `delta_ids` (decodes only the tail, not the output)."""
        delta = list(delta_ids)
        if not delta:
            return False
        window = list(input_ids)[-(len(delta) + len(self._end)) :]
        before = window[: len(window) - len(delta)]
        return self._end in self._decode(window) and self._end not in self._decode(before)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the end marker (all of them when it is not among them)."""
        ids = list(input_ids)
        if self._end not in self._decode(ids):
            return ids
        # The shortest prefix whose text holds the end marker: a prefix that holds it, every longer
        # one does, so a binary search finds it in log2(n) decodes (a scan would decode n prefixes).
        low, high = 1, len(ids)
        while low < high:
            mid = (low + high) // 2
            if self._end in self._decode(ids[:mid]):
                high = mid
            else:
                low = mid + 1
        return ids[low:]

    def _read_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        """The request's start state and prompt options, as `OutputProcessor` reads the same prompt."""
        self._prompt_ids = list(prompt_token_ids)
        text = self._decode(self._prompt_ids[-PROMPT_TAIL_TOKENS:])
        self._started, self._options = start_options(self._pb, None, self._default, text)
        said = prompt_start_state(self._backend, text, self._start, self._end)
        self._prompt_closes = (self._started if said is None else said) is False

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._read_prompt(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self._read_prompt(prompt_token_ids)

    # ------------------------------------------------------------------ parsing

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        result = self._pb.parse(model_output, reasoning_started=self._started, **self._options)
        return result.reasoning, result.content

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Any:
        if self._stream is None:
            self._stream = self._pb.stream(reasoning_started=self._started, **self._options)
        delta = self._stream.feed(delta_text, list(delta_token_ids) or None)
        self._reasoned = self._reasoned or bool(delta.reasoning)
        if delta.content and (self._reasoned or delta.content.strip()):
            # Whitespace before the start marker is content that does not end reasoning yet.
            self._ended = True
        return _delta_message(delta, _NO_IDS)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        """Reasoning is over once the stream shows content: the rest goes to the tool parser (a parser
        that reads the whole output, as SGLang's server does, never says so: its stream reads it all)."""
        return self._ended and not self._whole

    def finish_streaming(self) -> Any:
        if self._stream is None:
            return None
        return _delta_message(self._stream.flush(), _NO_IDS)

    # vLLM ≤ 0.11 names
    extract_reasoning_content = extract_reasoning
    extract_reasoning_content_streaming = extract_reasoning_streaming


_NO_IDS = _CallIds()  # reasoning deltas carry no calls

#: name → the class registered under it (what this process registered).
REGISTERED: dict[str, type] = {}


def _install(reg: Registration, cls: type) -> None:
    if reg.kind == "tool":
        _api.ToolParserManager.register_module(name=reg.name, force=True, module=cls)
    else:
        _api.ReasoningParserManager.register_module(name=reg.name, force=True, module=cls)


_REGISTRAR = Registrar(
    "vllm",
    {"tool": ParsebridgeToolParser, "reasoning": ParsebridgeReasoningParser},
    _install,
    __name__,
    REGISTERED,
)
register = _REGISTRAR.register
register_all = _REGISTRAR.register_all


def parser_class(reasoning: str | None = None, tool: str | None = None) -> Any:
    """vLLM 0.33's per-request `vllm.parser.Parser` class for two registered names (or specs).

    What vLLM's server composes from ``--reasoning-parser`` and
    ``--tool-call-parser``, for programs that drive `vllm.parser` directly.
    """
    from vllm.parser import ParserManager

    def name_of(value: str | None) -> str | None:
        if value is None or value.startswith(PREFIX) or value in REGISTERED:
            return value
        return register(value) if plugin_name(value) not in REGISTERED else plugin_name(value)

    return ParserManager.get_parser(
        tool_parser_name=name_of(tool), reasoning_parser_name=name_of(reasoning), enable_auto_tools=True
    )


register_all()

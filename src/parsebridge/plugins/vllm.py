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

import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from ..adapters.builtin.engines.reasoning_start import thinking_turned_off
from . import (
    PARSERS,
    FrameworkMissingError,
    Kind,
    Registration,
    reasoning_closed,
    reasoning_markers,
    reasoning_open,
    registrations,
    tool_dicts,
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
    from ..adapters._common import import_first

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


def _decode(tokenizer: Any, ids: Sequence[int]) -> str:
    if not ids:
        return ""
    try:
        return str(tokenizer.decode(list(ids)))
    except Exception:  # a tokenizer that cannot decode these ids: no markers found
        return ""


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
        fields["tool_calls"] = calls
    return _api.new_delta(**fields)


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
        # tool markup that arrives with the end of reasoning. No end marker is declared: formats do
        # not all have one, and a frontend waits for the end of output instead.
        markers = tuple(m for m in getattr(first, "markers", ()) or () if isinstance(m, str) and m)
        self.tool_call_start_token: str | None = markers[0] if markers else None

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
        self._pb = PARSERS.get("reasoning", self.pb_spec, None, self._framework_tokenizer())
        self._start, self._end = reasoning_markers(self._pb)
        #: Whether the prompt opened reasoning (True), closed it (False), or says nothing (None).
        #: The request's chat_template_kwargs (vLLM passes them here) may turn thinking off first.
        self._started: bool | None = (
            False if thinking_turned_off(kwargs.get("chat_template_kwargs")) else None
        )
        self._stream: Any = None
        self._ended = False

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
        text = _decode(self.model_tokenizer, list(input_ids)[-PROMPT_TAIL_TOKENS:])
        return reasoning_closed(text, self._start, self._end)

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """Whether the end marker completes within `delta_ids` (decodes only the tail, not the output)."""
        delta = list(delta_ids)
        if not delta:
            return False
        window = list(input_ids)[-(len(delta) + len(self._end)) :]
        before = window[: len(window) - len(delta)]
        return self._end in _decode(self.model_tokenizer, window) and self._end not in _decode(
            self.model_tokenizer, before
        )

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the end marker (all of them when it is not among them)."""
        ids = list(input_ids)
        if self._end not in _decode(self.model_tokenizer, ids):
            return ids
        for cut in range(1, len(ids) + 1):
            if self._end in _decode(self.model_tokenizer, ids[:cut]):
                return ids[cut:]
        return []

    def _read_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        text = _decode(self.model_tokenizer, list(prompt_token_ids)[-PROMPT_TAIL_TOKENS:])
        if reasoning_open(text, self._start, self._end):
            self._started = True
        elif reasoning_closed(text, self._start, self._end):
            self._started = False

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        self._read_prompt(prompt_token_ids)

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        self._read_prompt(prompt_token_ids)

    # ------------------------------------------------------------------ parsing

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        result = self._pb.parse(model_output, reasoning_started=self._started)
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
            self._stream = self._pb.stream(reasoning_started=self._started)
        delta = self._stream.feed(delta_text, list(delta_token_ids) or None)
        if delta.content:
            self._ended = True
        return _delta_message(delta, _NO_IDS)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        """Reasoning is over once the stream shows content: the rest goes to the tool parser."""
        return self._ended

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


def _class_for(reg: Registration) -> type:
    base: type = ParsebridgeToolParser if reg.kind == "tool" else ParsebridgeReasoningParser
    label = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", reg.spec))
    return type(
        f"Pb{label}{base.__name__.removeprefix('Parsebridge')}",
        (base,),
        {"pb_spec": reg.spec, "__module__": __name__, "__doc__": f"parsebridge `{reg.spec}` in vLLM."},
    )


def _register(reg: Registration) -> type:
    cls = _class_for(reg)
    if reg.kind == "tool":
        _api.ToolParserManager.register_module(name=reg.name, force=True, module=cls)
    else:
        _api.ReasoningParserManager.register_module(name=reg.name, force=True, module=cls)
    REGISTERED[reg.name] = cls
    return cls


def register(spec: str, name: str | None = None, kind: Kind | None = None) -> str:
    """Register one parsebridge parser (any config string) into vLLM; return the name it serves under.

    `name` defaults to ``pb:`` + the spec, lower-cased; `kind` is read from the
    spec (a ``python:`` class says by its base class) when not given.
    """
    from . import kind_of, plugin_name

    reg = Registration((name or plugin_name(spec)).lower(), kind or kind_of(spec), spec)
    _register(reg)
    return reg.name


def register_all(backends: Iterable[str] | None = None) -> list[str]:
    """Register every parser of `backends` (default: builtin and SGLang when installed)
    and the ``PARSEBRIDGE_PLUGIN_PARSERS`` entries; return the names."""
    names = []
    for reg in registrations("vllm", backends=backends):
        _register(reg)
        names.append(reg.name)
    return names


def parser_class(reasoning: str | None = None, tool: str | None = None) -> Any:
    """vLLM 0.33's per-request `vllm.parser.Parser` class for two registered names (or specs).

    What vLLM's server composes from ``--reasoning-parser`` and
    ``--tool-call-parser``, for programs that drive `vllm.parser` directly.
    """
    from vllm.parser import ParserManager

    from . import PREFIX, plugin_name

    def name_of(value: str | None) -> str | None:
        if value is None or value.startswith(PREFIX) or value in REGISTERED:
            return value
        return register(value) if plugin_name(value) not in REGISTERED else plugin_name(value)

    return ParserManager.get_parser(
        tool_parser_name=name_of(tool), reasoning_parser_name=name_of(reasoning), enable_auto_tools=True
    )


register_all()

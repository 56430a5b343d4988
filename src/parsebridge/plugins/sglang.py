"""parsebridge parsers inside SGLang's own server: detectors for its parser tables.

    sglang serve --model-path MODEL \\
        --tool-call-parser pb:builtin:hermes --reasoning-parser pb:builtin:qwen3

`register_all` (run by SGLang itself: parsebridge declares it in SGLang's
``sglang.srt.plugins`` entry-point group, which ``sglang serve``,
``python -m sglang.launch_server`` and every scheduler and detokenizer
process load at start; ``SGLANG_PLUGINS=parsebridge`` restricts SGLang to
it) adds to `FunctionCallParser.ToolCallParserEnum` and
`ReasoningParser.DetectorMap`, under ``pb:`` + a parsebridge config string,
every builtin parser and, when vLLM is installed, every vLLM parser
(``pb:vllm:hermes``), plus the ``PARSEBRIDGE_PLUGIN_PARSERS`` entries (see
`parsebridge.plugins`). Because the tables are filled before SGLang builds
its command line, the names are valid ``--tool-call-parser`` /
``--reasoning-parser`` choices. A ``python:`` parser of your own: call
`register` from your own general plugin, or list it in
``PARSEBRIDGE_PLUGIN_PARSERS``.

Each name is a `BaseFormatDetector` / `BaseReasoningFormatDetector`
subclass. SGLang's server makes one `FunctionCallParser` (and so one
detector) per request and choice for streaming, and another for a one-shot
parse; a detector holds that request's parsebridge stream. At the end of
output SGLang calls `finish` (parsebridge's `flush`). The detectors keep
SGLang's own bookkeeping lists empty, so the server's "unstreamed
arguments" top-up adds nothing to what the stream sent. The detectors do not
constrain generation (`supports_structural_tag` is False): with
``tool_choice="required"`` or a named tool SGLang then constrains to its
JSON-array form and parses that itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, ClassVar

from . import (
    PARSERS,
    FrameworkMissingError,
    Registrar,
    Registration,
    reasoning_markers,
    reasoning_open,
    tool_dicts,
    tool_indices,
)

try:
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    try:
        from sglang.srt.parser import reasoning_parser as _reasoning_module
    except ImportError:  # SGLang <= 0.5.1
        from sglang.srt import reasoning_parser as _reasoning_module  # type: ignore[no-redef]
except ImportError as exc:  # SGLang absent, or a dependency of it
    raise FrameworkMissingError("sglang", "sglang", exc) from exc

BaseReasoningFormatDetector: Any = _reasoning_module.BaseReasoningFormatDetector
ReasoningParser: Any = _reasoning_module.ReasoningParser
ReasoningResult: Any = _reasoning_module.StreamingParseResult


def _tool_result(delta: Any) -> Any:
    """A parsebridge `StreamDelta` as SGLang's streaming result (calls indexed by call)."""
    calls = [ToolCallItem(tool_index=d.index, name=d.name, parameters=d.arguments) for d in delta.tool_calls]
    return StreamingParseResult(normal_text=delta.content, calls=calls)


class ParsebridgeDetector(BaseFormatDetector):  # type: ignore[misc]
    """A parsebridge tool-call parser as an SGLang detector (subclassed per spec by `register`)."""

    pb_spec: ClassVar[str] = ""

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__()
        self._tokenizer = tokenizer
        self._stream: Any = None
        first = PARSERS.get("tool", self.pb_spec, None, tokenizer)  # a broken spec fails here
        markers = tuple(getattr(first, "markers", ()) or ())
        self.bot_token = markers[0] if markers else ""
        self.eot_token = markers[1] if len(markers) > 1 else ""

    def _parser(self, tools: Sequence[Any] | None) -> Any:
        return PARSERS.get("tool", self.pb_spec, tool_dicts(tools), self._tokenizer)

    def has_tool_call(self, text: str) -> bool:
        return bool(self._parser(None).has_tool_calls(text))

    def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
        specs = tool_dicts(tools)
        result = self._parser(tools).parse(text)
        where = tool_indices(specs)
        calls = [
            ToolCallItem(tool_index=where.get(c.name, -1), name=c.name, parameters=c.arguments_json)
            for c in result.tool_calls
        ]
        return StreamingParseResult(normal_text=result.content or "", calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
        if self._stream is None:
            self._stream = self._parser(tools).stream()
        return _tool_result(self._stream.feed(new_text))

    def finish(self, tools: list[Any]) -> Any:
        if self._stream is None:
            return StreamingParseResult()
        return _tool_result(self._stream.flush())

    def supports_structural_tag(self) -> bool:
        return False

    def structure_info(self) -> Any:
        raise NotImplementedError(f"pb:{self.pb_spec} does not constrain generation (no structural tag)")

    def build_ebnf(self, tools: list[Any]) -> str:  # abstract in SGLang <= 0.4 (its constrained decoding)
        raise NotImplementedError(f"pb:{self.pb_spec} does not constrain generation (no EBNF grammar)")


#: What this release's reasoning detector base takes (SGLang 0.4 has neither
#: `continue_final_message` nor `previous_content`).
_BASE_REASONING_ARGS = frozenset(inspect.signature(BaseReasoningFormatDetector.__init__).parameters)


def _reasoning_default(parser: Any) -> dict[str, str | None]:
    """What SGLang's server derives `force_reasoning` from, for a parser whose default start is
    known (builtin's): ``"enable_thinking"`` (forced unless the request's chat_template_kwargs
    turn thinking off, as for SGLang's own qwen3) when it starts inside reasoning, None (never
    forced) when not. Other parsers keep SGLang's default ("always": every request forced)."""
    started = getattr(getattr(parser, "inner", parser), "started_by_default", None)
    if started is None:
        return {}
    return {"reasoning_default": "enable_thinking" if started else None}


class ParsebridgeReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc]
    """A parsebridge reasoning parser as an SGLang reasoning detector (subclassed per spec).

    SGLang's `force_reasoning` becomes parsebridge's ``reasoning_started``:
    SGLang's server derives it per request from the template and the
    detector's `reasoning_default` (`_reasoning_default`, for builtin parsers:
    thinking turned off by chat_template_kwargs means False); not given, the
    parser's own default applies. ``stream_reasoning=False`` holds reasoning back until
    reasoning ends, as SGLang's detectors do.
    """

    pb_spec: ClassVar[str] = ""

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool | None = None,
        continue_final_message: bool = False,
        previous_content: str = "",
        tokenizer: Any = None,
        **_ignored: Any,
    ) -> None:
        self._pb = PARSERS.get("reasoning", self.pb_spec, None, tokenizer)
        start, end = reasoning_markers(self._pb)
        default = _reasoning_default(self._pb)
        offered = {
            "force_reasoning": bool(force_reasoning),
            "stream_reasoning": stream_reasoning,
            "continue_final_message": continue_final_message,
            "previous_content": previous_content or "",
            **default,
        }
        super().__init__(start, end, **{k: v for k, v in offered.items() if k in _BASE_REASONING_ARGS})
        # Declared (builtin): SGLang's False means thinking is off; otherwise only True says anything.
        started: bool | None = force_reasoning if default else (True if force_reasoning else None)
        if continue_final_message and previous_content and reasoning_open(previous_content, start, end):
            started = True
        self._started = started
        self._stream: Any = None
        self._held_reasoning: list[str] = []

    def detect_and_parse(self, text: str) -> Any:
        result = self._pb.parse(text, reasoning_started=self._started)
        return ReasoningResult(normal_text=result.content or "", reasoning_text=result.reasoning or "")

    def _shown(self, delta: Any, final: bool) -> Any:
        reasoning = delta.reasoning
        if not self.stream_reasoning:  # whole reasoning at once, when it ends
            if reasoning:
                self._held_reasoning.append(reasoning)
            reasoning = ""
            if self._held_reasoning and (delta.content or final):
                reasoning = "".join(self._held_reasoning)
                self._held_reasoning.clear()
        return ReasoningResult(normal_text=delta.content, reasoning_text=reasoning)

    def parse_streaming_increment(self, new_text: str) -> Any:
        if self._stream is None:
            self._stream = self._pb.stream(reasoning_started=self._started)
        return self._shown(self._stream.feed(new_text), False)

    def finish(self) -> Any:
        if self._stream is None:
            return ReasoningResult()
        return self._shown(self._stream.flush(), True)


#: name → the class registered under it (what this process registered).
REGISTERED: dict[str, type] = {}


def _install(reg: Registration, cls: type) -> None:
    if reg.kind == "tool":
        FunctionCallParser.ToolCallParserEnum[reg.name] = cls
    else:
        ReasoningParser.DetectorMap[reg.name.lower()] = cls


_REGISTRAR = Registrar(
    "sglang",
    {"tool": ParsebridgeDetector, "reasoning": ParsebridgeReasoningDetector},
    _install,
    __name__,
    REGISTERED,
)
register = _REGISTRAR.register
register_all = _REGISTRAR.register_all

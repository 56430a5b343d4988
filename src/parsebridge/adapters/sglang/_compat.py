"""What the installed SGLang looks like: import paths, constructor keywords and serving behaviour.

Everything that moved between releases is looked up here once, by feature
detection where a feature can be seen (a module exists, a constructor takes a
keyword, a class has a method). What cannot be seen from outside the chat
server (how it builds tool-call ids, how it computes the end-of-stream
argument flush, how it decides from a request that reasoning is forced) is
keyed on the release number, measured on 0.4.10.post2, 0.5.1.post3,
0.5.10.post1 and 0.5.23; releases in between get the behaviour
of the nearest measured release below them.

This is the only module that imports SGLang, always inside functions.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...protocol import ToolCall
from ...protocol.calls import new_call_id
from ...protocol.models import make_tool_call
from ...protocol.tools import openai_tool
from .._common import import_first, importable, process_wide, quiet_framework_logs, version_tuple
from .._tokenizers import is_marker, marker_strings


def accepts(func: Any, param: str) -> bool:
    """Whether `func` takes a keyword `param` (explicitly, not through ``**kwargs``)."""
    try:
        return param in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class ServingBehaviour:
    """How the release's OpenAI chat server drives the parsers (restated, not imported).

    `kimi_ids`: tool-call ids for ``kimi_k2`` follow the model's own
    ``functions.NAME:INDEX`` form (0.5.1+), and ``kimi_k3`` ids are
    ``NAME:INDEX`` (0.5.23); everything else gets ``call_`` + 24 hex digits.
    `prefix_remaining_args`: the end-of-stream flush of unstreamed arguments
    sends the suffix of the expected arguments after what was streamed
    (0.5.23) rather than the expected text with the first occurrence of the
    streamed text removed (older).
    `request_force`: how a request decides that reasoning is forced when the
    chat template does not (``None``: the server passes no such flag;
    ``"enable_thinking"``: 0.5.1's chat_template_kwargs flags; ``"per_parser"``:
    0.5.10's table per parser; ``"detector_default"``: 0.5.23's fallback to
    the detector's `reasoning_default` when no template config is known).
    """

    kimi_ids: bool
    kimi_k3_ids: bool
    prefix_remaining_args: bool
    request_force: str | None


class SglangApi:
    """The installed SGLang's parser API, resolved once per process."""

    def __init__(self) -> None:
        quiet_framework_logs()  # before the first import: vLLM configures its logger then
        import sglang

        self.sglang = sglang
        self.version: str = _sglang_version(sglang)
        self.version_tuple = version_tuple(self.version)
        self.fc_module = import_first(
            "sglang.srt.function_call.function_call_parser", "sglang.srt.function_call_parser"
        )
        self.reasoning_module = import_first(
            "sglang.srt.parser.reasoning_parser", "sglang.srt.reasoning_parser"
        )
        self.FunctionCallParser = self.fc_module.FunctionCallParser
        self.ReasoningParser = self.reasoning_module.ReasoningParser
        self.protocol = importlib.import_module("sglang.srt.entrypoints.openai.protocol")
        self.Tool = self.protocol.Tool
        self.ChatCompletionRequest = getattr(self.protocol, "ChatCompletionRequest", None)

    # ------------------------------------------------------------------ shape

    @cached_property
    def fc_accepts(self) -> frozenset[str]:
        init = self.FunctionCallParser.__init__
        return frozenset(k for k in ("tokenizer", "tool_choice") if accepts(init, k))

    @cached_property
    def rp_accepts(self) -> frozenset[str]:
        init = self.ReasoningParser.__init__
        keys = ("force_reasoning", "request", "tokenizer", "tool_call_parser_active")
        return frozenset(k for k in keys if accepts(init, k))

    @cached_property
    def has_stream_end(self) -> bool:
        """0.5.23+: both parsers flush held-back state with `parse_stream_end()` when the stream ends."""
        return hasattr(self.FunctionCallParser, "parse_stream_end") and hasattr(
            self.ReasoningParser, "parse_stream_end"
        )

    @cached_property
    def forced_choices(self) -> bool:
        """0.5.23's shape: a required/named request goes to the tool parser when it
        `owns_tool_format()`, else to `JsonArrayParser` (see `_forced`)."""
        if not hasattr(self.FunctionCallParser, "owns_tool_format") or "tool_choice" not in self.fc_accepts:
            return False
        return importable("sglang.srt.function_call.json_array_parser")

    @cached_property
    def has_preserve_incomplete(self) -> bool:
        return accepts(self.FunctionCallParser.parse_non_stream, "preserve_incomplete")

    @cached_property
    def parses_without_tools_shape(self) -> bool:
        """0.5.23: with no tools declared, tool parsing runs iff the detector `parses_without_tools()`."""
        base = _base_detector(self.fc_module)
        return base is not None and hasattr(base, "parses_without_tools")

    @cached_property
    def serving(self) -> ServingBehaviour:
        v = self.version_tuple
        if "force_reasoning" not in self.rp_accepts:
            force = None
        elif v >= (0, 5, 23):
            force = "detector_default"
        elif v >= (0, 5, 10):
            force = "per_parser"
        else:
            force = "enable_thinking"
        return ServingBehaviour(
            kimi_ids=v >= (0, 5, 1),
            kimi_k3_ids=v >= (0, 5, 23),
            prefix_remaining_args=v >= (0, 5, 23),
            request_force=force,
        )

    def api_shape(self) -> str:
        s = self.serving
        parts = [
            f"sglang {self.version}",
            self.fc_module.__name__,
            self.reasoning_module.__name__,
            "ReasoningParser("
            + ", ".join(["model_type", "stream_reasoning", *sorted(self.rp_accepts)])
            + ")",
            "FunctionCallParser(" + ", ".join(["tools", "name", *sorted(self.fc_accepts)]) + ")",
        ]
        if self.has_stream_end:
            parts.append("parse_stream_end")
        if self.has_preserve_incomplete:
            parts.append("preserve_incomplete")
        parts.append(f"request force: {s.request_force or 'none'}")
        return "; ".join(parts)

    # ------------------------------------------------------------------ names

    def tool_parser_names(self) -> list[str]:
        return list(self.FunctionCallParser.ToolCallParserEnum)

    def reasoning_parser_names(self) -> list[str]:
        return list(self.ReasoningParser.DetectorMap)

    def tool_detector_class(self, name: str) -> type:
        return self.FunctionCallParser.ToolCallParserEnum[name]  # type: ignore[no-any-return]

    def reasoning_detector_class(self, name: str) -> type:
        return self.ReasoningParser.DetectorMap[name.lower()]  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ construction

    def make_tools(self, tools: Sequence[dict[str, Any]] | None) -> list[Any]:
        """OpenAI tool dicts as SGLang `Tool` objects (the flat ``{"name": …}`` form is wrapped)."""
        return [self.Tool.model_validate(openai_tool(tool)) for tool in tools or ()]

    def make_request(
        self,
        tools: list[Any],
        tool_choice: Any,
        chat_template_kwargs: dict[str, Any] | None,
        request_fields: dict[str, Any] | None,
    ) -> Any:
        """A chat request as the server would hold it (only releases whose parsers read one need it)."""
        if self.ChatCompletionRequest is None:
            return None
        fields: dict[str, Any] = {
            "model": "parsebridge",
            "messages": [{"role": "user", "content": "parsebridge"}],
            **(request_fields or {}),
        }
        if chat_template_kwargs:
            fields["chat_template_kwargs"] = dict(chat_template_kwargs)
        if tools:
            fields["tools"] = tools
            fields["tool_choice"] = tool_choice
        return self.ChatCompletionRequest.model_validate(fields)

    def function_call_parser_factory(
        self, tools: list[Any], name: str, *, tokenizer: Any = None, tool_choice: Any = None
    ) -> Callable[[], Any]:
        """`FunctionCallParser(tools, name, …)` with the keywords this release takes and the server passes."""
        kwargs: dict[str, Any] = {}
        if tokenizer is not None and "tokenizer" in self.fc_accepts:
            kwargs["tokenizer"] = tokenizer
        if tool_choice is not None and "tool_choice" in self.fc_accepts:
            kwargs["tool_choice"] = tool_choice
        return functools.partial(self.FunctionCallParser, tools, name, **kwargs)

    def reasoning_parser_factory(
        self,
        name: str,
        *,
        stream_reasoning: bool,
        force_reasoning: bool | None,
        request: Any = None,
        tokenizer: Any = None,
        tool_call_parser_active: bool = False,
    ) -> Callable[[], Any]:
        """`ReasoningParser(name, stream_reasoning, …)` with the keywords this release takes."""
        kwargs: dict[str, Any] = {"stream_reasoning": stream_reasoning}
        if force_reasoning is not None and "force_reasoning" in self.rp_accepts:
            kwargs["force_reasoning"] = force_reasoning
        if request is not None and "request" in self.rp_accepts:
            kwargs["request"] = request
        if tokenizer is not None and "tokenizer" in self.rp_accepts:
            kwargs["tokenizer"] = tokenizer
        if tool_call_parser_active and "tool_call_parser_active" in self.rp_accepts:
            kwargs["tool_call_parser_active"] = True
        return functools.partial(self.ReasoningParser, name, **kwargs)

    # ------------------------------------------------------------------ serving decisions

    def tool_parsing_active(self, name: str | None, tools: list[Any], tool_choice: Any) -> bool:
        """Whether the server runs the tool-call parser for this request at all."""
        if not name:
            return False
        if not tools:
            if self.parses_without_tools_shape:
                return bool(self.tool_detector_class(name).parses_without_tools())
            return False
        return tool_choice != "none"

    def request_forces_reasoning(
        self,
        name: str,
        chat_template_kwargs: dict[str, Any] | None,
        reasoning_effort: str | None = None,
        tokenizer: Any = None,
    ) -> bool | None:
        """The server's request-side decision that reasoning is on, with no chat-template knowledge.

        The server forces reasoning when the template opened it in the prompt
        *or* the request asks for thinking; this is the second half. None:
        this release passes no such flag (or leaves it to the parser).
        """
        mode = self.serving.request_force
        kw = chat_template_kwargs or {}
        lowered = name.lower()
        if mode is None:
            return None
        if mode == "enable_thinking":
            for key in ("enable_thinking", "thinking"):
                if kw.get(key) is not None:
                    return bool(kw[key])
            return False
        if mode == "per_parser":
            if lowered == "deepseek-v3":
                return kw.get("thinking") is True
            if lowered == "kimi_k2":
                return not kw or kw.get("thinking") is not False
            if lowered in ("qwen3", "glm45", "nemotron_3", "interns1"):
                return not kw or kw.get("enable_thinking") is not False
            if lowered == "mimo":
                return kw.get("enable_thinking") is True
            if lowered == "mistral":
                return reasoning_effort is not None and reasoning_effort != "none"
            return True
        # detector_default (0.5.23): parsers with their own request logic decide themselves.
        if lowered in ("iquest_q1", "minimax-m3", "hunyuan"):
            return None
        try:
            detector = self.reasoning_parser_factory(
                name, stream_reasoning=True, force_reasoning=None, tokenizer=tokenizer
            )().detector
        except Exception:
            return False
        default = getattr(detector, "reasoning_default", None)
        if default is None:
            return False
        if default == "always":
            return True
        if default == "mistral":
            return reasoning_effort is not None and reasoning_effort != "none"
        if default in ("thinking", "enable_thinking"):
            return not kw or kw.get(default) is not False
        if default in ("explicit_thinking", "explicit_enable_thinking"):
            return kw.get(default.replace("explicit_", "")) is True
        return False

    def id_form(self, parser_name: str) -> str | None:
        """The id the server gives a call of this parser, as a template of its name and index
        (Kimi's forms), or None: a fresh random id (no message history here, so history count 0)."""
        s = self.serving
        if s.kimi_ids and parser_name == "kimi_k2":
            return "functions.{name}:{index}"
        if s.kimi_k3_ids and parser_name == "kimi_k3":
            return "{name}:{index}"
        return None

    def call_id(self, parser_name: str, name: str | None, tool_index: int) -> str:
        """The id the server gives a call."""
        form = self.id_form(parser_name)
        if form is None:
            return new_call_id()  # the server's `call_` + 24 random hex, without building a UUID
        return form.format(name=name, index=tool_index)

    def tool_calls(self, parser_name: str, items: Sequence[Any]) -> list[ToolCall]:
        """SGLang's non-streamed call items as calls, with the ids its server gives them."""
        return calls_of(items, self.id_form(parser_name))

    def unstreamed_arguments(self, parser: Any) -> tuple[int, str] | None:
        """(call index, argument text) the server sends at the end of a stream, if any."""
        detector = getattr(parser, "detector", parser)
        prev = getattr(detector, "prev_tool_call_arr", None)
        streamed = getattr(detector, "streamed_args_for_tool", None)
        if not prev or not streamed:
            return None
        index = len(prev) - 1
        if index < 0 or index >= len(streamed):
            return None
        expected_args = prev[index].get("arguments", {})
        actual = streamed[index]
        if self.serving.prefix_remaining_args:
            expected = (
                expected_args
                if isinstance(expected_args, str)
                else json.dumps(expected_args, ensure_ascii=False)
            )
            rest = expected[len(actual) :] if expected.startswith(actual) else ""
        else:
            expected = json.dumps(expected_args, ensure_ascii=False)
            rest = expected.replace(actual, "", 1) if actual in expected else ""
        return (index, rest) if rest else None

    @cached_property
    def _markers(self) -> tuple[str, ...]:
        found: set[str] = set()
        for cls in {
            *self.FunctionCallParser.ToolCallParserEnum.values(),
            *self.ReasoningParser.DetectorMap.values(),
        }:
            found |= marker_strings(cls, "sglang")
            try:  # most detectors set their markers in __init__
                detector = cls()
            except Exception:
                continue
            for attr in (
                "bot_token",
                "eot_token",
                "think_start_token",
                "think_end_token",
                "tool_call_separator",
            ):
                value = getattr(detector, attr, None)
                if isinstance(value, str) and is_marker(value.strip()):
                    found.add(value.strip())
        # A compound marker ("<|channel|>analysis<|message|>") is several tokens in a real vocabulary.
        return tuple(sorted(m for m in found if m.count("<") <= 1 and m.count(">") <= 1))

    def marker_strings(self) -> list[str]:
        """Marker strings SGLang's detectors use (for a chunking tokenizer that keeps them atomic)."""
        return list(self._markers)


def _base_detector(fc_module: Any) -> type | None:
    for name in ("sglang.srt.function_call.base_format_detector",):
        try:
            return importlib.import_module(name).BaseFormatDetector  # type: ignore[no-any-return]
        except (ModuleNotFoundError, AttributeError):
            continue
    return getattr(fc_module, "BaseFormatDetector", None)


def _sglang_version(module: Any) -> str:
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    try:
        import importlib.metadata

        return importlib.metadata.version("sglang")
    except Exception:
        return "0"


@process_wide
def get_api() -> SglangApi:
    """The process-wide `SglangApi` (imports SGLang on first call)."""
    return SglangApi()


def calls_of(items: Sequence[Any], id_form: str | None) -> list[ToolCall]:
    """SGLang's non-streamed call items as calls, with ids of `id_form` (`SglangApi.id_form`, which a
    parser works out once); random ids are left to `make_tool_call` to mint (one frame fewer per
    call than through `call_id`)."""
    if id_form is None:
        return [make_tool_call(item.name or "", item.parameters or "") for item in items]
    return [
        make_tool_call(
            item.name or "", item.parameters or "", id_form.format(name=item.name, index=item.tool_index)
        )
        for item in items
    ]

"""The builtin backend: parsebridge's own pure-Python parsers, the default.

No framework is needed. Each format lives in its own module and is imported
only when a spec names it, so listing names costs nothing. Streams are
incremental and linear in the output length: their machines hold back only text
that could still be the start of a marker and never re-parse what they have seen
(a stream also holds each call until it is whole: `engines.whole_calls`).

`conventions=` ("servers", the default, or "lossless"; see `conventions`) says what
the content holds when the output is not clean. Malformed output never raises; the
policy (README "Builtin parsers") is:
a call whose name cannot be recovered stays in the content verbatim; a call
that is not whole (cut off by the end of output, or arguments that are not a
complete JSON object) is no call, its text is text (`engines.whole_calls`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Collection, Sequence
from typing import Any

from ...protocol import InvalidSpecError, ReasoningParser, ToolParser, ToolSpec
from ...protocol.family_rows import Kind, rows_of
from ..base import Backend
from .engines.conventions import check_conventions
from .engines.reasoning_start import wrong_thinking_switch

#: tool parser name → "module:Class" (modules relative to this package). Implementation data:
#: which names exist is `families.toml`'s `builtin` column, and a test fails when the two differ.
TOOL_PARSERS: dict[str, str] = {
    "hermes": "hermes:HermesToolParser",
    "llama3_json": "llama3_json:Llama3JsonToolParser",
    "mistral": "mistral:MistralToolParser",
    "pythonic": "pythonic:PythonicToolParser",
    "deepseek_v3": "deepseek_v3:DeepSeekV3ToolParser",
    "qwen3_coder": "qwen3_coder:Qwen3CoderToolParser",
    "mimo": "qwen3_coder:MimoToolParser",
    # JSON-payload formats (one machine, `json_payload`)
    "granite": "granite:GraniteToolParser",
    "granite_20b_fc": "granite:GraniteFcToolParser",
    "jamba": "jamba:JambaToolParser",
    "phi4_mini": "phi4_mini:Phi4MiniToolParser",
    "xlam": "xlam:XlamToolParser",
    "internlm": "internlm:InternlmToolParser",
    "json": "json_calls:JsonToolParser",
    "cohere": "cohere:CohereToolParser",
    "longcat": "longcat:LongcatToolParser",
    "gigachat3": "gigachat3:GigaChat3ToolParser",
    "apertus": "apertus:ApertusToolParser",
    # special-token section formats (tools-b)
    "kimi_k2": "kimi_k2:KimiK2ToolParser",
    "deepseek_v31": "deepseek_v3:DeepSeekV31ToolParser",
    "deepseek_v32": "deepseek_v32:DeepSeekV32ToolParser",
    "deepseek_v4": "deepseek_v32:DeepSeekV4ToolParser",
    "deepseek_v41": "deepseek_v32:DeepSeekV41ToolParser",
    "step3": "step3:Step3ToolParser",
    "gpt_oss": "gpt_oss:GptOssToolParser",
    "kimi_k3": "kimi_k3:KimiK3ToolParser",
    "plamo3": "plamo3:Plamo3ToolParser",
    "inkling": "inkling:InklingToolParser",
    "minicpm5": "minicpm5:MiniCPM5ToolParser",
    # XML-ish tagged-parameter formats (tools-c)
    "glm45": "glm45:Glm45ToolParser",
    "minimax_m2": "minimax_m2:MinimaxM2ToolParser",
    "seed_oss": "seed_oss:SeedOssToolParser",
    "iquest_q1": "iquest_q1:IQuestQ1ToolParser",
    "dots": "dots:DotsToolParser",
    "gemma4": "gemma4:Gemma4ToolParser",
    "functiongemma": "gemma4:FunctionGemmaToolParser",
    "nemotron_deci": "nemotron_deci:NemotronDeciToolParser",
    "sarashina": "sarashina:SarashinaToolParser",
}

#: Reasoning parsers with a class of their own; every other name in `families.toml`'s `builtin`
#: column is a preset built from its family's format (`reasoning_presets`).
REASONING_CLASSES: dict[str, str] = {
    "deepseek_r1": "engines.think_tags:DeepSeekR1ReasoningParser",
    # harmony (tools-b): one format for reasoning, content and calls
    "gpt_oss": "gpt_oss:GptOssReasoningParser",
    "inkling": "inkling_reasoning:InklingReasoningParser",
}

#: Builtin parsers that are no family's (any markers, given as options): listed after the families'.
GENERIC_REASONING: dict[str, str] = {"think": "engines.think_tags:ThinkTagReasoningParser"}

#: The keyword options builtin parsers take (anything else is an `UnknownOptionError`):
#: `conventions` (see `engines.conventions`); `chat_template_kwargs` (``enable_thinking=False``
#: turns reasoning off); `tool_choice`, which `OutputProcessor` passes with a request and applies
#: itself; `started`/`prompt`, where reasoning starts; `start`/`end`, the `think` parser's markers.
TOOL_OPTIONS = frozenset({"conventions", "chat_template_kwargs", "tool_choice"})
REASONING_OPTIONS = frozenset({"conventions", "chat_template_kwargs", "started", "prompt"})
EXTRA_REASONING_OPTIONS: dict[str, frozenset[str]] = {"think": frozenset({"start", "end"})}


@functools.cache
def reasoning_parsers() -> dict[str, str]:
    """Reasoning parser name → "module:Class", in `families.toml`'s order (read on first use)."""
    named = builtin_names("reasoning")
    return {**{n: REASONING_CLASSES.get(n, f"reasoning_presets:{n}") for n in named}, **GENERIC_REASONING}


def builtin_names(kind: Kind) -> list[str]:
    """The builtin parser names `families.toml` gives its families (first use order, no repeats)."""
    return list(dict.fromkeys(name for row in rows_of(kind) if (name := row.parsers.get("builtin"))))


def __getattr__(name: str) -> Any:
    if name == "REASONING_PARSERS":  # derived from the family table, so read on first use
        return reasoning_parsers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load(target: str) -> Any:
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


class BuiltinBackend(Backend):
    """parsebridge's own parsers; always available."""

    name = "builtin"

    def tool_parser_names(self) -> list[str]:
        return list(TOOL_PARSERS)

    def reasoning_parser_names(self) -> list[str]:
        return list(reasoning_parsers())

    def api_shape(self) -> str | None:
        return "parsebridge builtin"

    def option_names(self, kind: str, name: str) -> Collection[str] | None:
        if kind == "tool":
            return TOOL_OPTIONS
        return REASONING_OPTIONS | EXTRA_REASONING_OPTIONS.get(name, frozenset())

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        check_option_types(f"builtin:{name}", options)
        return _load(TOOL_PARSERS[name])(tools=tools, **options)  # type: ignore[no-any-return]

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        # Conventions decide only where reasoning starts (`reasoning_start`); checked here so
        # a parser that ignores them still refuses a misspelt one.
        check_conventions(options.get("conventions"))
        check_option_types(f"builtin:{name}", options)
        return _load(reasoning_parsers()[name])(**options)  # type: ignore[no-any-return]


#: The type each builtin option other than `conventions` must have when given (None: not given).
_OPTION_TYPES: dict[str, tuple[type, str]] = {
    "started": (bool, "True, False or None"),
    "prompt": (str, "the prompt's text, a str"),
    "chat_template_kwargs": (dict, 'a dict, e.g. {"enable_thinking": False}'),
}


def check_option_types(spec: str, options: dict[str, Any]) -> None:
    """`InvalidSpecError` for an option of the wrong type, when the parser is built: a string
    ``started="false"`` is truthy and ``chat_template_kwargs="enable_thinking=False"`` says
    nothing, so either would be read, silently, as something else than was meant; so is a
    thinking switch ``{"enable_thinking": "no"}``."""
    for option, (kind, expected) in _OPTION_TYPES.items():
        value = options.get(option)
        if value is not None and not isinstance(value, kind):
            raise InvalidSpecError(
                f"{spec}: {option}={value!r}: expected {expected}, not {type(value).__name__}"
            )
    wrong = wrong_thinking_switch(options.get("chat_template_kwargs"))
    if wrong is not None:
        key, value = wrong
        raise InvalidSpecError(
            f"{spec}: chat_template_kwargs[{key!r}]={value!r}: expected True, False or None, "
            f"not {type(value).__name__} (a template reads any non-empty string as true)"
        )

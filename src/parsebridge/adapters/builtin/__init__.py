"""The builtin backend: parsebridge's own pure-Python parsers, the default.

No framework is needed. Each format lives in its own module and is imported
only when a spec names it, so listing names costs nothing. Streams are
incremental and linear in the output length: they hold back only text that
could still be the start of a marker and never re-parse what they have seen.

Malformed output never raises; the policy (README "Builtin parsers") is:
a call whose name cannot be recovered stays in the content verbatim; a
named call whose arguments are not a JSON object is kept with
`invalid_arguments`; a call cut off by the end of output is kept when its
name is known (arguments flagged unless they happen to be complete).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from ...protocol import ReasoningParser, ToolParser, ToolSpec
from ..base import Backend

#: name → "module:Class" (modules relative to this package).
TOOL_PARSERS: dict[str, str] = {
    "hermes": "hermes:HermesToolParser",
    "llama3_json": "llama3_json:Llama3JsonToolParser",
    "mistral": "mistral:MistralToolParser",
    "pythonic": "pythonic:PythonicToolParser",
    "deepseek_v3": "deepseek_v3:DeepSeekV3ToolParser",
    "qwen3_coder": "qwen3_coder:Qwen3CoderToolParser",
    # XML-ish tagged-parameter formats (tools-c)
    "glm45": "glm45:Glm45ToolParser",
    "minimax_m2": "minimax_m2:MinimaxM2ToolParser",
    "seed_oss": "seed_oss:SeedOssToolParser",
    "iquest_q1": "iquest_q1:IQuestQ1ToolParser",
    "dots": "dots:DotsToolParser",
    "minicpm5": "minicpm5:MiniCPM5ToolParser",
    "gemma4": "gemma4:Gemma4ToolParser",
    "functiongemma": "gemma4:FunctionGemmaToolParser",
}

REASONING_PARSERS: dict[str, str] = {
    "qwen3": "reasoning:Qwen3ReasoningParser",
    "deepseek_r1": "reasoning:DeepSeekR1ReasoningParser",
    "think": "reasoning:ThinkTagReasoningParser",
}


def _load(target: str) -> Any:
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


class BuiltinBackend(Backend):
    """parsebridge's own parsers; always available."""

    name = "builtin"

    def tool_parser_names(self) -> list[str]:
        return list(TOOL_PARSERS)

    def reasoning_parser_names(self) -> list[str]:
        return list(REASONING_PARSERS)

    def api_shape(self) -> str | None:
        return "parsebridge builtin"

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        return _load(TOOL_PARSERS[name])(tools=tools, **options)  # type: ignore[no-any-return]

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        return _load(REASONING_PARSERS[name])(**options)  # type: ignore[no-any-return]

"""The SGLang backend: every SGLang function-call and reasoning parser as ``sglang:NAME``.

SGLang is imported on first use (listing names or building a parser), never
at import of this package, so `import parsebridge` stays free of SGLang and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver`); API shapes per release are detected in
`_compat`.
"""

from __future__ import annotations

from ..base import FrameworkBackend

#: `SglangEngine`'s keywords (tool and reasoning parsers alike).
_ENGINE_OPTIONS = frozenset(
    {
        "tokenizer",
        "tool_choice",
        "chat_template_kwargs",
        "reasoning_effort",
        "request_fields",
        "stream_reasoning",
        "end_of_stream",
    }
)


class SglangBackend(FrameworkBackend):
    """SGLang's FunctionCallParser and ReasoningParser registries behind the protocol."""

    name = "sglang"
    parser_classes = ("SglangToolParser", "SglangReasoningParser", "SglangPipeline")
    tool_options = _ENGINE_OPTIONS
    import_weight = 1  # its parsers import torch


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = SglangBackend.install_command

__all__ = ["INSTALL_COMMAND", "SglangBackend"]

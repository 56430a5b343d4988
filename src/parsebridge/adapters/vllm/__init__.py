"""The vLLM backend: every vLLM tool-call and reasoning parser as ``vllm:NAME``.

vLLM is imported on first use (listing names or building a parser), never at
import of this package, so `import parsebridge` stays free of vLLM and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver` and `_compat.ServingBehaviour`).
"""

from __future__ import annotations

from ..base import FrameworkBackend

#: `VllmEngine`'s keywords; reasoning parsers also take the prompt they read where reasoning starts.
_ENGINE_OPTIONS = frozenset(
    {"tokenizer", "tool_choice", "chat_template_kwargs", "request_fields", "end_of_stream", "native"}
)


class VllmBackend(FrameworkBackend):
    """vLLM's ToolParserManager and ReasoningParserManager behind the protocol."""

    name = "vllm"
    parser_classes = ("VllmToolParser", "VllmReasoningParser", "VllmPipeline")
    tool_options = _ENGINE_OPTIONS
    reasoning_options = _ENGINE_OPTIONS | {"prompt", "prompt_token_ids"}
    import_weight = 2  # vllm.tool_parsers imports torch and vLLM's config tree: the heaviest here


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = VllmBackend.install_command

__all__ = ["INSTALL_COMMAND", "VllmBackend"]

"""The vLLM backend: every vLLM tool-call and reasoning parser as ``vllm:NAME``.

vLLM is imported on first use (listing names or building a parser), never at
import of this package, so `import parsebridge` stays free of vLLM and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver` and `_compat.ServingBehaviour`).
"""

from __future__ import annotations

from ..._frameworks.install import install_hint
from ..base import FrameworkBackend

#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = install_hint("vllm")


class VllmBackend(FrameworkBackend):
    """vLLM's ToolParserManager and ReasoningParserManager behind the protocol."""

    name = "vllm"
    import_name = "vllm"
    distribution = "vllm"
    install_command = INSTALL_COMMAND
    parser_classes = ("VllmToolParser", "VllmReasoningParser", "VllmPipeline")


__all__ = ["INSTALL_COMMAND", "VllmBackend"]

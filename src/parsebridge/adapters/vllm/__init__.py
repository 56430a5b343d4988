"""The vLLM backend: every vLLM tool-call and reasoning parser as ``vllm:NAME``.

vLLM is imported on first use (listing names or building a parser), never at
import of this package, so `import parsebridge` stays free of vLLM and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver` and `_compat.ServingBehaviour`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...protocol import Pipeline, ReasoningParser, ToolParser, ToolSpec
from ..base import Backend

INSTALL_COMMAND = (
    "python tools/install_framework.py vllm-latest   "
    "(parsers-only, CPU torch: pip install -c requirements/constraints.txt -r requirements/vllm-X.txt "
    "&& pip install --no-deps vllm==X)"
)


class VllmBackend(Backend):
    """vLLM's ToolParserManager and ReasoningParserManager behind the protocol."""

    name = "vllm"
    import_name = "vllm"
    distribution = "vllm"
    install_command = INSTALL_COMMAND

    def _api(self) -> Any:
        self.require()
        from ._compat import get_api

        return get_api()

    def api_shape(self) -> str | None:
        return self._api().api_shape()

    def tool_parser_names(self) -> list[str]:
        return self._api().tool_parser_names()

    def reasoning_parser_names(self) -> list[str]:
        return self._api().reasoning_parser_names()

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        self.require()
        from .parsers import VllmToolParser

        return VllmToolParser(name, tools, **options)

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        self.require()
        from .parsers import VllmReasoningParser

        return VllmReasoningParser(name, **options)

    def create_pipeline(
        self,
        reasoning: str | None,
        tool: str | None,
        *,
        tools: Sequence[ToolSpec] | None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> Pipeline | None:
        """vLLM's own chain: one session parses reasoning then tools, as one server request."""
        if reasoning is None or tool is None:
            return None
        self.require()
        from .parsers import VllmPipeline

        return VllmPipeline(reasoning, tool, tools=tools, reasoning_started=reasoning_started, **options)


__all__ = ["INSTALL_COMMAND", "VllmBackend"]

"""The SGLang backend: every SGLang function-call and reasoning parser as ``sglang:NAME``.

SGLang is imported on first use (listing names or building a parser), never
at import of this package, so `import parsebridge` stays free of SGLang and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver`); API shapes per release are detected in
`_compat`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...protocol import Pipeline, ReasoningParser, ToolParser, ToolSpec
from ..base import Backend

INSTALL_COMMAND = (
    "python tools/install_framework.py sglang-latest   "
    "(parsers-only, no GPU: pip install -c requirements/constraints.txt -r requirements/sglang-X.txt "
    "&& pip install --no-deps sglang==X)"
)


class SglangBackend(Backend):
    """SGLang's FunctionCallParser and ReasoningParser registries behind the protocol."""

    name = "sglang"
    import_name = "sglang"
    distribution = "sglang"
    install_command = INSTALL_COMMAND

    def _api(self) -> Any:
        self.require()
        from ._compat import get_api

        return get_api()

    def api_shape(self) -> str | None:
        return self._api().api_shape()  # type: ignore[no-any-return]

    def tool_parser_names(self) -> list[str]:
        return self._api().tool_parser_names()  # type: ignore[no-any-return]

    def reasoning_parser_names(self) -> list[str]:
        return self._api().reasoning_parser_names()  # type: ignore[no-any-return]

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        self.require()
        from .parsers import SglangToolParser

        return SglangToolParser(name, tools, **options)

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        self.require()
        from .parsers import SglangReasoningParser

        return SglangReasoningParser(name, **options)

    def create_pipeline(
        self,
        reasoning: str | None,
        tool: str | None,
        *,
        tools: Sequence[ToolSpec] | None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> Pipeline | None:
        """SGLang's own chain: one session parses reasoning then tools per chunk, as one server request."""
        if reasoning is None or tool is None:
            return None
        self.require()
        from .parsers import SglangPipeline

        return SglangPipeline(reasoning, tool, tools=tools, reasoning_started=reasoning_started, **options)


__all__ = ["INSTALL_COMMAND", "SglangBackend"]

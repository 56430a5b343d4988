"""The Dynamo backend: NVIDIA Dynamo's Rust parsers as ``dynamo:NAME`` (the design's ``native``).

Dynamo exposes no parse function: its tool-call and reasoning parsers run
inside its OpenAI frontend. This backend starts that frontend once per
process, in-process on CPU (`_frontend`), with a scripted engine in place of
a model, and reads what the frontend answers (`parsers`): a one-shot parse
is a non-streamed request, a stream feeds one engine step per chunk and
returns what the frontend streamed for it. Dynamo is imported on first use,
never at import of this package.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..._frameworks.install import install_hint
from ...protocol import Pipeline, ReasoningParser, ToolParser, ToolSpec
from ..base import Backend

#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = install_hint("dynamo")


def _api() -> Any:
    # Dynamo logs at INFO unless told otherwise (read once, when Dynamo is first imported): errors
    # only, unless DYN_LOG says otherwise. Its per-request INFO lines, which DYN_LOG cannot remove,
    # are kept off standard error by `_quiet` (PARSEBRIDGE_DYNAMO_LOG=1 shows them).
    os.environ.setdefault("DYN_LOG", "error")
    from ._compat import get_api

    return get_api()


class DynamoBackend(Backend):
    """Dynamo's frontend parsers (`ai-dynamo-runtime`) behind the protocol."""

    name = "dynamo"
    import_name = "dynamo._core"
    distribution = "ai-dynamo-runtime"
    install_command = INSTALL_COMMAND

    def unavailable_reason(self) -> str | None:
        import importlib.util

        try:
            found = importlib.util.find_spec(self.import_name) is not None
        except (ImportError, ValueError):
            found = False
        return None if found else "module 'dynamo._core' (ai-dynamo-runtime) is not installed"

    def api_shape(self) -> str | None:
        return _api().api_shape()  # type: ignore[no-any-return]

    def tool_parser_names(self) -> list[str]:
        self.require()
        return _api().tool_parser_names()  # type: ignore[no-any-return]

    def reasoning_parser_names(self) -> list[str]:
        self.require()
        return _api().reasoning_parser_names()  # type: ignore[no-any-return]

    def create_tool_parser(
        self, name: str, *, tools: Sequence[ToolSpec] | None, **options: Any
    ) -> ToolParser:
        self.require()
        _api()
        from .parsers import DynamoToolParser

        return DynamoToolParser(name, tools, **options)

    def create_reasoning_parser(self, name: str, **options: Any) -> ReasoningParser:
        self.require()
        _api()
        from .parsers import DynamoReasoningParser

        return DynamoReasoningParser(name, **options)

    def create_pipeline(
        self,
        reasoning: str | None,
        tool: str | None,
        *,
        tools: Sequence[ToolSpec] | None,
        reasoning_started: bool | None = None,
        **options: Any,
    ) -> Pipeline | None:
        """Dynamo's own chain: one frontend model with both parsers, as one server request."""
        if reasoning is None or tool is None:
            return None
        self.require()
        _api()
        from .parsers import DynamoPipeline

        return DynamoPipeline(reasoning, tool, tools=tools, reasoning_started=reasoning_started, **options)


__all__ = ["INSTALL_COMMAND", "DynamoBackend"]

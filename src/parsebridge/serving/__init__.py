"""Server integration: raw engine output → OpenAI chat completions, one-shot and streamed.

`OutputProcessor` chains a reasoning parser and a tool-call parser (from any
backends), applies the request's ``tool_choice`` and the failure policy, and
speaks the OpenAI wire format: ``chat.completion`` messages and
``chat.completion.chunk`` deltas in the convention clients rely on.
Semantics and a streaming loop: docs/serving.md.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..protocol import ToolSpec
from ._choice import ChoiceStream
from ._forced import NamedArgumentsStage, RequiredArrayStage, forced_tool_name
from .processor import (
    SSE_DONE,
    ChoiceOutput,
    ChunkStream,
    EngineOutput,
    OutputProcessor,
    RequestProcessor,
    ToolChoice,
    error_body,
    sse,
)


def from_args(
    namespace: argparse.Namespace,
    tools: Sequence[ToolSpec] | None = None,
    tool_choice: ToolChoice = "auto",
    **kwargs: Any,
) -> OutputProcessor:
    """`OutputProcessor.from_args`: a processor from `parsebridge.add_parser_arguments` flags."""
    return OutputProcessor.from_args(namespace, tools=tools, tool_choice=tool_choice, **kwargs)


__all__ = [
    "SSE_DONE",
    "ChoiceOutput",
    "ChoiceStream",
    "ChunkStream",
    "EngineOutput",
    "NamedArgumentsStage",
    "OutputProcessor",
    "RequestProcessor",
    "RequiredArrayStage",
    "error_body",
    "forced_tool_name",
    "from_args",
    "sse",
]

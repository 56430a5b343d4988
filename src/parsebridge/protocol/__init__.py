"""The protocol in the middle of the bridge: models, parser protocols, specs, errors.

This package imports only pydantic and the standard library, so anything
can depend on it without pulling in a framework. Its names load on first
use (PEP 562): the pydantic models cost more to import than many parses, and
`import parsebridge` should not pay for them until something is parsed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    BackendError,
    BackendNotInstalledError,
    BufferLimitError,
    InvalidSpecError,
    ParsebridgeError,
    ParserProtocolError,
    ParserUnsupportedError,
    ParseTimeoutError,
    ServerUnavailableError,
    StreamStateError,
    UnknownBackendError,
    UnknownOptionError,
    UnknownParserError,
    UnsupportedOptionError,
)

if TYPE_CHECKING:
    from .calls import new_call_id, parse_arguments
    from .families import Family, FamilyTable, family_table, load_table
    from .models import (
        ParseResult,
        ReasoningBlock,
        ReasoningParseResult,
        StreamDelta,
        ToolCall,
        ToolCallDelta,
        ToolParseResult,
    )
    from .parsers import (
        DynamoReasoningParser,
        DynamoToolCallParser,
        ReasoningParser,
        ReasoningParserBase,
        ReasoningStream,
        ToolParser,
        ToolParserBase,
        ToolSpec,
        ToolStream,
        tool_names,
    )
    from .pipeline import Pipeline, PipelineStream
    from .spec import (
        DEFAULT_BACKEND,
        ParserBackend,
        ParserSpec,
        ReasoningParserConfig,
        ToolCallParserConfig,
        normalize_name,
    )
    from .streams import (
        BufferedReasoningStream,
        BufferedToolStream,
        DeltaAccumulator,
        ReasoningStreamBase,
        ToolStreamBase,
        result_as_delta,
    )

#: Name → submodule that defines it, imported on first access.
_LAZY: dict[str, str] = {
    "BufferedReasoningStream": "streams",
    "BufferedToolStream": "streams",
    "DEFAULT_BACKEND": "spec",
    "DeltaAccumulator": "streams",
    "DynamoReasoningParser": "parsers",
    "DynamoToolCallParser": "parsers",
    "Family": "families",
    "FamilyTable": "families",
    "ParseResult": "models",
    "ParserBackend": "spec",
    "ParserSpec": "spec",
    "Pipeline": "pipeline",
    "PipelineStream": "pipeline",
    "ReasoningBlock": "models",
    "ReasoningParseResult": "models",
    "ReasoningParser": "parsers",
    "ReasoningParserBase": "parsers",
    "ReasoningParserConfig": "spec",
    "ReasoningStream": "parsers",
    "ReasoningStreamBase": "streams",
    "StreamDelta": "models",
    "ToolCall": "models",
    "ToolCallDelta": "models",
    "ToolCallParserConfig": "spec",
    "ToolParseResult": "models",
    "ToolParser": "parsers",
    "ToolParserBase": "parsers",
    "ToolSpec": "parsers",
    "ToolStream": "parsers",
    "ToolStreamBase": "streams",
    "family_table": "families",
    "load_table": "families",
    "new_call_id": "calls",
    "normalize_name": "spec",
    "parse_arguments": "calls",
    "result_as_delta": "streams",
    "tool_names": "parsers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DEFAULT_BACKEND",
    "BackendError",
    "BackendNotInstalledError",
    "BufferLimitError",
    "BufferedReasoningStream",
    "BufferedToolStream",
    "DeltaAccumulator",
    "DynamoReasoningParser",
    "DynamoToolCallParser",
    "Family",
    "FamilyTable",
    "InvalidSpecError",
    "ParseResult",
    "ParseTimeoutError",
    "ParsebridgeError",
    "ParserBackend",
    "ParserProtocolError",
    "ParserSpec",
    "ParserUnsupportedError",
    "Pipeline",
    "PipelineStream",
    "ReasoningBlock",
    "ReasoningParseResult",
    "ReasoningParser",
    "ReasoningParserBase",
    "ReasoningParserConfig",
    "ReasoningStream",
    "ReasoningStreamBase",
    "ServerUnavailableError",
    "StreamDelta",
    "StreamStateError",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallParserConfig",
    "ToolParseResult",
    "ToolParser",
    "ToolParserBase",
    "ToolSpec",
    "ToolStream",
    "ToolStreamBase",
    "UnknownBackendError",
    "UnknownOptionError",
    "UnknownParserError",
    "UnsupportedOptionError",
    "family_table",
    "load_table",
    "new_call_id",
    "normalize_name",
    "parse_arguments",
    "result_as_delta",
    "tool_names",
]

"""The protocol in the middle of the bridge: models, parser protocols, specs, errors.

This package imports only pydantic and the standard library, so anything
can depend on it without pulling in a framework.
"""

from .errors import (
    BackendError,
    BackendNotInstalledError,
    BufferLimitError,
    InvalidSpecError,
    ParsebridgeError,
    ParserProtocolError,
    ParseTimeoutError,
    StreamStateError,
    UnknownBackendError,
    UnknownParserError,
)
from .families import Family, FamilyTable, family_table, load_table
from .models import (
    ParseResult,
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParseResult,
    new_call_id,
    parse_arguments,
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
    "Pipeline",
    "PipelineStream",
    "ReasoningBlock",
    "ReasoningParseResult",
    "ReasoningParser",
    "ReasoningParserBase",
    "ReasoningParserConfig",
    "ReasoningStream",
    "ReasoningStreamBase",
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
    "UnknownParserError",
    "family_table",
    "load_table",
    "new_call_id",
    "normalize_name",
    "parse_arguments",
    "result_as_delta",
    "tool_names",
]

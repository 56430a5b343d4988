"""The protocol in the middle of the bridge: models, parser protocols, specs, errors.

This package imports only pydantic and the standard library, so anything
can depend on it without pulling in a framework. Its names load on first
use (PEP 562): the pydantic models cost more to import than many parses, and
`import parsebridge` should not pay for them until something is parsed.

These are the implementer's names (parser protocols and base classes, stream helpers,
the fast construction of results and deltas, the family table) beside the vocabulary
`parsebridge` exports to users; `_LAZY` is the one list, `__all__` its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:  # the lazy names, typed (tests/test_public_api.py keeps this block and `_LAZY` alike)
    from .calls import new_call_id as new_call_id
    from .calls import parse_arguments as parse_arguments
    from .errors import BackendError as BackendError
    from .errors import BackendNotInstalledError as BackendNotInstalledError
    from .errors import BufferLimitError as BufferLimitError
    from .errors import InvalidInputError as InvalidInputError
    from .errors import InvalidSpecError as InvalidSpecError
    from .errors import InvalidToolsError as InvalidToolsError
    from .errors import ParsebridgeError as ParsebridgeError
    from .errors import ParserProtocolError as ParserProtocolError
    from .errors import ParserUnsupportedError as ParserUnsupportedError
    from .errors import ParseTimeoutError as ParseTimeoutError
    from .errors import ServerUnavailableError as ServerUnavailableError
    from .errors import StreamStateError as StreamStateError
    from .errors import TokenizerUnavailable as TokenizerUnavailable
    from .errors import UnknownBackendError as UnknownBackendError
    from .errors import UnknownOptionError as UnknownOptionError
    from .errors import UnknownParserError as UnknownParserError
    from .errors import UnsupportedOptionError as UnsupportedOptionError
    from .families import Family as Family
    from .families import FamilyTable as FamilyTable
    from .families import family_table as family_table
    from .families import load_table as load_table
    from .models import ParseResult as ParseResult
    from .models import ReasoningBlock as ReasoningBlock
    from .models import ReasoningParseResult as ReasoningParseResult
    from .models import StreamDelta as StreamDelta
    from .models import ToolCall as ToolCall
    from .models import ToolCallDelta as ToolCallDelta
    from .models import ToolParseResult as ToolParseResult
    from .models import make_delta as make_delta
    from .models import make_reasoning_result as make_reasoning_result
    from .models import make_tool_call as make_tool_call
    from .models import make_tool_result as make_tool_result
    from .parsers import DynamoReasoningParser as DynamoReasoningParser
    from .parsers import DynamoToolCallParser as DynamoToolCallParser
    from .parsers import ReasoningParser as ReasoningParser
    from .parsers import ReasoningParserBase as ReasoningParserBase
    from .parsers import ReasoningStream as ReasoningStream
    from .parsers import ToolParser as ToolParser
    from .parsers import ToolParserBase as ToolParserBase
    from .parsers import ToolSpec as ToolSpec
    from .parsers import ToolStream as ToolStream
    from .parsers import tool_names as tool_names
    from .pipeline import Pipeline as Pipeline
    from .pipeline import PipelineStream as PipelineStream
    from .spec import DEFAULT_BACKEND as DEFAULT_BACKEND
    from .spec import ParserBackend as ParserBackend
    from .spec import ParserSpec as ParserSpec
    from .spec import ReasoningParserConfig as ReasoningParserConfig
    from .spec import ToolCallParserConfig as ToolCallParserConfig
    from .spec import normalize_name as normalize_name
    from .streams import BufferedReasoningStream as BufferedReasoningStream
    from .streams import BufferedToolStream as BufferedToolStream
    from .streams import DeltaAccumulator as DeltaAccumulator
    from .streams import ReasoningStreamBase as ReasoningStreamBase
    from .streams import ToolStreamBase as ToolStreamBase
    from .streams import result_as_delta as result_as_delta

#: Name → submodule that defines it, imported on first access.
_LAZY: dict[str, str] = {
    "BackendError": "errors",
    "BackendNotInstalledError": "errors",
    "BufferLimitError": "errors",
    "InvalidInputError": "errors",
    "InvalidSpecError": "errors",
    "InvalidToolsError": "errors",
    "ParsebridgeError": "errors",
    "ParserProtocolError": "errors",
    "ParserUnsupportedError": "errors",
    "ParseTimeoutError": "errors",
    "ServerUnavailableError": "errors",
    "StreamStateError": "errors",
    "UnknownBackendError": "errors",
    "UnknownOptionError": "errors",
    "UnknownParserError": "errors",
    "UnsupportedOptionError": "errors",
    "TokenizerUnavailable": "errors",
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
    "make_delta": "models",
    "make_reasoning_result": "models",
    "make_tool_call": "models",
    "make_tool_result": "models",
    "new_call_id": "calls",
    "normalize_name": "spec",
    "parse_arguments": "calls",
    "result_as_delta": "streams",
    "tool_names": "parsers",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

__all__ = list(_LAZY)

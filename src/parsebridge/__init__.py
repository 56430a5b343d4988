"""parsebridge: one protocol over vLLM's, SGLang's and our own model-output parsers.

    import parsebridge as pb
    tp = pb.get_tool_parser("vllm:hermes", tools=[...])
    rp = pb.get_reasoning_parser("sglang:deepseek-r1")

Importing this package imports no framework: a backend's framework is
imported the first time a spec names that backend.

`__all__` is what a user calls: config strings and the functions that take them, parse
results and deltas, the output processor, compare, conformance, the server flags and the
errors. What an implementer of a parser or backend builds on (the parser protocols, base
classes, stream helpers, fast construction) lives in `parsebridge.protocol`; those names
still resolve here (`_IMPLEMENTER`), for code written before, but are not listed.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from . import _moved
from ._version import __version__, check_python

check_python()  # before anything that needs 3.11: a clear message on an older Python

# A library's logger has a NullHandler (the logging HOWTO's convention): what it logs (the
# fallback policy's one-line warnings) shows where the application configures logging, and
# never through Python's last-resort handler in a script that did not.
logging.getLogger("parsebridge").addHandler(logging.NullHandler())

if TYPE_CHECKING:  # the same names, typed (tests/test_public_api.py keeps this block and the tables alike)
    from .adapters import Backend as Backend
    from .adapters import BackendInfo as BackendInfo
    from .adapters import backend_names as backend_names
    from .adapters import get_backend as get_backend
    from .adapters import get_pipeline as get_pipeline
    from .adapters import get_reasoning_parser as get_reasoning_parser
    from .adapters import get_tool_parser as get_tool_parser
    from .adapters import list_backends as list_backends
    from .adapters import parser_names as parser_names
    from .comparison import compare as compare
    from .conformance import run_conformance as run_conformance
    from .protocol import DEFAULT_BACKEND as DEFAULT_BACKEND
    from .protocol import BackendError as BackendError
    from .protocol import BackendNotInstalledError as BackendNotInstalledError
    from .protocol import BufferedReasoningStream as BufferedReasoningStream
    from .protocol import BufferedToolStream as BufferedToolStream
    from .protocol import BufferLimitError as BufferLimitError
    from .protocol import DeltaAccumulator as DeltaAccumulator
    from .protocol import DynamoReasoningParser as DynamoReasoningParser
    from .protocol import DynamoToolCallParser as DynamoToolCallParser
    from .protocol import Family as Family
    from .protocol import FamilyTable as FamilyTable
    from .protocol import InvalidInputError as InvalidInputError
    from .protocol import InvalidSpecError as InvalidSpecError
    from .protocol import InvalidToolsError as InvalidToolsError
    from .protocol import ParsebridgeError as ParsebridgeError
    from .protocol import ParserBackend as ParserBackend
    from .protocol import ParseResult as ParseResult
    from .protocol import ParserProtocolError as ParserProtocolError
    from .protocol import ParserSpec as ParserSpec
    from .protocol import ParserUnsupportedError as ParserUnsupportedError
    from .protocol import ParseTimeoutError as ParseTimeoutError
    from .protocol import Pipeline as Pipeline
    from .protocol import PipelineStream as PipelineStream
    from .protocol import ReasoningBlock as ReasoningBlock
    from .protocol import ReasoningParser as ReasoningParser
    from .protocol import ReasoningParserBase as ReasoningParserBase
    from .protocol import ReasoningParserConfig as ReasoningParserConfig
    from .protocol import ReasoningParseResult as ReasoningParseResult
    from .protocol import ReasoningStream as ReasoningStream
    from .protocol import ReasoningStreamBase as ReasoningStreamBase
    from .protocol import ServerUnavailableError as ServerUnavailableError
    from .protocol import StreamDelta as StreamDelta
    from .protocol import StreamStateError as StreamStateError
    from .protocol import TokenizerUnavailable as TokenizerUnavailable
    from .protocol import ToolCall as ToolCall
    from .protocol import ToolCallDelta as ToolCallDelta
    from .protocol import ToolCallParserConfig as ToolCallParserConfig
    from .protocol import ToolParser as ToolParser
    from .protocol import ToolParserBase as ToolParserBase
    from .protocol import ToolParseResult as ToolParseResult
    from .protocol import ToolSpec as ToolSpec
    from .protocol import ToolStream as ToolStream
    from .protocol import ToolStreamBase as ToolStreamBase
    from .protocol import UnknownBackendError as UnknownBackendError
    from .protocol import UnknownOptionError as UnknownOptionError
    from .protocol import UnknownParserError as UnknownParserError
    from .protocol import UnsupportedOptionError as UnsupportedOptionError
    from .protocol import family_table as family_table
    from .protocol import load_table as load_table
    from .protocol import new_call_id as new_call_id
    from .protocol import normalize_name as normalize_name
    from .protocol import parse_arguments as parse_arguments
    from .protocol import result_as_delta as result_as_delta
    from .protocol import tool_names as tool_names
    from .serving import OutputProcessor as OutputProcessor
    from .serving.flags import add_parser_arguments as add_parser_arguments
    from .serving.flags import configs_from_args as configs_from_args
    from .serving.flags import parsers_from_args as parsers_from_args

_PROTOCOL = "parsebridge.protocol"
_ADAPTERS = "parsebridge.adapters"
_FLAGS = "parsebridge.serving.flags"

#: The public API: name → the module that defines it, loaded on first touch (PEP 562), so
#: `import parsebridge` costs almost nothing. `__all__` is this table's names.
_API: dict[str, str] = {
    # config strings, and what takes them
    "ParserSpec": _PROTOCOL,
    "ToolCallParserConfig": _PROTOCOL,
    "ReasoningParserConfig": _PROTOCOL,
    "get_tool_parser": _ADAPTERS,
    "get_reasoning_parser": _ADAPTERS,
    "get_pipeline": _ADAPTERS,
    "get_backend": _ADAPTERS,
    "list_backends": _ADAPTERS,
    "BackendInfo": _ADAPTERS,
    "backend_names": _ADAPTERS,
    "parser_names": _ADAPTERS,
    "family_table": _PROTOCOL,
    # parse results and deltas
    "ParseResult": _PROTOCOL,
    "ToolParseResult": _PROTOCOL,
    "ReasoningParseResult": _PROTOCOL,
    "ToolCall": _PROTOCOL,
    "ReasoningBlock": _PROTOCOL,
    "StreamDelta": _PROTOCOL,
    "ToolCallDelta": _PROTOCOL,
    # serving: the processor, and the flags a server adopts
    "OutputProcessor": "parsebridge.serving",
    "add_parser_arguments": _FLAGS,
    "parsers_from_args": _FLAGS,
    "configs_from_args": _FLAGS,
    # backends side by side, and the conformance suite
    "compare": "parsebridge.comparison",
    "run_conformance": "parsebridge.conformance",
    # errors
    "ParsebridgeError": _PROTOCOL,
    "BackendError": _PROTOCOL,
    "BackendNotInstalledError": _PROTOCOL,
    "BufferLimitError": _PROTOCOL,
    "InvalidInputError": _PROTOCOL,
    "InvalidSpecError": _PROTOCOL,
    "InvalidToolsError": _PROTOCOL,
    "ParserProtocolError": _PROTOCOL,
    "ParserUnsupportedError": _PROTOCOL,
    "ParseTimeoutError": _PROTOCOL,
    "ServerUnavailableError": _PROTOCOL,
    "StreamStateError": _PROTOCOL,
    "UnknownBackendError": _PROTOCOL,
    "UnknownOptionError": _PROTOCOL,
    "UnknownParserError": _PROTOCOL,
    "UnsupportedOptionError": _PROTOCOL,
    "TokenizerUnavailable": _PROTOCOL,
}

#: Implementer names that resolve here for code written before they moved out of the public
#: API; their home is `parsebridge.protocol` (`Backend`: `parsebridge.adapters`).
_IMPLEMENTER: dict[str, str] = {
    "Backend": _ADAPTERS,
    **dict.fromkeys(
        (
            "DEFAULT_BACKEND",
            "BufferedReasoningStream",
            "BufferedToolStream",
            "DeltaAccumulator",
            "DynamoReasoningParser",
            "DynamoToolCallParser",
            "Family",
            "FamilyTable",
            "ParserBackend",
            "Pipeline",
            "PipelineStream",
            "ReasoningParser",
            "ReasoningParserBase",
            "ReasoningStream",
            "ReasoningStreamBase",
            "ToolParser",
            "ToolParserBase",
            "ToolSpec",
            "ToolStream",
            "ToolStreamBase",
            "load_table",
            "new_call_id",
            "normalize_name",
            "parse_arguments",
            "result_as_delta",
            "tool_names",
        ),
        _PROTOCOL,
    ),
}


# `parsebridge.compare` (the package `parsebridge.comparison` until it was renamed) still
# imports, with a DeprecationWarning; nothing is loaded until that old path is imported.
sys.meta_path.append(_moved.OldPaths())


def __getattr__(name: str) -> Any:
    module = _API.get(name) or _IMPLEMENTER.get(name)
    if module is None:
        raise AttributeError(f"module 'parsebridge' has no attribute {name!r}")
    import importlib  # here, not at the top: `import parsebridge` stays light (benchmarks/import_cost.py)

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public API and the module's dunders: not its own imports (`sys`, `logging`, `Any`) nor
    private tables, so a REPL's tab completion offers what `__all__` lists."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__") and n.endswith("__"))})


__all__ = [*_API, "__version__"]

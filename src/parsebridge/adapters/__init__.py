"""Backends behind the protocol, imported lazily by name (see `registry`).

Only `adapters/vllm` and `adapters/sglang` import a framework, and only on
first use.
"""

from ..policy.guard import GuardedReasoningParser, GuardedToolParser, OnError
from .base import Backend, BackendInfo
from .registry import (
    ENTRY_POINT_GROUP,
    KNOWN_BACKENDS,
    backend_names,
    get_backend,
    get_pipeline,
    get_reasoning_parser,
    get_tool_parser,
    list_backends,
    parser_names,
    resolve,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "KNOWN_BACKENDS",
    "Backend",
    "BackendInfo",
    "GuardedReasoningParser",
    "GuardedToolParser",
    "OnError",
    "backend_names",
    "get_backend",
    "get_pipeline",
    "get_reasoning_parser",
    "get_tool_parser",
    "list_backends",
    "parser_names",
    "resolve",
]

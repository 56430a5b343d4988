"""parsebridge: one protocol over vLLM's, SGLang's and our own model-output parsers.

    import parsebridge as pb
    tp = pb.get_tool_parser("vllm:hermes", tools=[...])
    rp = pb.get_reasoning_parser("sglang:deepseek-r1")

Importing this package imports no framework: a backend's framework is
imported the first time a spec names that backend.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .adapters import (
    Backend,
    BackendInfo,
    backend_names,
    get_backend,
    get_pipeline,
    get_reasoning_parser,
    get_tool_parser,
    list_backends,
    parser_names,
)
from .protocol import *  # noqa: F403  (the protocol is the public vocabulary)
from .protocol import __all__ as _protocol_all

_LAZY = {
    "compare": ("parsebridge.compare", "compare"),
    "OutputProcessor": ("parsebridge.serving", "OutputProcessor"),
    "add_parser_arguments": ("parsebridge.flags", "add_parser_arguments"),
    "parsers_from_args": ("parsebridge.flags", "parsers_from_args"),
    "configs_from_args": ("parsebridge.flags", "configs_from_args"),
}


def __getattr__(name: str) -> Any:
    # Heavier helpers load on first touch so `import parsebridge` stays cheap.
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'parsebridge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


__all__ = [
    *_protocol_all,
    *_LAZY,
    "Backend",
    "BackendInfo",
    "__version__",
    "backend_names",
    "get_backend",
    "get_pipeline",
    "get_reasoning_parser",
    "get_tool_parser",
    "list_backends",
    "parser_names",
]

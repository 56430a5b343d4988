"""parsebridge: one protocol over vLLM's, SGLang's and our own model-output parsers.

    import parsebridge as pb
    tp = pb.get_tool_parser("vllm:hermes", tools=[...])
    rp = pb.get_reasoning_parser("sglang:deepseek-r1")

Importing this package imports no framework: a backend's framework is
imported the first time a spec names that backend.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .protocol import __all__ as _protocol_all

# A library's logger has a NullHandler (the logging HOWTO's convention): what it logs (the
# fallback policy's one-line warnings) shows where the application configures logging, and
# never through Python's last-resort handler in a script that did not.
logging.getLogger("parsebridge").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from .adapters import (
        Backend as Backend,
    )
    from .adapters import (
        BackendInfo as BackendInfo,
    )
    from .adapters import (
        backend_names as backend_names,
    )
    from .adapters import (
        get_backend as get_backend,
    )
    from .adapters import (
        get_pipeline as get_pipeline,
    )
    from .adapters import (
        get_reasoning_parser as get_reasoning_parser,
    )
    from .adapters import (
        get_tool_parser as get_tool_parser,
    )
    from .adapters import (
        list_backends as list_backends,
    )
    from .adapters import (
        parser_names as parser_names,
    )
    from .protocol import *  # noqa: F403  (the protocol is the public vocabulary)

_ADAPTER_NAMES = (
    "Backend",
    "BackendInfo",
    "backend_names",
    "get_backend",
    "get_pipeline",
    "get_reasoning_parser",
    "get_tool_parser",
    "list_backends",
    "parser_names",
)
# Everything loads on first touch (PEP 562), so `import parsebridge` costs almost nothing:
# the protocol's pydantic models and the adapters load when something is parsed.
_LAZY = {
    **{name: ("parsebridge.protocol", name) for name in _protocol_all},
    **{name: ("parsebridge.adapters", name) for name in _ADAPTER_NAMES},
    "compare": ("parsebridge.compare", "compare"),
    "OutputProcessor": ("parsebridge.serving", "OutputProcessor"),
    "add_parser_arguments": ("parsebridge.serving.flags", "add_parser_arguments"),
    "parsers_from_args": ("parsebridge.serving.flags", "parsers_from_args"),
    "configs_from_args": ("parsebridge.serving.flags", "configs_from_args"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'parsebridge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [*_LAZY, "__version__"]

"""What the installed smg release offers, found by looking: its version and its parser names.

smg (1.9 to 1.13, the releases that run offline) exposes only name lists to
Python (`smg.smg_rs`: ``get_available_tool_call_parsers()`` /
``get_available_reasoning_parsers()``); its parsers run inside its gateway
(`_gateway`), driven by the scripted worker (`_worker`). This module is the
adapter's one place that imports smg itself, as the other adapters' `_compat`.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class SmgApi:
    """The installed release: its version and the Rust module that lists its parser names."""

    version: str
    rs: Any
    #: Whether the gateway itself constrains output for a forced tool choice (it does not: the
    #: engine would, and the scripted worker plays the text it is given).
    forced_choices: bool = False

    def tool_parser_names(self) -> list[str]:
        return sorted(set(self.rs.get_available_tool_call_parsers()))

    def reasoning_parser_names(self) -> list[str]:
        return sorted(set(self.rs.get_available_reasoning_parsers()))

    def api_shape(self) -> str:
        return "gateway+grpc-worker"


@cache
def get_api() -> SmgApi:
    """The installed release's API (imports smg: call only when an `smg:` parser or list is used)."""
    from smg import smg_rs

    try:
        version = importlib.metadata.version("smg")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return SmgApi(version=version, rs=smg_rs)

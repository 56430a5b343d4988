"""The smg backend: the SGLang model gateway's Rust tool and reasoning parsers as ``smg:NAME``.

smg (``pip install smg``) exposes no parse function to Python: its parsers
run inside its gateway, on the token ids a gRPC worker streams. parsebridge
drives that gateway with a scripted worker of its own (`_worker`), one
gateway per parser configuration (`_gateway`), and reads its OpenAI chat
answers (`_client`, `parsers`). Nothing here imports smg, grpcio or the
proto package at import time; a gateway starts on first parse.
"""

from __future__ import annotations

import importlib.util

from ..base import FrameworkBackend

#: Modules the route needs besides smg itself: the worker's gRPC server and the scheduler proto.
_NEEDS = ("smg", "grpc", "smg_grpc_proto")
#: The options its parsers take: the request fields `OutputProcessor` passes with every request (the
#: scripted gateway request carries neither: smg reads no reasoning or tool-choice switch from them).
_OPTIONS = frozenset({"tool_choice", "chat_template_kwargs", "tokenizer"})


class SmgBackend(FrameworkBackend):
    """smg's Rust parsers, run inside its gateway (``python -m smg launch``) behind a scripted worker."""

    name = "smg"
    parser_classes = ("SmgToolParser", "SmgReasoningParser", "SmgPipeline")
    groups_units = True
    tool_options = _OPTIONS
    # smg 1.13: one-shot it reads a call to any tool once the request declares some (parsebridge
    # declares a placeholder when none is given: `_client.PLACEHOLDER_TOOLS`); streamed, a call to
    # a tool the request does not declare stays text.
    undeclared_tools_modes = ("stream",)
    undeclared_tools = "smg's gateway streams a tool call only when the request declares that tool"

    def unavailable_reason(self) -> str | None:
        for module in _NEEDS:
            if importlib.util.find_spec(module) is None:
                return f"module {module!r} is not installed"
        return None


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = SmgBackend.install_command

__all__ = ["INSTALL_COMMAND", "SmgBackend"]

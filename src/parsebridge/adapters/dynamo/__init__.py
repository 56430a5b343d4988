"""The Dynamo backend: NVIDIA Dynamo's Rust parsers as ``dynamo:NAME`` (the design's ``native``).

Dynamo exposes no parse function: its tool-call and reasoning parsers run
inside its OpenAI frontend. This backend starts that frontend once per
process, in-process on CPU (`_frontend`), with a scripted engine in place of
a model, and reads what the frontend answers (`parsers`): a one-shot parse
is a non-streamed request, a stream feeds one engine step per chunk and
returns what the frontend streamed for it. Dynamo is imported on first use,
never at import of this package.
"""

from __future__ import annotations

import importlib.util

from ..base import FrameworkBackend

#: The options its parsers take: request fields, sent to the frontend when given (`parsers`).
REQUEST_OPTIONS = ("tool_choice", "chat_template_kwargs", "reasoning_effort")
#: And what the engine is: the model folder's tokenizer, tokens a step of a one-shot request.
ENGINE_OPTIONS = ("tokenizer", "oneshot_step")


class DynamoBackend(FrameworkBackend):
    """Dynamo's frontend parsers (`ai-dynamo-runtime`) behind the protocol."""

    name = "dynamo"
    import_name = "dynamo._core"
    parser_classes = ("DynamoToolParser", "DynamoReasoningParser", "DynamoPipeline")
    tool_options = frozenset(REQUEST_OPTIONS + ENGINE_OPTIONS)
    # Measured with Dynamo 1.6.1's frontend over HTTP, no parsebridge code in the loop
    # (tests/adapters/_dynamo_reference.py): no `tools` in the request, no tool parsing at all.
    undeclared_tools_modes = ("oneshot", "stream")
    undeclared_tools = "Dynamo's frontend reads tool calls only when the request declares tools"

    def unavailable_reason(self) -> str | None:
        try:
            found = importlib.util.find_spec(self.import_name) is not None
        except (ImportError, ValueError):
            found = False
        return None if found else "module 'dynamo._core' (ai-dynamo-runtime) is not installed"

    def server_forced_choices(self) -> bool:
        return False


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = DynamoBackend.install_command

__all__ = ["INSTALL_COMMAND", "REQUEST_OPTIONS", "DynamoBackend"]

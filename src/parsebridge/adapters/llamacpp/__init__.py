"""The llamacpp backend: llama.cpp's own chat parsing (common/chat.cpp) as ``llamacpp:NAME``.

llama.cpp parses a model's output with the parser it derives from the model's chat template
(specialised parsers, the PEG parser, the autoparser). parsebridge runs that C++ code in a small
native harness built from the llama.cpp a ``llama-cpp-python`` sdist vendors
(``parsebridge install-framework llamacpp-latest``; `_frameworks.llamacpp_build`), as a
subprocess (`_harness`): no model weights, no GPU, and a crash in C++ ends the harness, never
Python. A NAME is a template llama.cpp ships, a family whose row names one, or a template file
or tokenizer folder (`_templates`). Nothing here imports more than the standard library until a
parser is built.
"""

from __future__ import annotations

from typing import ClassVar

from ..base import FrameworkBackend
from . import _templates

#: The request fields its parsers read (see `parsers`).
_OPTIONS = frozenset({"tool_choice", "chat_template_kwargs", "parallel_tool_calls", "messages"})


class LlamacppBackend(FrameworkBackend):
    """llama.cpp's chat parsers, run in parsebridge's native harness (one per process)."""

    name = "llamacpp"
    import_name: ClassVar[str | None] = None
    parser_classes = ("LlamacppToolParser", "LlamacppReasoningParser", "LlamacppPipeline")
    tool_options = _OPTIONS

    def version(self) -> str | None:
        snap = _templates.snapshot()
        return None if snap is None else snap.version

    def unavailable_reason(self) -> str | None:
        return _templates.unavailable_reason()

    def passthrough_name(self, name: str) -> bool:
        return _templates.is_path(name)

    def api_shape(self) -> str | None:
        return "harness(chat.h)"

    def tool_parser_names(self) -> list[str]:
        self.require()
        snap = _templates.snapshot()
        return [] if snap is None else snap.template_names()

    def reasoning_parser_names(self) -> list[str]:
        return self.tool_parser_names()

    def server_forced_choices(self) -> bool:
        return False


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = LlamacppBackend.install_command

__all__ = ["INSTALL_COMMAND", "LlamacppBackend"]

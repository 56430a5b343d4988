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

from ...protocol import family_table, normalize_name
from ..base import FrameworkBackend
from . import _templates

#: The request fields its parsers read (see `parsers`).
_OPTIONS = frozenset(
    {"tool_choice", "chat_template_kwargs", "parallel_tool_calls", "reasoning_format", "messages"}
)


class LlamacppBackend(FrameworkBackend):
    """llama.cpp's chat parsers, run in parsebridge's native harness (one per process)."""

    name = "llamacpp"
    import_name: ClassVar[str | None] = None
    parser_classes = ("LlamacppToolParser", "LlamacppReasoningParser", "LlamacppPipeline")
    tool_options = _OPTIONS
    needs = (
        "its native harness, built by parsebridge from llama-cpp-python's sdist (installing the "
        "llama-cpp-python package does not give it)"
    )
    labels_by_family = True

    def version(self) -> str | None:
        snap = _templates.snapshot()
        return None if snap is None else snap.version

    def unavailable_reason(self) -> str | None:
        return _templates.unavailable_reason()

    def passthrough_name(self, name: str) -> bool:
        return _templates.is_path(name)

    def api_shape(self) -> str | None:
        return "harness(chat.h)"

    def describe(self, name: str) -> str | None:
        """The template a family name stands for (``hermes`` → llama.cpp's Hermes 3 template);
        both where the family's tool and reasoning rows name different ones."""
        snap = _templates.snapshot()
        if _templates.is_path(name) or snap is None:
            return None
        if normalize_name(name) in {normalize_name(t) for t in snap.template_names()}:
            return None  # a template's own name (the registry finds it first, as here)
        table = family_table()
        found = {}
        for kind in ("tool", "reasoning"):
            fam = table.get(kind, name)
            template = fam.parser_for(self.name) if fam is not None else None
            if template is not None:
                found[kind] = template
        if not found:
            return None
        if len(set(found.values())) == 1:
            which = f"template {next(iter(found.values()))}"
        else:
            which = "templates " + ", ".join(f"{t} (as a {kind} parser)" for kind, t in found.items())
        return f"the chat {which} of llama-cpp-python {snap.version}'s llama.cpp"

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

"""The SGLang backend: every SGLang function-call and reasoning parser as ``sglang:NAME``.

SGLang is imported on first use (listing names or building a parser), never
at import of this package, so `import parsebridge` stays free of SGLang and
torch. Parsers are driven the way the installed release's chat server
drives them (see `_driver`); API shapes per release are detected in
`_compat`.
"""

from __future__ import annotations

from ..base import FrameworkBackend

#: `SglangEngine`'s keywords (tool and reasoning parsers alike).
_ENGINE_OPTIONS = frozenset(
    {
        "tokenizer",
        "tool_choice",
        "chat_template_kwargs",
        "reasoning_effort",
        "request_fields",
        "stream_reasoning",
        "end_of_stream",
    }
)


class SglangBackend(FrameworkBackend):
    """SGLang's FunctionCallParser and ReasoningParser registries behind the protocol."""

    name = "sglang"
    parser_classes = ("SglangToolParser", "SglangReasoningParser", "SglangPipeline")
    tool_options = _ENGINE_OPTIONS
    import_weight = 1  # its parsers import torch
    # Its chat server runs the tool parser only for a request that declares tools (every supported
    # release; 0.5.23 also for a detector that `parses_without_tools()`), as `_driver` does: with
    # none declared the whole output is content, one-shot and streamed.
    undeclared_tools_modes = ("oneshot", "stream")
    undeclared_tools = "SGLang's server runs its tool parser only when the request declares tools"

    def undeclared_tools_rule(self, parser: str, mode: str, *, any_declared: bool) -> str | None:
        """The rule holds for a request that declares no tools at all, and a parser the installed
        release does not run without them."""
        rule = super().undeclared_tools_rule(parser, mode, any_declared=any_declared)
        if rule is None or any_declared:
            return None
        try:
            runs_anyway = self._api().tool_parsing_active(parser, [], "auto")
        except Exception:  # a name this release does not register: no rule to say
            return None
        return None if runs_anyway else rule


#: The install command, naming the newest supported release (from the shipped requirement files).
INSTALL_COMMAND = SglangBackend.install_command

__all__ = ["INSTALL_COMMAND", "SglangBackend"]

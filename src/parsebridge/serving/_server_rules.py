"""What a framework's own server does where an `OutputProcessor` does as it does (split out of `processor`).

vLLM's and SGLang's servers differ from each other, and from parsebridge's own stages, in three
places a processor copies: how a request without tools or with ``tool_choice="none"`` meets the
tool parser (`none_mode`), whether the tool parser reads required/named output as the server does
(`forced_format`), and the finish reason after a named call (`named_finish_reason`).
docs/serving.md has the table.
"""

from __future__ import annotations

import functools
from typing import Literal

from ..adapters.registry import get_backend
from ..protocol import ParserSpec

ForcedFormat = Literal["json", "native", "server"]

#: What a framework's own server does with its tool parser for a request without tools or with
#: ``tool_choice="none"``, where it differs from skipping the parser. vLLM runs the parser (with
#: the request's ``"none"``: engine-based parsers consume call markup, the others pass text
#: through) and drops the calls; SGLang runs it only for formats whose detector parses without
#: tools (and keeps those calls), and not at all with ``"none"``. Both adapters reproduce that
#: given the request's ``tool_choice="none"``; the processor then drops calls where the server does.
_SERVER_NONE_MODE: dict[str, Literal["drop", "keep"]] = {"vllm": "drop", "sglang": "keep"}

#: The finish reason each framework's server sends after a call to a named (forced) function
#: that ended normally: vLLM follows OpenAI (``stop``), SGLang says ``tool_calls``.
_SERVER_NAMED_FINISH: dict[str, str] = {"vllm": "stop", "sglang": "tool_calls"}


@functools.cache
def _server_forced_choices(backend: str) -> bool:
    """Whether `backend`'s tool parsers parse required/named requests as its server does."""

    try:
        return bool(get_backend(backend).server_forced_choices())
    except Exception:  # an unknown or unusable backend: parsebridge's own stages
        return False


def none_mode(tool_spec: ParserSpec | None) -> Literal["drop", "keep"] | None:
    """How the tool parser's framework server treats ``tool_choice="none"``/no tools (None: skip it)."""
    return _SERVER_NONE_MODE.get(tool_spec.backend) if tool_spec is not None else None


def forced_format(
    wanted: ForcedFormat | None, tool_spec: ParserSpec | None, label: str | None
) -> ForcedFormat:
    """How ``required``/named output is read: `wanted` (the processor's `forced_format` option), or
    ``"server"`` where the tool parser's backend offers it, else ``"json"``; `label` names the tool
    parser in the error when ``"server"`` is wanted and not offered."""
    offered = tool_spec is not None and _server_forced_choices(tool_spec.backend)
    if wanted == "server" and not offered:
        raise ValueError(
            f"forced_format='server' needs a tool parser whose backend parses required/named "
            f"requests as its server does (vLLM 0.33+, SGLang 0.5.23), not {label!r}"
        )
    if wanted is not None:
        return wanted
    return "server" if offered else "json"


def named_finish_reason(forced: ForcedFormat, tool_spec: ParserSpec | None) -> str:
    """The finish reason after a named call that ended normally, where the processor's
    `named_finish_reason` option leaves it open: the server's where `forced` is ``"server"``, else
    ``"tool_calls"``."""
    if forced == "server" and tool_spec is not None:
        return _SERVER_NAMED_FINISH.get(tool_spec.backend, "tool_calls")
    return "tool_calls"

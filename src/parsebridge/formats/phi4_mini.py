"""Phi-4-mini: ``functools[{"name", "arguments"}, …]`` (one call also as a bare object, ``functools{…}``)."""

from __future__ import annotations

from ._base import json_list_format

TAG = "functools"


# Tool results: `ToolFormat`'s default, the result as the tool message's content (the template adds
# the turn; the format has no id).
TOOL = json_list_format(
    "phi4_mini", '`functools[{"name": …, "arguments": …}]`, or one call as a bare object `functools{…}`', TAG
)
render, GRAMMAR = TOOL.render, TOOL.grammar

"""Tencent Hunyuan-A13B: ``<tool_calls>[{"name", "arguments"}, …]</tool_calls>`` (Jamba's shape)."""

from __future__ import annotations

import dataclasses

from . import jamba as _jamba

# Jamba's format through and through (markers, renderer, tool results, where content stays).
TOOL = dataclasses.replace(
    _jamba.TOOL,
    family="hunyuan_a13b",
    summary='`<tool_calls>[{"name": …, "arguments": …}]</tool_calls>` (Jamba\'s shape)',
)

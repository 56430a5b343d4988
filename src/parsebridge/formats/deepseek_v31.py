"""DeepSeek V3.1: the V3 section markers with ``NAME<｜tool▁sep｜>{json}`` bodies (no fence)."""

from __future__ import annotations

import dataclasses

from . import deepseek_v3 as _v3

# V3's format (markers, tool results, where content stays) with V3.1's call bodies.
TOOL = dataclasses.replace(
    _v3.TOOL,
    family="deepseek_v31",
    summary="`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>` in the V3 section",
    render=_v3.render_v31,
    grammar=_v3.GRAMMAR_V31,
)

"""DeepSeek V4.1 DSML tool calls: V4's elements with spaced tag names (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke``)."""

from __future__ import annotations

import dataclasses

from . import deepseek_v4 as _v4
from .deepseek_v32 import DsmlTags, dsml_renderer

TAGS = DsmlTags(" calls", " invoke", " parameter")

# V4's format (tool results, where content stays) with the spaced tags (and without V4's other block openers).
TOOL = dataclasses.replace(
    _v4.TOOL,
    family="deepseek_v41",
    summary='DSML, spaced: `<｜DSML｜ calls><｜DSML｜ invoke name="…"><｜DSML｜ parameter name="…" string="…">…`',
    markers=TAGS.markers,
    render=dsml_renderer(TAGS),
)

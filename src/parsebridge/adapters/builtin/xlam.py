"""Salesforce xLAM tool calls: a JSON array of ``{"name": ..., "arguments": {...}}`` objects.

The forms the format admits (those vLLM's xlam handler reads): the array as
the whole output (it must open the output, after whitespace), in a Markdown
fence (````` ```json … ``` ````` or ````` ``` … ``` `````) anywhere, after ``[TOOL_CALLS]``,
or between ``<tool_call>`` and ``</tool_call>``. Text around a fenced or marked
array is content. When no reasoning parser ran first, a bare array may also
lead right after ``</think>`` (the thinking stays content), as vLLM's handler reads it.
"parameters" is accepted as a synonym of "arguments".

Malformed output (see `json_payload`): a fence or marker whose body is not a call
array (a code block, ``[1, 2]``) is content verbatim, and so is a leading array
whose first element has no name. vLLM skips elements without "arguments"; we
keep them with ``{}`` (builtin rule 5: missing arguments → ``{}``).

`format_tool_result`: the result as the tool message's content (no id).
"""

from __future__ import annotations

from ...formats.think import END as THINK_END
from ...formats.xlam import FENCE, FENCE_LANG, TAG_END, TAG_START, TOOL_CALLS
from .engines.json_payload import ARRAY, JsonCallsParser, JsonCallsSpec, Region

SPEC = JsonCallsSpec(
    regions=(
        Region(FENCE, FENCE, shape=ARRAY, openers=(FENCE_LANG,)),
        Region(TOOL_CALLS, shape=ARRAY),
        Region(TAG_START, TAG_END, shape=ARRAY),
    ),
    leading=Region("", shape=ARRAY),
    relead=(THINK_END,),
)


class XlamToolParser(JsonCallsParser):
    """xLAM JSON call arrays: bare, fenced, or marked (builtin, incremental)."""

    name = "xlam"
    calls_spec = SPEC

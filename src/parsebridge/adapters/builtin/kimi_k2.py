"""Kimi K2 tool calls: a section of ``functions.NAME:IDX`` calls with raw JSON arguments.

::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>
    <|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>
    <|tool_calls_section_end|>

The call id is ``functions.NAME:IDX``: a call gets that id as the model wrote it (the
chat template renders it back into the next prompt, and both servers return it), a
fresh one when the head is not in that form or an earlier call of the output had the
same id. The name is the id without the ``functions.`` prefix and the ``:IDX`` suffix
(``NAME:IDX`` and a bare ``NAME`` are read too). The name is announced at
``<|tool_call_argument_begin|>``; arguments stream raw up to their closing
brace. A ``<|tool_call_begin|>`` without the section marker is accepted under
``conventions="lossless"``; under ``"servers"`` it is text, as both servers show it.

Malformed output (builtin policy, see `scan`):

* section and call markers with whitespace between them are structure; other text between
  calls inside a section is content;
* a call whose id yields no name (empty, or a bare counter such as ``3`` — SGLang guesses
  the name from the tools' parameter keys; we do not guess) stays in the content verbatim,
  markers included; a section without any named call is content too;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`);
  text after the arguments' closing brace up to ``<|tool_call_end|>`` is ignored;
* a new call/section marker inside a call ends it (as if truncated);
* end of output inside a call: no call, its text is text (`whole_calls`); unnamed →
  content.

`format_tool_result`: the Kimi K2 chat template renders a tool message as
``## Return of {tool_call_id}\\n{result}`` inside the tool turn.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ...formats.kimi_k2 import ARG_BEGIN, CALL_BEGIN, CALL_END, SECTION_BEGIN, SECTION_END
from ...formats.kimi_k2 import format_tool_result as _format_tool_result
from .engines.section_json import SectionDialect, SectionJsonStream
from .engines.tool_parser import BuiltinToolParser

_INDEX = re.compile(r":\s*\d+\s*$")
#: A head that is a whole call id as the template writes one.
_CALL_ID = re.compile(r"functions\.[^\s:]+:\d+")


def name_from_id(call_id: str) -> str | None:
    """``functions.NAME:IDX`` → NAME (None when nothing name-like is left)."""
    head = _INDEX.sub("", call_id.strip()).strip()
    if head.startswith("functions."):
        head = head[len("functions.") :]
    if not head or head.isdigit() or any(c.isspace() for c in head):
        return None
    return head


def id_from_head(head: str) -> str | None:
    """``functions.NAME:IDX`` (surrounding whitespace aside) → that id; any other head → None."""
    head = head.strip()
    return head if _CALL_ID.fullmatch(head) else None


class KimiK2ToolParser(BuiltinToolParser):
    """Kimi K2 ``functions.NAME:IDX`` tool-call sections (builtin, incremental)."""

    name = "kimi_k2"
    dialect = SectionDialect(
        SECTION_BEGIN, SECTION_END, CALL_BEGIN, ARG_BEGIN, CALL_END, name_from_id, id_from_head=id_from_head
    )
    markers: ClassVar[tuple[str, ...]] = dialect.markers
    stream_class = SectionJsonStream
    servers_bare_calls = False  # (both servers show a call outside a section as text)

    def has_tool_calls(self, text: str) -> bool:
        return SECTION_BEGIN in text or CALL_BEGIN in text

    def format_tool_result(self, tool_call_id: str, result: Any) -> str:
        """``## Return of {id}\\n{result}`` as the Kimi K2 chat template renders a tool message."""
        return _format_tool_result(tool_call_id, result)

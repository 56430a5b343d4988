"""Hermes / Qwen2.5 tool calls: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

One or more blocks; "parameters" is accepted as a synonym of "arguments".
Streaming announces the call when its "name" string closes and streams the
raw text of the arguments value as it arrives (JSON string state is tracked,
so ``</tool_call>`` inside an argument string does not end the call).

The JSON-payload machine (`json_payload`) with one `whole_block` region.

Malformed output (builtin policy, see `scan`):

* whitespace between/around calls is structure; other text outside blocks is content;
* a block whose JSON yields no string "name" (not JSON, no name) stays in the content verbatim,
  markers included;
* arguments that are not a JSON object → no call, its text is text (`whole_calls`);
* a body that breaks after the name was read: if the arguments had not started, the raw
  rest of the body (up to ``</tool_call>``) is the arguments text (no call: `whole_calls`); if they were
  complete, the rest is ignored. Text between the object's closing brace and
  ``</tool_call>`` is ignored too (a stray extra ``}`` is common); in a block that never
  ends, text other than whitespace after the object makes it no call (`whole_calls`);
* a call object cut by ``</tool_call>`` (missing braces) or by the end of output is no call,
  its text is text (`whole_calls`); one that closed is a call even if ``</tool_call>`` never came;
* a ``<tool_call>`` outside strings inside a block ends that block (as if truncated).

`format_tool_result`: ``<tool_response>\\n{result}\\n</tool_response>`` — what the Qwen2.5 /
Hermes chat templates render for a tool message (no id: the format has none; a non-string
result is JSON-encoded).
"""

from __future__ import annotations

from typing import ClassVar

from ...formats.hermes import END, START
from .engines.json_payload import OBJECT, JsonCallsParser, JsonCallsSpec, JsonCallsStream, Region
from .engines.scan import content_mode, first_chars

SPEC = JsonCallsSpec(regions=(Region(START, END, shape=OBJECT, whole_block=True),))


class HermesToolStream(JsonCallsStream):
    """Incremental hermes machine: content ↔ block, with an `ObjectReader` for the body."""

    spec = SPEC
    _idle_when_empty = True  # every state's step (and the reader's) on an empty rest: nothing, False
    _start_mode = content_mode(first_chars((START,)))


class HermesToolParser(JsonCallsParser):
    """Hermes / Qwen2.5 ``<tool_call>`` JSON blocks (builtin, incremental)."""

    name = "hermes"
    markers: ClassVar[tuple[str, ...]] = SPEC.markers
    stream_class = HermesToolStream
    family_format = "hermes"

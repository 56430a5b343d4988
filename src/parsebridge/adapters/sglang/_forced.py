"""``tool_choice="required"`` and named functions, the way SGLang's chat server parses them.

Read from 0.5.23's ``serving_chat.py`` (`_process_tool_call_stream` and
`_process_tool_calls`), restated, not copied. For such a request the server
asks the tool parser whether it owns the output format (``FunctionCallParser(…,
tool_choice=…).owns_tool_format()``: the detector has a structural-tag grammar,
parses required calls natively, or brings its own required-call parser). If it
does, that parser reads the output, as for ``"auto"``. If not, generation was
constrained to a JSON array ``[{"name": …, "parameters": {…}}, …]`` (for a
named function too) and SGLang's own `JsonArrayParser` reads it: streamed
increments, its `finish` on the last chunk; one-shot, the whole text as JSON
(an object is a one-element array), each element a call with its
``parameters`` re-serialised, no content; text that is not such an array stays
content with no calls.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any


def is_forced(tool_choice: Any) -> bool:
    """``"required"`` or a named function (a dict or SGLang's `ToolChoice`)."""
    return tool_choice == "required" or (tool_choice is not None and not isinstance(tool_choice, str))


class JsonArrayLane:
    """SGLang's `JsonArrayParser` behind the `FunctionCallParser` methods the session calls."""

    def __init__(self, parser_cls: type, tools: list[Any], item_cls: type) -> None:
        self.detector = parser_cls()  # `detector`: where the server's unstreamed-args check looks
        self.tools = tools
        self._item = item_cls

    def parse_stream_chunk(self, text: str) -> tuple[str, list[Any]]:
        result = self.detector.parse_streaming_increment(text, self.tools)
        return result.normal_text, list(result.calls)

    def parse_stream_end(self) -> tuple[str, list[Any]]:
        result = self.detector.finish(self.tools)
        return result.normal_text, list(result.calls)

    def has_tool_call(self, text: str) -> bool:
        return True  # the server's one-shot JSON path runs on any text

    def parse_non_stream(self, text: str) -> tuple[str, list[Any]]:
        try:
            data = json.loads(text)
        except ValueError:
            return text, []
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list) or not all(isinstance(d, dict) and "name" in d for d in data):
            return text, []
        items = [
            self._item(
                tool_index=i,
                name=d["name"],
                parameters=json.dumps(d.get("parameters", {}), ensure_ascii=False),
            )
            for i, d in enumerate(data)
        ]
        return "", items


def forced_factory(api: Any, make_native: Callable[[], Any], tools: list[Any]) -> Callable[[], Any]:
    """The constructor of the parser the server uses for a required/named request."""
    if make_native().owns_tool_format():
        return make_native
    item_cls = importlib.import_module("sglang.srt.function_call.core_types").ToolCallItem
    parser_cls = importlib.import_module("sglang.srt.function_call.json_array_parser").JsonArrayParser
    return lambda: JsonArrayLane(parser_cls, tools, item_cls)

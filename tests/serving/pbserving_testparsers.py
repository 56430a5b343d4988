"""Parsers of our own for the serving tests (loaded as ``python:pbserving_testparsers:Class``).

`TagTool` reads hermes-style ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
blocks and streams each call's arguments in fragments, so the chunk convention
is exercised without depending on any backend. `Sloppy` emits deltas that
break the convention on purpose (a fragment before the name, an id sent twice,
sparse indices), which the processor must normalise. `Bomb` raises mid-stream.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from parsebridge import (
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolStreamBase,
)

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def _held(buffer: str, marker: str) -> int:
    for size in range(min(len(buffer), len(marker) - 1), 0, -1):
        if marker.startswith(buffer[-size:]):
            return size
    return 0


class TagTool(ToolParserBase):
    """Hermes-style tags; one-shot and streamed agree at every chunking."""

    name = "tag_tool"
    markers = (OPEN, CLOSE)

    def parse(self, text: str) -> ToolParseResult:
        content: list[str] = []
        calls: list[ToolCall] = []
        pos = 0
        while True:
            start = text.find(OPEN, pos)
            if start == -1:
                content.append(text[pos:])
                break
            content.append(text[pos:start])
            end = text.find(CLOSE, start)
            body = text[start + len(OPEN) : end if end != -1 else len(text)]
            try:
                obj = json.loads(body)
                calls.append(
                    ToolCall.from_arguments_text(
                        obj["name"], json.dumps(obj.get("arguments", {})), raw_text=body
                    )
                )
            except (ValueError, KeyError, TypeError):
                content.append(text[start : end + len(CLOSE) if end != -1 else len(text)])
            if end == -1:
                break
            pos = end + len(CLOSE)
        return ToolParseResult(content="".join(content) or None, tool_calls=calls)

    def stream(self) -> TagToolStream:
        return TagToolStream()


class TagToolStream(ToolStreamBase):
    """Content outside tags passes through; inside a tag, the name is announced and arguments streamed."""

    def __init__(self) -> None:
        super().__init__()
        self._buf = ""
        self._inside = False
        self._index = -1
        self._announced = False
        self._sent = 0  # argument characters sent for the current call

    def _args_so_far(self, body: str) -> str | None:
        key = body.find('"arguments"')
        if key == -1:
            return None
        colon = body.find(":", key)
        return None if colon == -1 else body[colon + 1 :].lstrip()

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._buf += text
        content: list[str] = []
        calls: list[ToolCallDelta] = []
        while True:
            if not self._inside:
                start = self._buf.find(OPEN)
                if start == -1:
                    keep = _held(self._buf, OPEN)
                    content.append(self._buf[: len(self._buf) - keep])
                    self._buf = self._buf[len(self._buf) - keep :]
                    break
                content.append(self._buf[:start])
                self._buf = self._buf[start + len(OPEN) :]
                self._inside, self._announced, self._sent = True, False, 0
                continue
            end = self._buf.find(CLOSE)
            body = self._buf if end == -1 else self._buf[:end]
            if not self._announced:
                try:
                    name = json.loads(body).get("name") if end != -1 else None
                except ValueError:
                    name = None
                if name is None:
                    head = body.split('"name"', 1)
                    if len(head) == 2 and head[1].count('"') >= 2:
                        name = head[1].split('"')[1]
                if name is not None:
                    self._index += 1
                    self._announced = True
                    calls.append(ToolCallDelta(index=self._index, id=f"call_tag{self._index}", name=name))
            if self._announced:
                args = self._args_so_far(body)
                if args is not None:
                    # hold back the closing brace of the wrapper object until the tag closes
                    ready = args if end != -1 else args[: max(0, len(args) - len(CLOSE) - 2)]
                    if end != -1:
                        ready = ready.rstrip()
                        ready = ready[:-1] if ready.endswith("}") else ready
                    if len(ready) > self._sent:
                        calls.append(ToolCallDelta(index=self._index, arguments=ready[self._sent :]))
                        self._sent = len(ready)
            if end == -1:
                break
            self._buf = self._buf[end + len(CLOSE) :]
            self._inside = False
        return StreamDelta(content="".join(content), tool_calls=calls)

    def _flush(self) -> StreamDelta:
        rest, self._buf = self._buf, ""
        if self._inside:
            return StreamDelta()
        return StreamDelta(content=rest)

    def pending_text(self) -> str:
        return self._buf


class Sloppy(ToolParserBase):
    """Every output is one call `f` with arguments = the text; its deltas break the convention."""

    name = "sloppy"

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(tool_calls=[ToolCall.from_arguments_text("f", text)])

    def stream(self) -> SloppyStream:
        return SloppyStream()


class SloppyStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._n = 0

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._n += 1
        if self._n == 1:  # a fragment before the call is named
            return StreamDelta(tool_calls=[ToolCallDelta(index=7, arguments=text)])
        if self._n == 2:  # the name arrives, with an id; then the id again
            return StreamDelta(
                tool_calls=[
                    ToolCallDelta(index=7, id="call_x", name="f", arguments=text[:1]),
                    ToolCallDelta(index=7, id="call_x", arguments=text[1:]),
                ]
            )
        return StreamDelta(tool_calls=[ToolCallDelta(index=7, name="f", arguments=text)])


class Bomb(TagTool):
    """TagTool that raises once its output contains ``BOOM``."""

    name = "bomb"

    def parse(self, text: str) -> ToolParseResult:
        if "BOOM" in text:
            raise RuntimeError("bomb went off")
        return super().parse(text)

    def stream(self) -> BombStream:
        return BombStream()


class BombStream(TagToolStream):
    """Raises on the chunk that completes ``BOOM`` (at any chunking)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen = ""

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self._seen += text
        if "BOOM" in self._seen:
            raise RuntimeError("bomb went off")
        return super()._feed(text, token_ids)

"""Tiny `python:` parsers with deliberate, known differences, for the compare tests.

Format: ``<call>{"name": ..., "arguments": {...}}</call>`` anywhere in the text.

* `Tagged` — correct; streams by buffering (stream ≡ one-shot);
* `LossyTagged` — same one-shot; its stream drops the text that shares a
  chunk with the start of ``<call>`` (the multi-token-delta bug frameworks
  have): with one token per chunk nothing is lost, with 5 tokens it is;
* `NoArgs` — drops every call's arguments (one-shot and streamed);
* `Boom` — raises on outputs containing ``BOOM``;
* `Slow` — takes a minute over outputs containing ``SLOW`` (a batch still running when Ctrl-C comes);
* `Think` — ``<think>…</think>`` reasoning.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence

from parsebridge import (
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolParserBase,
    ToolParseResult,
    ToolStreamBase,
    result_as_delta,
)

_CALL = re.compile(r"<call>(.*?)</call>", re.DOTALL)


def _parse(text: str) -> ToolParseResult:
    calls = []
    for m in _CALL.finditer(text):
        try:
            obj = json.loads(m.group(1))
            calls.append(ToolCall(name=obj["name"], arguments=obj.get("arguments", {}), raw_text=m.group(0)))
        except (ValueError, KeyError):
            continue
    content = _CALL.sub("", text)
    return ToolParseResult(content=content or None, tool_calls=calls)


class Tagged(ToolParserBase):
    name = "tagged"
    markers = ("<call>", "</call>")

    def parse(self, text: str) -> ToolParseResult:
        return _parse(text)


class _LossyStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._in_call = False
        self._held: list[str] = []

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if self._in_call:
            self._held.append(text)
            return StreamDelta()
        i = text.find("<call")
        if i < 0:
            return StreamDelta(content=text)
        self._in_call = True
        self._held.append(text[i:])  # the bug: text[:i] is never sent
        return StreamDelta()

    def _flush(self) -> StreamDelta:
        rest = _parse("".join(self._held))
        return result_as_delta(rest)


class LossyTagged(Tagged):
    name = "lossy_tagged"

    def stream(self) -> _LossyStream:
        return _LossyStream()


class NoArgs(Tagged):
    name = "no_args"

    def parse(self, text: str) -> ToolParseResult:
        r = _parse(text)
        return ToolParseResult(content=r.content, tool_calls=[ToolCall(name=c.name) for c in r.tool_calls])


class Boom(Tagged):
    name = "boom"

    def parse(self, text: str) -> ToolParseResult:
        if "BOOM" in text:
            raise RuntimeError("boom")
        return _parse(text)


class Slow(Tagged):
    name = "slow"

    def parse(self, text: str) -> ToolParseResult:
        if "SLOW" in text:
            time.sleep(60)
        return _parse(text)


class Think(ReasoningParserBase):
    name = "think"
    markers = ("<think>", "</think>")

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if reasoning_started and "</think>" in text:
            r, _, c = text.partition("</think>")
            return ReasoningParseResult(reasoning=r or None, content=c or None)
        if "<think>" not in text:
            return ReasoningParseResult(content=text or None)
        before, _, rest = text.partition("<think>")
        r, _, c = rest.partition("</think>")
        return ReasoningParseResult(reasoning=r or None, content=(before + c) or None)

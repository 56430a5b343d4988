"""User parsers (loaded as `python:_confparsers:Class`) with deliberate, known defects.

Format: a toy hermes-like one: `<call>{"name": ..., "arguments": {...}}</call>`
spans are calls, everything else content; reasoning is `<r>...</r>` at the
start. Each defective class breaks exactly one conformance property, so the
tests can assert the suite names that property.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence

from parsebridge import (
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParserBase,
    ToolParseResult,
    ToolStreamBase,
)

CALL = re.compile(r"<call>(.*?)</call>", re.DOTALL)


def _parse(text: str) -> ToolParseResult:
    calls: list[ToolCall] = []
    for m in CALL.finditer(text):
        try:
            obj = json.loads(m.group(1))
            calls.append(ToolCall(name=obj["name"], arguments=obj.get("arguments", {}), raw_text=m.group(0)))
        except (ValueError, KeyError, TypeError):
            calls.append(ToolCall(name="?", invalid_arguments=m.group(1), raw_text=m.group(0)))
    content = CALL.sub("", text)
    return ToolParseResult(content=content or None, tool_calls=calls)


class Good(ToolParserBase):
    """Correct (buffered streaming, so stream ≡ one-shot)."""

    name = "good"
    markers = ("<call>", "</call>")

    def parse(self, text: str) -> ToolParseResult:
        return _parse(text)


class _Incremental(ToolStreamBase):
    """Streams content as it goes, calls whole when their end marker arrives."""

    def __init__(self, parser: IncrementalBase) -> None:
        super().__init__()
        self.p = parser
        self.buf = ""
        self.n = 0

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self.buf += text
        out = StreamDelta()
        while True:
            start = self.buf.find("<call>")
            if start < 0:
                # hold back a possible partial marker
                keep = next(
                    (k for k in range(min(6, len(self.buf)), 0, -1) if "<call>".startswith(self.buf[-k:])), 0
                )
                emit, self.buf = self.buf[: len(self.buf) - keep], self.buf[len(self.buf) - keep :]
                out = out.merged(StreamDelta(content=self.p.content_hook(emit, text)))
                return out
            end = self.buf.find("</call>", start)
            if start > 0:
                out = out.merged(StreamDelta(content=self.p.content_hook(self.buf[:start], text)))
                self.buf = self.buf[start:]
                continue
            if end < 0:
                return out
            body = self.buf[6:end]
            self.buf = self.buf[end + 7 :]
            out = out.merged(self.p.call_delta(self.n, body))
            self.n += 1

    def _flush(self) -> StreamDelta:
        rest, self.buf = self.buf, ""
        return StreamDelta(content=rest)


class IncrementalBase(ToolParserBase):
    markers = ("<call>", "</call>")

    def parse(self, text: str) -> ToolParseResult:
        return _parse(text)

    def stream(self) -> _Incremental:
        return _Incremental(self)

    def content_hook(self, emit: str, chunk: str) -> str:
        return emit

    def call_delta(self, index: int, body: str) -> StreamDelta:
        obj = json.loads(body)
        args = json.dumps(obj.get("arguments", {}))
        return StreamDelta(
            tool_calls=[
                ToolCallDelta(index=index, id=f"call_{index}", name=obj["name"], arguments=args[:3]),
                ToolCallDelta(index=index, arguments=args[3:]),
            ]
        )


class Incremental(IncrementalBase):
    """Correct and incremental."""

    name = "incremental"


class LosesContentInBigChunks(IncrementalBase):
    """Like old vLLM: drops content that arrives in the same chunk as a call start."""

    name = "loses_content"

    def content_hook(self, emit: str, chunk: str) -> str:
        return "" if "<call>" in chunk and len(chunk) > 6 else emit


class DuplicatesContent(IncrementalBase):
    name = "duplicates"

    def content_hook(self, emit: str, chunk: str) -> str:
        return emit + emit if emit.strip() else emit


class LeaksMarker(ToolParserBase):
    """One-shot leaves the closing marker in content."""

    name = "leaks"
    markers = ("<call>", "</call>")

    def parse(self, text: str) -> ToolParseResult:
        r = _parse(text)
        if r.tool_calls:
            r.content = (r.content or "") + "</call>"
        return r


class TwoIds(IncrementalBase):
    """Sends the id (and name) twice per call."""

    name = "two_ids"

    def call_delta(self, index: int, body: str) -> StreamDelta:
        obj = json.loads(body)
        return StreamDelta(
            tool_calls=[
                ToolCallDelta(index=index, id=f"call_{index}", name=obj["name"], arguments=""),
                ToolCallDelta(
                    index=index,
                    id=f"call_{index}",
                    name=obj["name"],
                    arguments=json.dumps(obj.get("arguments", {})),
                ),
            ]
        )


class BadFragments(IncrementalBase):
    """Streamed argument fragments drop the final `}`."""

    name = "bad_fragments"

    def call_delta(self, index: int, body: str) -> StreamDelta:
        obj = json.loads(body)
        return StreamDelta(
            tool_calls=[
                ToolCallDelta(
                    index=index,
                    id=f"c{index}",
                    name=obj["name"],
                    arguments=json.dumps(obj.get("arguments", {}))[:-1],
                )
            ]
        )


class WrongName(ToolParserBase):
    name = "wrong_name"

    def parse(self, text: str) -> ToolParseResult:
        r = _parse(text)
        for c in r.tool_calls:
            c.name = c.name.upper()
        return r


class Raises(ToolParserBase):
    name = "raises"

    def parse(self, text: str) -> ToolParseResult:
        raise ValueError("boom")


class RaisesInStream(IncrementalBase):
    """One-shot fine; the stream raises on the first chunk."""

    name = "raises_in_stream"

    def content_hook(self, emit: str, chunk: str) -> str:
        raise RuntimeError("stream bug")


class TrailingSpace(IncrementalBase):
    """Streams one extra space at the end."""

    name = "trailing_space"

    def stream(self) -> _Incremental:
        s = _Incremental(self)
        flush = s._flush
        s._flush = lambda: StreamDelta(content=flush().content + " ")  # type: ignore[method-assign]
        return s


class FinishLies(IncrementalBase):
    """finish() reports content the deltas never carried."""

    name = "finish_lies"

    def stream(self) -> _Incremental:
        s = _Incremental(self)
        orig = s.finish

        def finish() -> ToolParseResult:
            r = orig()
            r.content = (r.content or "") + "!"
            return r

        s.finish = finish  # type: ignore[method-assign]
        return s


class Think(ReasoningParserBase):
    """`<r>…</r>` at the start is reasoning; with reasoning started in the prompt, up to `</r>`."""

    name = "think"
    markers = ("<r>", "</r>")

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if reasoning_started and "</r>" in text:
            r, _, c = text.partition("</r>")
            return ReasoningParseResult(reasoning=r or None, content=c or None)
        if text.startswith("<r>") and "</r>" in text:
            r, _, c = text[3:].partition("</r>")
            return ReasoningParseResult(reasoning=r or None, content=c or None)
        return ReasoningParseResult(content=text or None)


class ThinkSwallows(Think):
    """Puts everything in reasoning (the `<think></think>`-in-prompt bug)."""

    name = "think_swallows"

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        r = super().parse(text, reasoning_started=reasoning_started)
        return ReasoningParseResult(reasoning=(r.reasoning or "") + (r.content or "") or None)


# ---------------------------------------------------------------- a toy framework backend

from typing import Any  # noqa: E402

from parsebridge.adapters.base import Backend  # noqa: E402

TOY_TOOL = {
    "good": Good,
    "incremental": Incremental,
    "loses": LosesContentInBigChunks,
    "raises": Raises,
    "two_ids": TwoIds,
}
TOY_REASONING = {"think": Think}


class ToyBackend(Backend):
    """A framework-like backend whose parsers are the classes above (for family-table runs)."""

    name = "toyfw"

    def version(self) -> str:
        return "9.9.9"

    def tool_parser_names(self) -> list[str]:
        return list(TOY_TOOL)

    def reasoning_parser_names(self) -> list[str]:
        return list(TOY_REASONING)

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> Any:
        p = TOY_TOOL[name](tools=tools, **options)
        p.backend, p.name = self.name, name
        return p

    def create_reasoning_parser(self, name: str, **options: Any) -> Any:
        p = TOY_REASONING[name](**options)
        p.backend, p.name = self.name, name
        return p


class NotInstalledBackend(ToyBackend):
    name = "notinstalled"
    import_name = "surely_not_an_installed_module_xyz"
    install_command = "pip install surely-not-installed"


class BrokenImportBackend(ToyBackend):
    """Installed (its module is found) but its framework raises on import: listing or building fails."""

    name = "toybroken"

    def _import(self) -> None:
        raise ImportError("toybroken's framework raised on import (libfoo.so: cannot open shared object)")

    def tool_parser_names(self) -> list[str]:
        self._import()
        return []

    def reasoning_parser_names(self) -> list[str]:
        self._import()
        return []

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> Any:
        self._import()

    def create_reasoning_parser(self, name: str, **options: Any) -> Any:
        self._import()


#: Set in a process once `HeavyToyBackend` has built a parser there, as importing its framework would.
HEAVY_IMPORTED = False


class _LogsItsProcess(Good):
    """Correct, and each parse notes its process and whether the heavy framework is imported there
    (to the file named by ``PARSEBRIDGE_TEST_STAGE_LOG``)."""

    def parse(self, text: str) -> ToolParseResult:
        path = os.environ.get("PARSEBRIDGE_TEST_STAGE_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{self.backend} {os.getpid()} {HEAVY_IMPORTED}\n")
        return super().parse(text)


class LightToyBackend(ToyBackend):
    """A backend whose framework import is light (`import_weight` 0)."""

    name = "toylight"

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> Any:
        p = _LogsItsProcess(tools=tools)
        p.backend, p.name = self.name, name
        return p


class HeavyToyBackend(LightToyBackend):
    """A backend whose framework import is heavy: its parsers "import" it (`HEAVY_IMPORTED`)."""

    name = "toyheavy"
    import_weight = 1

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> Any:
        global HEAVY_IMPORTED
        HEAVY_IMPORTED = True
        return super().create_tool_parser(name, tools=tools, **options)

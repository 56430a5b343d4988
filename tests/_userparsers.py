"""User-written parsers used by the tests of the python backend and the failure policy."""

from __future__ import annotations

from collections.abc import Sequence

from parsebridge import (
    ReasoningBlock,
    ReasoningParserBase,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolParserBase,
    ToolParseResult,
    ToolStreamBase,
)


class CallLine(ToolParserBase):
    """Each line `CALL name {json}` is a call; everything else is content."""

    name = "call_line"
    markers = ("CALL ",)

    def parse(self, text: str) -> ToolParseResult:
        content: list[str] = []
        calls: list[ToolCall] = []
        for line in text.splitlines(keepends=True):
            if line.startswith("CALL "):
                name, _, args = line[5:].strip().partition(" ")
                calls.append(ToolCall.from_arguments_text(name, args or "{}", raw_text=line))
            else:
                content.append(line)
        return ToolParseResult(content="".join(content) or None, tool_calls=calls)


class OnlyParse:
    """Not a subclass: has only `parse`, returning a plain dict."""

    def parse(self, text: str) -> dict[str, object]:
        return {"content": text.upper() or None, "tool_calls": []}


class NoParse:
    def stream(self) -> None:
        return None


class Explodes(ToolParserBase):
    name = "explodes"

    def parse(self, text: str) -> ToolParseResult:
        raise ZeroDivisionError("parser bug")


class _MidStreamStream(ToolStreamBase):
    def __init__(self) -> None:
        super().__init__()
        self._held = ""

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if "!" in text:
            raise KeyError("bang")
        # holds back one trailing character, like a parser waiting on a marker
        out, self._held = self._held + text[:-1], text[-1:]
        return StreamDelta(content=out)

    def _flush(self) -> StreamDelta:
        return StreamDelta(content=self._held)

    def pending_text(self) -> str:
        return self._held


class ExplodesMidStream(ToolParserBase):
    name = "explodes_mid_stream"

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text or None)

    def stream(self) -> _MidStreamStream:
        return _MidStreamStream()


class _EndStream(_MidStreamStream):
    def _flush(self) -> StreamDelta:
        if "?" in self._held:
            raise ValueError("end of stream")
        return super()._flush()


class ExplodesAtEnd(ExplodesMidStream):
    """Fails on its final flush when the held character is '?'."""

    name = "explodes_at_end"

    def stream(self) -> _EndStream:
        return _EndStream()


class Colon(ReasoningParserBase):
    """`reasoning::content` — the part before `::` is reasoning."""

    name = "colon"

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        if "::" not in text:
            return ReasoningParseResult(content=text or None)
        r, _, c = text.partition("::")
        return ReasoningParseResult(reasoning=r or None, content=c or None)


# ---------------------------------------------------------------- a fake backend

from typing import Any  # noqa: E402

from parsebridge.adapters.base import Backend  # noqa: E402


class FakeFrameworkBackend(Backend):
    """Registers framework-style names, including one spelled with a dash."""

    name = "fakefw"
    install_command = "pip install fakefw"

    def tool_parser_names(self) -> list[str]:
        return ["qwen25", "llama3", "kimi-k2"]

    def reasoning_parser_names(self) -> list[str]:
        return ["deepseek-r1", "colon"]

    def create_tool_parser(self, name: str, *, tools: Any, **options: Any) -> CallLine:
        p = CallLine(tools=tools, **options)
        p.backend, p.name = self.name, name
        return p

    def create_reasoning_parser(self, name: str, **options: Any) -> Colon:
        p = Colon(**options)
        p.backend, p.name = self.name, name
        return p


class MissingFrameworkBackend(FakeFrameworkBackend):
    name = "missingfw"
    import_name = "surely_not_an_installed_module_xyz"
    distribution = "surely-not-installed"
    install_command = "pip install surely-not-installed"


class _ExplodingChainStream:
    """A native chain's stream: passes text through, raises on '!'."""

    def __init__(self) -> None:
        from parsebridge import DeltaAccumulator

        self.accumulator = DeltaAccumulator()
        self._held = ""

    def feed(self, text: str, token_ids: Any = None) -> StreamDelta:
        if "!" in text:
            raise KeyError("native chain bug")
        text = self._held + text
        if text.startswith("<"):  # an unclosed "<…" is held whole, like a marker being decided
            self._held = text
            return StreamDelta()
        out, self._held = text[:-1], text[-1:]
        delta = StreamDelta(content=out)
        self.accumulator.add(delta)
        return delta

    def flush(self) -> StreamDelta:
        delta, self._held = StreamDelta(content=self._held), ""
        self.accumulator.add(delta)
        return delta

    def finish(self) -> Any:
        from parsebridge import ParseResult

        self.flush()
        return ParseResult(content=self.accumulator.content)

    def pending_text(self) -> str:
        return self._held


class ExplodingChain:
    """What a framework backend's `create_pipeline` returns: one object for reasoning + tools."""

    specs = ("chainfw:colon", "chainfw:qwen25")

    def parse(self, text: str, *, reasoning_started: Any = None) -> Any:
        from parsebridge import ParseResult

        if "!" in text:
            raise KeyError("native chain bug")
        return ParseResult(content=text or None)

    def stream(self, **_: Any) -> _ExplodingChainStream:
        return _ExplodingChainStream()


class ChainFrameworkBackend(FakeFrameworkBackend):
    """A fake framework with its own native reasoning→tool chain."""

    name = "chainfw"

    def create_pipeline(self, reasoning: Any, tool: Any, **options: Any) -> ExplodingChain:
        return ExplodingChain()


class SeedToolParser:
    """Exactly the seed design's Dynamo protocol: no `parse`, no `stream`."""

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        calls = []
        for line in text.splitlines(keepends=True):
            if line.startswith("CALL "):
                name, _, args = line[5:].strip().partition(" ")
                calls.append(ToolCall.from_arguments_text(name, args or "{}", raw_text=line))
        return calls

    def has_tool_calls(self, text: str) -> bool:
        return "CALL " in text

    def format_tool_result(self, tool_call_id: str, result: object) -> str:
        return f"RESULT {tool_call_id}: {result}"


class SeedDictToolParser:
    """The Dynamo protocol returning plain dicts (no raw_text): content cannot be separated."""

    def parse_tool_calls(self, text: str) -> list[dict]:
        return [{"name": "f", "arguments": '{"a": 1}'}] if "CALL" in text else []


class SeedReasoningParser:
    """Exactly the seed design's reasoning protocol: `parse_reasoning` and `has_reasoning`."""

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        start, end = text.find("<r>"), text.find("</r>")
        if start == -1 or end == -1:
            return None
        return ReasoningBlock(
            content=text[start + 3 : end],
            start_marker="<r>",
            end_marker="</r>",
            start_index=start,
            end_index=end + 4,
        )

    def has_reasoning(self, text: str) -> bool:
        return "<r>" in text


class ReturnsDict(ToolParserBase):
    """A subclass whose `parse` returns a dict (the base class takes it as a `ToolParseResult`)."""

    def parse(self, text: str) -> ToolParseResult:
        return {"content": text}  # type: ignore[return-value]


class ReturnsNothing(ReasoningParserBase):
    """A reasoning subclass whose `parse` forgot its return."""

    def parse(self, text: str, *, reasoning_started: bool | None = None) -> ReasoningParseResult:
        return None  # type: ignore[return-value]


class NeedsSetting(ToolParserBase):
    """Built only with a `setting` keyword."""

    def __init__(self, setting: str, tools: Sequence[object] | None = None) -> None:
        super().__init__(tools)  # type: ignore[arg-type]
        self.setting = setting

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text)


class FailsToBuild:
    """A plain class whose constructor raises."""

    def __init__(self) -> None:
        raise OSError("cannot open its grammar file")

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text)


class SeedMisplacedBlock:
    """The seed reasoning protocol, with a block whose indices are no place in the text."""

    def parse_reasoning(self, text: str) -> ReasoningBlock | None:
        return ReasoningBlock(content="why", start_index=len(text) + 10, end_index=2)


class StreamIsNone(ToolParserBase):
    """Its `stream()` forgot its return."""

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text)

    def stream(self) -> ToolStreamBase:
        return None  # type: ignore[return-value]


class _TextFeed:
    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> str:
        return text

    def flush(self) -> StreamDelta:
        return StreamDelta()


class FeedsText(ToolParserBase):
    """Its stream's `feed` returns the text, not a `StreamDelta`."""

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text)

    def stream(self) -> ToolStreamBase:
        return _TextFeed()  # type: ignore[return-value]


class _ExitingStream(_MidStreamStream):
    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        if "!" in text:
            raise SystemExit(3)
        return super()._feed(text, token_ids)


class CallsExit(ToolParserBase):
    """Calls `sys.exit(3)` in `parse`, and in its stream on a chunk with '!' (as `ExplodesMidStream`)."""

    def parse(self, text: str) -> ToolParseResult:
        raise SystemExit(3)

    def has_tool_calls(self, text: str) -> bool:
        raise SystemExit(3)

    def stream(self) -> ToolStreamBase:
        return _ExitingStream()

"""SGLang parsers called directly, as parsebridge's adapter calls them, minus the adapter.

The baseline of the overhead section: the same `FunctionCallParser` /
`ReasoningParser` constructions per request (with the keywords the release
takes: tokenizer, request, tool_choice for one-shot), `has_tool_call` then
`parse_non_stream` one-shot, `parse_stream_chunk` per chunk and
`parse_stream_end` on the last one when the release has it, call ids of the
server's form (``call_`` + 24 random hex; drawn from `os.urandom` as the
adapter draws them, not through `uuid4` as the server does, so minting ids is
neither overhead nor a saving here), and the server's end-of-stream check for unstreamed
arguments. Tools and the request are validated once, as a server holds them.
What remains in the parsebridge timing is what the bridge adds.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Sequence
from typing import Any

from ._corpus import Format
from ._direct_base import Chunk, DirectUnavailable


def _accepted(func: Any) -> set[str]:
    try:
        return set(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return set()


class SglangDirect:
    """Per-transcript one-shot and streamed parsing with SGLang's own parser objects."""

    def __init__(self, bridge_parser: Any, fmt: Format) -> None:
        try:
            from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, Tool
            from sglang.srt.function_call.function_call_parser import FunctionCallParser
            from sglang.srt.parser.reasoning_parser import ReasoningParser
        except ImportError as exc:
            raise DirectUnavailable(f"SGLang without the 0.5.2+ module layout ({exc})") from exc
        self.fc_cls, self.rp_cls = FunctionCallParser, ReasoningParser
        self.fc_kw = _accepted(FunctionCallParser.__init__)
        self.rp_kw = _accepted(ReasoningParser.__init__)
        self.stream_end = hasattr(FunctionCallParser, "parse_stream_end") and hasattr(
            ReasoningParser, "parse_stream_end"
        )
        self.kind = fmt.kind
        self.name = bridge_parser.name
        self.tokenizer = bridge_parser.tokenizer
        self.tools = [Tool.model_validate(t) for t in fmt.tools]
        fields: dict[str, Any] = {
            "model": "parsebridge",
            "messages": [{"role": "user", "content": "parsebridge"}],
        }
        if self.tools:
            fields.update(tools=self.tools, tool_choice="auto")
        self.request = ChatCompletionRequest.model_validate(fields)

    # ------------------------------------------------------------------ construction

    def _fc(self, *, stream: bool) -> Any:
        kw: dict[str, Any] = {}
        if "tokenizer" in self.fc_kw:
            kw["tokenizer"] = self.tokenizer
        if not stream and "tool_choice" in self.fc_kw:
            kw["tool_choice"] = "auto"
        return self.fc_cls(self.tools, self.name, **kw)

    def _rp(self, *, stream: bool) -> Any:
        kw: dict[str, Any] = {"stream_reasoning": stream}
        if "request" in self.rp_kw:
            kw["request"] = self.request
        if "tokenizer" in self.rp_kw:
            kw["tokenizer"] = self.tokenizer
        return self.rp_cls(self.name, **kw)

    @staticmethod
    def _call_id() -> str:
        return "call_" + os.urandom(12).hex()

    # ------------------------------------------------------------------ one-shot

    def oneshot(self, text: str) -> object:
        if self.kind == "reasoning":
            return self._rp(stream=False).parse_non_stream(text)
        parser = self._fc(stream=False)
        if not parser.has_tool_call(text):
            return text, []
        normal, items = parser.parse_non_stream(text)
        return normal, [(self._call_id(), item.name, item.parameters) for item in items]

    # ------------------------------------------------------------------ streaming

    def stream(self, chunks: Sequence[Chunk]) -> object:
        last = len(chunks) - 1
        out: list[object] = []
        if self.kind == "reasoning":
            rp = self._rp(stream=True)
            for i, (text, _ids) in enumerate(chunks):
                out.append(rp.parse_stream_chunk(text))
                if i == last and self.stream_end:
                    out.append(rp.parse_stream_end())
            return out
        fc = self._fc(stream=True)
        for i, (text, _ids) in enumerate(chunks):
            normal, items = fc.parse_stream_chunk(text)
            if i == last and self.stream_end:
                end_text, end_items = fc.parse_stream_end()
                normal, items = (normal or "") + (end_text or ""), [*items, *end_items]
            out.append(
                (normal, [(self._call_id() if it.name else None, it.name, it.parameters) for it in items])
            )
            if i == last:
                out.append(self._unstreamed(fc))
        return out

    @staticmethod
    def _unstreamed(fc: Any) -> str:
        """The server's end-of-stream check: argument text the detector parsed but never streamed."""
        detector = getattr(fc, "detector", fc)
        prev = getattr(detector, "prev_tool_call_arr", None)
        streamed = getattr(detector, "streamed_args_for_tool", None)
        if not prev or not streamed or len(streamed) < len(prev):
            return ""
        args = prev[-1].get("arguments", {})
        expected = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        sent = streamed[len(prev) - 1]
        return expected[len(sent) :] if expected.startswith(sent) else ""

"""`BuiltinToolParser`: the base of the builtin tool parsers (the driver is `scan.BuiltinToolStream`).

A parser holds its request's settings (``tools``, ``conventions=`` and what follows from
them for its format) and no per-request state: `stream` makes one, with `WholeCalls` in
front of the format's stream class (`whole_calls`: no call is shown before it is whole), and
`parse` runs that very machine over the whole text, so a one-shot parse and a stream at any
chunking agree by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ....protocol import ToolCall, ToolParseResult
from ....protocol.models import make_tool_result, set_raw_text
from ....protocol.parsers import ToolParserBase, ToolSpec
from .conventions import SERVERS, check_conventions, servers_content, servers_markup
from .scan import BuiltinToolStream
from .whole_calls import whole_calls_stream


class BuiltinToolParser(ToolParserBase):
    """Base of the builtin formats: `parse` runs the stream machine over the whole text."""

    backend = "builtin"
    stream_class: ClassVar[type[BuiltinToolStream]]
    #: Under "servers", whether a call marker outside its format's section is read (False: both show text).
    servers_bare_calls: ClassVar[bool] = True

    def __init__(self, tools: Sequence[ToolSpec] | None = None, **options: Any) -> None:
        super().__init__(tools, **options)
        #: "servers" or "lossless" (see `conventions`).
        self.conventions = check_conventions(options.get("conventions"))
        #: Under "servers", where the content ends (the format's `servers_content`): at the
        #: first call ("call"), at the start marker ("marker"), nowhere ("keep").
        cut = servers_content(self.name) if self.conventions == SERVERS else "keep"
        self.cuts_content = cut != "keep"
        self.cut_marker = self.markers[0] if cut == "marker" and self.markers else ""
        #: ... and the markup that opens no call left out of it (the format's `servers_markup`):
        #: every marker ("markers"), or a start marker directly followed by another ("doubled").
        markup = servers_markup(self.name) if self.conventions == SERVERS else ""
        self.markup_markers: tuple[str, ...] = self.markers if markup == "markers" else ()
        self.doubled_start = self.markers[0] if markup == "doubled" and self.markers else ""
        #: The stream class it reads with: the format's, with `WholeCalls` in front.
        self._stream_class: type[BuiltinToolStream] = whole_calls_stream(self.stream_class)

    def stream(self) -> BuiltinToolStream:
        """A fresh incremental stream (per request)."""
        return self._stream_class(self)

    def parse(self, text: str) -> ToolParseResult:
        """One shot = the incremental machine fed once, so both agree exactly."""
        text = text if isinstance(text, str) else str(text)
        s = self.stream()
        s._whole_text = text  # (the held calls' raw text comes from it: `WholeCalls._raw_text`)
        # The stream's feed and finish without their error typing: the guard reports a failing `parse`.
        acc = s.accumulator
        s._feed(text, None)  # records its delta
        s._flushed = True
        s._end()
        calls: list[ToolCall] = acc.tool_calls()
        for call, (start, end) in zip(calls, s.call_spans, strict=False):
            set_raw_text(call, text[start:end])  # fresh calls built by this stream
        return make_tool_result(acc.content, calls, acc.dropped, acc.reasoning)

"""`parsebridge parse --stream` in bounded memory: deltas printed as they come, the result spooled.

A stream's `finish()` assembles everything streamed, so it holds the whole
output (as one small string per delta: ~15x the text at 4-character
chunks). The CLI needs each delta once, to print it, and the assembled
result once, at the end. So its stream is made `without_history()`, and
`StreamedResult` keeps what the result needs: reasoning and content text
in temporary files (in memory up to `SPOOL_IN_MEMORY`, on disk past it),
each call's id, name and arguments. The result is written from those
files block by block, never joined into one string.
"""

from __future__ import annotations

import io
import itertools
import json
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO, Any

from ..protocol import ParseResult, StreamDelta
from ..protocol.models import ReasoningBlock, ToolCall, make_tool_call

#: Text kept in memory per spool before it moves to a temporary file.
SPOOL_IN_MEMORY = 1 << 20
#: Fed text kept past what a call can still span before it is dropped (`RawCalls`).
TRIM_EVERY = 1 << 16
#: Characters copied per block when a spool is written out.
COPY_BLOCK = 1 << 16
_escape = json.JSONEncoder(ensure_ascii=False).encode
#: One string as a JSON string literal, as `_escape` writes it (the C encoder's function).
_string: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


class Spool:
    """Text appended piece by piece, read back block by block (bounded memory at any size)."""

    def __init__(self) -> None:
        self._file: Any = None
        self._written = 0
        #: Pieces not yet written: one file write per `COPY_BLOCK` characters, not per delta.
        self._pending: list[str] = []
        self._pending_size = 0

    def add(self, text: str) -> None:
        self._pending.append(text)
        self._pending_size += len(text)
        if self._pending_size >= COPY_BLOCK:
            self._write_pending()

    def _write_pending(self) -> None:
        if not self._pending:
            return
        if self._file is None:
            self._file = tempfile.SpooledTemporaryFile(  # noqa: SIM115 (closed by `close`)
                max_size=SPOOL_IN_MEMORY, mode="w+", encoding="utf-8", newline=""
            )
        self._file.write("".join(self._pending))
        self._written += self._pending_size
        self._pending = []
        self._pending_size = 0

    @property
    def size(self) -> int:
        """Characters added so far."""
        return self._written + self._pending_size

    @property
    def empty(self) -> bool:
        return not self.size

    def blocks(self) -> Iterator[str]:
        """The text so far, in blocks of at most `COPY_BLOCK` characters."""
        self._write_pending()
        if self._file is None:
            return
        self._file.seek(0)
        while block := self._file.read(COPY_BLOCK):
            yield block
        self._file.seek(0, io.SEEK_END)

    def head(self, n: int) -> str:
        """The first `n` characters (all of a small spool)."""
        self._write_pending()
        if self._file is None:
            return ""
        self._file.seek(0)
        text: str = self._file.read(n)
        self._file.seek(0, io.SEEK_END)
        return text

    def write_json(self, out: IO[str]) -> None:
        """The text as one JSON string, escaped block by block (escapes never span characters)."""
        out.write('"')
        for block in self.blocks():
            out.write(_escape(block)[1:-1])
        out.write('"')

    def close(self) -> None:
        self._pending = []
        if self._file is not None:
            self._file.close()


class RawCalls:
    """A tool stream, observed: the raw text of each call it finds, as `parse` gives it.

    Works with a stream that reports its calls' spans (`call_spans`, offsets in the text it
    was fed) and how far back a call found later may start (`open_from()`): the builtin
    streams. The fed text is kept only from there on, so memory stays bounded by the longest
    call (plus what the stream itself holds). Other streams pass through, and their calls
    keep an empty `raw_text`.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.texts: list[str] = []
        self._spans = getattr(stream, "call_spans", None)
        self._open_from = getattr(stream, "open_from", None)
        self._kept: list[str] = []  # fed text from offset `_kept_at` on
        self._kept_at = 0
        self._fed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def feed(self, text: str, token_ids: Any = None) -> StreamDelta:
        delta: StreamDelta = self.stream.feed(text, token_ids)
        spans = self._spans
        if spans is not None:
            self._kept.append(text)
            self._fed += len(text)
            # Cut a call out when one ended; else drop what no call can span now and then.
            if len(spans) != len(self.texts) or self._fed - self._kept_at > TRIM_EVERY:
                self._collect()
        return delta

    def flush(self) -> StreamDelta:
        delta: StreamDelta = self.stream.flush()
        if self._spans is not None:
            self._collect()
        return delta

    def _collect(self) -> None:
        spans = self._spans
        assert spans is not None and self._open_from is not None
        if len(self.texts) < len(spans):
            kept = "".join(self._kept)
            self._kept = [kept]
            for start, end in spans[len(self.texts) :]:
                self.texts.append(kept[start - self._kept_at : end - self._kept_at])
        keep = min(self._open_from(), self._fed)
        if keep > self._kept_at:  # drop what no call can still span
            kept = "".join(self._kept)[keep - self._kept_at :]
            self._kept = [kept] if kept else []
            self._kept_at = keep


class _Call:
    __slots__ = ("id", "name", "parts")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        #: Argument fragments; joined into one string when the next call starts.
        self.parts: list[str] = []


class StreamedResult:
    """What a client assembles from the deltas, kept for the end: text spooled, calls compact.

    A call is kept as its id, name, argument text and raw text; its `ToolCall` (parsed
    arguments and all) is made when it is written, one at a time.
    """

    def __init__(self) -> None:
        self.reasoning = Spool()
        self.content = Spool()
        self._calls: dict[int, _Call] = {}
        self._last: _Call | None = None
        self._raw: Sequence[str] = ()
        #: Strings that stand for the spools and the call lists until they are written.
        tag = secrets.token_hex(8)
        self._marks = {
            f"\x00parsebridge-{tag}-{k}\x00": k for k in ("reasoning", "content", "calls", "message_calls")
        }
        self._mark = {k: m for m, k in self._marks.items()}

    def add(self, delta: StreamDelta) -> None:
        if delta.reasoning:
            self.reasoning.add(delta.reasoning)
        if delta.content:
            self.content.add(delta.content)
        for d in delta.tool_calls:
            call = self._calls.get(d.index)
            if call is None:
                call = self._calls[d.index] = _Call()
            if call is not self._last:
                last = self._last
                if last is not None and len(last.parts) > 1:
                    last.parts = ["".join(last.parts)]
                self._last = call
            if d.id is not None:
                call.id = d.id
            if d.name is not None:
                call.name = d.name
            if d.arguments:
                call.parts.append(d.arguments)

    @property
    def call_count(self) -> int:
        return len(self._calls)

    def calls(self) -> Iterator[ToolCall]:
        """The calls in index order, each made as it is asked for."""
        raws = itertools.chain(self._raw, itertools.repeat(""))
        for _, c in sorted(self._calls.items()):
            yield make_tool_call(c.name or "", "".join(c.parts), c.id, next(raws))

    def result(self, block: ReasoningBlock | None, raw_texts: Sequence[str] = ()) -> ParseResult:
        """The result without its calls (see `calls`); reasoning and content are placeholders
        that `write_json` fills. `raw_texts`: each call's raw text, in call order, where the
        tool stream reported them."""
        self._raw = raw_texts
        reasoning = None if self.reasoning.empty else self._mark["reasoning"]
        if block is not None and reasoning is not None:
            block = block.model_copy(update={"content": reasoning})
        return ParseResult(
            reasoning=reasoning,
            content=None if self.content.empty else self._mark["content"],
            block=block,
        )

    def result_json(self, result: ParseResult) -> dict[str, Any]:
        """`result.model_dump(mode="json")` with its calls as a placeholder (`write_json`)."""
        out = result.model_dump(mode="json")
        if self._calls:
            out["tool_calls"] = self._mark["calls"]
        return out

    def message_json(self, result: ParseResult) -> dict[str, Any]:
        """`result.to_openai_message()` with its calls as a placeholder (`write_json`)."""
        out = result.to_openai_message()
        if self._calls:
            out["tool_calls"] = self._mark["message_calls"]
        return out

    def write_json(self, out: IO[str], obj: Any, prefix: str = "\n  ") -> None:
        """`obj` (`result_json`, `message_json`) as JSON indented by 2, nested one level in the
        output; placeholders become the spools' text and the calls, written one by one."""
        marks = {_escape(m): k for m, k in self._marks.items()}
        for piece in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(obj):
            key = marks.get(piece)
            if key in ("reasoning", "content"):
                getattr(self, key).write_json(out)
            elif key is not None:
                self._write_calls(out, key == "calls", prefix)
            else:
                out.write(piece.replace("\n", prefix) if "\n" in piece else piece)

    def _write_calls(self, out: IO[str], dumped: bool, prefix: str) -> None:
        """The list of calls, as the encoder would write it one level into `obj`."""
        encode = json.JSONEncoder(indent=2, ensure_ascii=False).encode
        item = prefix + "    "
        out.write("[")
        for i, call in enumerate(self.calls()):
            text = encode(call.model_dump(mode="json") if dumped else call.to_openai())
            out.write(("," if i else "") + item + text.replace("\n", item))
        out.write(prefix + "  ]")

    def text_of(self, value: str | None) -> Spool | str | None:
        """The spool a placeholder stands for (else the value itself)."""
        key = self._marks.get(value or "")
        return getattr(self, key) if key else value

    def close(self) -> None:
        self.reasoning.close()
        self.content.close()


def delta_line(delta: StreamDelta) -> str:
    """`delta.to_openai()` as compact JSON; the common one-field deltas written directly."""
    if not delta.tool_calls:
        if not delta.reasoning:
            return '{"content": ' + _string(delta.content) + "}"
        if not delta.content:
            return '{"reasoning_content": ' + _string(delta.reasoning) + "}"
    return _escape(delta.to_openai())

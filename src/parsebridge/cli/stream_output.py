"""`parsebridge parse --stream` in bounded memory: deltas printed as they come, the result spooled.

A stream's `finish()` assembles everything streamed, so it holds the whole
output (as one small string per delta: ~15x the text at 4-character
chunks). The CLI needs each delta once, to print it, and the assembled
result once, at the end. So its stream is made `without_history()`, and
`StreamedResult` keeps what the result needs: reasoning and content text
in temporary files (in memory up to `SPOOL_IN_MEMORY`, on disk past it),
and each finished call's id, name, arguments and raw text as a JSON line in
one too (`LineSpool`), so what stays in memory is bounded by the largest
call and chunk, not by the output. The result is written from those files
block by block, never joined into one string.
"""

from __future__ import annotations

import heapq
import io
import itertools
import json
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ..protocol import ParseResult, StreamDelta
from ..protocol.models import ReasoningBlock, ToolCall, make_tool_call
from ..protocol.surrogates import escape_lone_surrogates

#: Text kept in memory per spool before it moves to a temporary file.
SPOOL_IN_MEMORY = 1 << 18
#: Bytes of input read and decoded at a time (`terminal.iter_text`'s block is 1 MiB): with the
#: spools', the memory that is the same at any size of output.
READ_BLOCK = 1 << 18
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
                max_size=SPOOL_IN_MEMORY, mode="w+", encoding="utf-8", errors="surrogatepass", newline=""
            )  # (surrogatepass: a lone surrogate a parser kept is text to spool like any other)
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


class JsonWriter:
    """JSON text written on to `out`, each lone surrogate a parser kept (from a model's JSON escape
    such as ``\\ud800``) written as that escape: the same JSON, and encodable (`protocol.surrogates`)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(escape_lone_surrogates(text))

    def flush(self) -> None:
        self.out.flush()


class StreamedJson:
    """`parse --stream --json`'s one JSON object, written as the stream goes: ``deltas`` as they
    come, then ``result`` and ``message``, or, when the stream fails part way (a parser that
    raises under ``--on-error raise``, input that turns out not to be UTF-8, Ctrl-C), ``error``:
    ``{"type", "message"}`` in place of those two. Either way the object is ended, so stdout is
    JSON whatever happened; the error is then raised on (stderr and the exit status as ever)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = JsonWriter(out)
        self.deltas = 0
        self.out.write('{\n  "deltas": [')

    def delta(self, delta: StreamDelta) -> None:
        self.out.write(("\n    " if not self.deltas else ",\n    ") + delta_line(delta))
        self.deltas += 1

    def _end_deltas(self) -> None:
        self.out.write("\n  ],\n" if self.deltas else "],\n")

    def result(self, collected: StreamedResult, result: ParseResult) -> None:
        self._end_deltas()
        self.out.write('  "result": ')
        collected.write_json(self.out, collected.result_json(result))  # type: ignore[arg-type]
        self.out.write(',\n  "message": ')
        collected.write_json(self.out, collected.message_json(result))  # type: ignore[arg-type]
        self.out.write("\n}\n")

    def failed(self, exc: BaseException) -> None:
        self._end_deltas()
        said = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else str(exc)
        error = {"type": type(exc).__name__, "message": said}
        self.out.write('  "error": ' + _escape(error) + "\n}\n")
        self.out.flush()


class LineSpool:
    """Values appended one at a time and read back in order: JSON lines in a `Spool`."""

    def __init__(self) -> None:
        self._spool = Spool()
        self._count = 0

    def append(self, value: Any) -> None:
        self._spool.add(_escape(value) + "\n")  # JSON escapes a newline inside a string
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        rest = ""
        for block in self._spool.blocks():
            lines = (rest + block).split("\n")
            rest = lines.pop()
            for line in lines:
                yield json.loads(line)

    def close(self) -> None:
        self._spool.close()


class RawCalls:
    """A tool stream, observed: the raw text of each call it finds, as `parse` gives it.

    Works with a stream that reports its calls' spans (`call_spans`, offsets in the text it
    was fed) and how far back a call found later may start (`open_from()`): the builtin
    streams. The fed text is kept only from there on, and each call's span is let go once its
    raw text is spooled (`release_calls()`, where the stream has it), so memory stays bounded
    by the longest call, not by the number of calls. Other streams pass through, and their
    calls keep an empty `raw_text`.
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        #: Each call's raw text, in call order (spooled: the list would grow with the output).
        self.texts = LineSpool()
        self._spans = getattr(stream, "call_spans", None)
        self._open_from = getattr(stream, "open_from", None)
        self._release = getattr(stream, "release_calls", None)
        self._cut = 0  # spans in `_spans` whose raw text is spooled
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
            if len(spans) != self._cut or self._fed - self._kept_at > TRIM_EVERY:
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
        if self._cut < len(spans):
            kept = "".join(self._kept)
            self._kept = [kept]
            for start, end in spans[self._cut :]:
                self.texts.append(kept[start - self._kept_at : end - self._kept_at])
            self._cut = len(spans)
            if self._release is not None:  # spooled: the stream may forget the spans
                self._cut -= self._release()
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
    arguments and all) is made when it is written, one at a time. A call is finished when
    a call with a higher index starts: it then goes to a `LineSpool` (index, id, name,
    arguments), so only the open call stays in memory. A delta for a call already spooled
    (a stream that went back to an earlier index) is kept beside it and merged when read.
    """

    def __init__(self) -> None:
        self.reasoning = Spool()
        self.content = Spool()
        self._calls: dict[int, _Call] = {}
        self._done = LineSpool()
        self._done_below = 0  # every call with a lower index is spooled (or later in `_late`)
        self._late: dict[int, _Call] = {}
        self._count = 0
        self._last: _Call | None = None
        self._raw: Iterable[str] = ()
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
            call = self._call(d.index)
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

    def _call(self, index: int) -> _Call:
        """The open call at `index`; a new index finishes (spools) the open calls below it."""
        call = self._calls.get(index)
        if call is not None:
            return call
        if index < self._done_below:  # a spooled call's index again: kept beside it
            call = self._late.get(index)
            if call is None:
                call = self._late[index] = _Call()
            return call
        for i in sorted(i for i in self._calls if i < index):
            done = self._calls.pop(i)
            self._done.append([i, done.id, done.name, "".join(done.parts)])
        self._done_below = index
        self._count += 1
        call = self._calls[index] = _Call()
        return call

    @property
    def call_count(self) -> int:
        return self._count + len(self._unspooled_late())

    def _unspooled_late(self) -> list[int]:
        """Late indices no spooled call has (a stream that started a lower index after a higher one)."""
        if not self._late:
            return []
        spooled = {row[0] for row in self._done}
        return [i for i in self._late if i not in spooled]

    def calls(self) -> Iterator[ToolCall]:
        """The calls in index order, each made as it is asked for."""
        raws = itertools.chain(self._raw, itertools.repeat(""))
        for index, cid, name, args in self._calls_in_order():
            late = self._late.get(index)
            if late is not None:
                cid, name, args = late.id or cid, late.name or name, args + "".join(late.parts)
            yield make_tool_call(name or "", args, cid, next(raws))

    def _calls_in_order(self) -> Iterator[tuple[int, str | None, str | None, str]]:
        """Spooled calls (in index order) merged with the open ones and unspooled late ones."""
        extra = [(i, c.id, c.name, "".join(c.parts)) for i, c in self._calls.items()]
        extra += [(i, None, None, "") for i in self._unspooled_late()]
        spooled = (tuple(row) for row in self._done)
        yield from heapq.merge(spooled, sorted(extra), key=lambda row: row[0])  # type: ignore[arg-type]

    def result(self, block: ReasoningBlock | None, raw_texts: Iterable[str] = ()) -> ParseResult:
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
        if self._count:
            out["tool_calls"] = self._mark["calls"]
        return out

    def message_json(self, result: ParseResult) -> dict[str, Any]:
        """`result.to_openai_message()` with its calls as a placeholder (`write_json`)."""
        out = result.to_openai_message()
        if self._count:
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
        self._done.close()
        close = getattr(self._raw, "close", None)
        if callable(close):
            close()


def delta_line(delta: StreamDelta) -> str:
    """`delta.to_openai()` as compact JSON; the common one-field deltas written directly."""
    if not delta.tool_calls:
        if not delta.reasoning:
            return '{"content": ' + _string(delta.content) + "}"
        if not delta.content:
            return '{"reasoning_content": ' + _string(delta.reasoning) + "}"
    return _escape(delta.to_openai())

"""`release_calls()`: a builtin tool stream forgets the spans of its ended calls (issue 40 item 14).

The CLI's `parse --stream` cuts each call's raw text out of the text it fed and then lets the
stream forget the span, so what the stream keeps does not grow with the number of calls. The
method changes nothing a caller reads: made without history, the deltas are those of a stream
that never releases; made with history, nothing is forgotten and `finish()` is field for field
what it is without a release.
"""

from __future__ import annotations

from typing import Any

import parsebridge as pb
from _builtin_cases import builtin_tool_cases
from parsebridge.protocol.streams import without_history


def _without_ids(dumped: Any) -> Any:
    """A dump with every call id blanked (ids are random per stream)."""
    if isinstance(dumped, dict):
        return {k: (None if k == "id" else _without_ids(v)) for k, v in dumped.items()}
    if isinstance(dumped, list):
        return [_without_ids(v) for v in dumped]
    return dumped


def _run(spec: str, text: str, size: int, release: bool) -> tuple[list[Any], Any, int, int]:
    """Feed `text` in chunks of `size`, releasing after every chunk when asked: (the deltas, the
    finish() dump, calls released, the most spans the stream held after a chunk)."""
    stream = pb.get_tool_parser(spec).stream()
    deltas, released, most = [], 0, 0
    for piece in [text[i : i + size] for i in range(0, len(text), size)]:
        deltas.append(_without_ids(stream.feed(piece).to_openai()))
        if release and hasattr(stream, "release_calls"):
            released += stream.release_calls()
        most = max(most, len(getattr(stream, "call_spans", ())))
    deltas.append(_without_ids(stream.flush().to_openai()))
    return deltas, _without_ids(stream.finish().model_dump()), released, most


def test_without_history_the_spans_are_let_go_and_the_deltas_unchanged() -> None:
    released = 0
    for spec, text in builtin_tool_cases():
        for size in (1, 5):
            with without_history():
                kept = _run(spec, text, size, release=False)
                let_go = _run(spec, text, size, release=True)
            assert let_go[0] == kept[0], (spec, size, text)
            assert let_go[1] == kept[1], (spec, size, text)  # (no history: nothing to read)
            assert let_go[3] <= 1, (spec, size, text)  # at most the call that ended in this chunk
            released += let_go[2]
    assert released > 100


def test_with_history_nothing_is_forgotten_and_finish_is_unchanged() -> None:
    for spec, text in builtin_tool_cases():
        kept = _run(spec, text, 3, release=False)
        released = _run(spec, text, 3, release=True)
        assert released[2] == 0
        assert released[:2] == kept[:2], (spec, text)
        want = pb.get_tool_parser(spec).parse(text)
        assert [c["raw_text"] for c in released[1]["tool_calls"]] == [c.raw_text for c in want.tool_calls]


def test_a_guarded_stream_passes_release_calls_through() -> None:
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    parser = pb.get_tool_parser("builtin:hermes", on_error="fallback")
    with without_history():
        stream = parser.stream()
    assert type(stream).__name__ == "GuardedToolStream"  # (not the builtin stream itself)
    stream.feed(f"a {call} b {call} c")
    assert len(stream.call_spans) == 2
    assert stream.release_calls() == 2 and stream.call_spans == []
    stream.feed(f" {call}")
    assert len(stream.call_spans) == 1


def test_the_cli_recorder_cuts_the_same_raw_texts_with_history() -> None:
    """A stream made with history (the CLI beside a framework reasoning parser) keeps its spans:
    the recorder, told 0 were forgotten, cuts each call once, as `parse` does."""
    from parsebridge.cli.stream_output import RawCalls

    checked = 0
    for spec, text in builtin_tool_cases():
        parser = pb.get_tool_parser(spec)
        rec = RawCalls(parser.stream())
        for i in range(0, len(text), 4):
            rec.feed(text[i : i + 4])
        rec.flush()
        assert list(rec.texts) == [c.raw_text for c in parser.parse(text).tool_calls], (spec, text)
        checked += len(rec.texts)
    assert checked > 100

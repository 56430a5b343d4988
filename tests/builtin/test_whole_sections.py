"""conventions="servers" for Step-3: a call section is read only once it is closed, and only the first (issue 39).

vLLM 0.33 and SGLang 0.5.23 read a Step-3 call section one-shot only when ``<｜tool_calls_end｜>``
closes it: an unclosed section, cut off anywhere (even right after a complete call), is shown
verbatim as content, and a section after the first is content verbatim (the consensus check, 36
cases). Their streams announce the calls as they go; builtin's stream holds a section's calls
until the section closes, so it never shows what its final reading takes back. Under
"lossless" nothing changes: a cut-off call is kept, flagged, and every section is read.
"""

from __future__ import annotations

from typing import Any

import pytest

import parsebridge as pb
from parsebridge.protocol.streams import without_history

CALLS_BEGIN, CALLS_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL1 = (
    "<｜tool_call_begin｜>function<｜tool_sep｜>"
    '<steptml:invoke name="get_weather"><steptml:parameter name="location">Paris</steptml:parameter>'
    "</steptml:invoke><｜tool_call_end｜>"
)
CALL2 = (
    "<｜tool_call_begin｜>function<｜tool_sep｜>"
    '<steptml:invoke name="get_time"><steptml:parameter name="tz">UTC</steptml:parameter>'
    "</steptml:invoke><｜tool_call_end｜>"
)
BEFORE = "Let me check. "
OPEN = BEFORE + CALLS_BEGIN + CALL1 + CALL2  # (the section's end marker missing)
DONE = OPEN + CALLS_END
SECOND = "\nAnd the time:\n" + CALLS_BEGIN + CALL2 + CALLS_END


def _full(result: Any) -> tuple[Any, ...]:
    """A result field for field (ids aside: they differ between runs)."""
    calls = [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in result.tool_calls]
    return result.content, result.dropped, calls


def _stream(text: str, size: int, **kw: Any) -> tuple[list[int], Any]:
    """Feed `text` in chunks of `size`; the offsets (fed so far) at which a call delta came, and the result."""
    stream = pb.get_tool_parser("builtin:step3", **kw).stream()
    at = []
    for i in range(0, len(text), size):
        if stream.feed(text[i : i + size]).tool_calls:
            at.append(min(i + size, len(text)))
    if stream.flush().tool_calls:
        at.append(len(text))
    return at, stream.finish()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize(
    "text",
    [BEFORE + CALLS_BEGIN + CALL1, OPEN, OPEN + "<｜tool_c", OPEN[:-20]],
    ids=["after-a-complete-call", "missing-end", "end-marker-cut", "cut-in-a-call"],
)
def test_an_unclosed_section_is_content_verbatim_and_never_announced(text: str, size: int) -> None:
    at, result = _stream(text, size)
    assert at == []
    assert _full(result) == (text, None, [])
    assert _full(pb.get_tool_parser("builtin:step3").parse(text)) == _full(result)


def test_every_cut_of_an_unclosed_section_is_content() -> None:
    parser = pb.get_tool_parser("builtin:step3")
    for end in range(len(BEFORE) + 1, len(DONE)):
        result = parser.parse(DONE[:end])
        assert _full(result) == (DONE[:end], None, []), end


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_closed_section_is_announced_at_its_end_marker(size: int) -> None:
    at, result = _stream(DONE + " Done.", size)
    assert at and min(len(DONE), at[0]) > len(DONE) - size  # (in the chunk that completes the end marker)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("get_weather", {"location": "Paris"}),
        ("get_time", {"tz": "UTC"}),
    ]
    assert result.content == BEFORE + " Done."
    assert _full(pb.get_tool_parser("builtin:step3").parse(DONE + " Done.")) == _full(result)


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_a_second_section_is_content_verbatim(size: int) -> None:
    at, result = _stream(DONE + SECOND, size)
    assert at and len(DONE) <= min(at) and max(at) < len(DONE) + size  # (the first section's, at its end)
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_time"]
    assert result.content == BEFORE + SECOND and result.dropped is None
    lossless = pb.get_tool_parser("builtin:step3", conventions="lossless").parse(DONE + SECOND)
    assert [c.name for c in lossless.tool_calls] == ["get_weather", "get_time", "get_time"]


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
@pytest.mark.parametrize("text", [DONE, OPEN, OPEN[:-7], DONE + SECOND, OPEN[:150] + "x", DONE + SECOND[:-9]])
def test_every_chunking_equals_the_one_shot_reading(text: str, conventions: str) -> None:
    parser = pb.get_tool_parser("builtin:step3", conventions=conventions)
    one = _full(parser.parse(text))
    for size in range(1, len(text) + 1, 1 if len(text) < 80 else 3):
        assert _full(_stream(text, size, conventions=conventions)[1]) == one, size
    for cut in range(1, len(text)):  # (two chunks, cut anywhere)
        stream = parser.stream()
        stream.feed(text[:cut])
        stream.feed(text[cut:])
        assert _full(stream.finish()) == one, cut


def test_lossless_keeps_the_whole_call_and_reads_the_cut_off_one_as_text() -> None:
    text = OPEN[: OPEN.index("UTC") + 3]
    at, result = _stream(text, 1, conventions="lossless")
    assert len(at) == 1  # the first call, once whole; never the cut-off second (`whole_calls`)
    assert [c.name for c in result.tool_calls] == ["get_weather"]
    assert result.content.startswith(BEFORE) and text.endswith(result.content[len(BEFORE) :].lstrip())


def test_a_stream_without_history_shows_the_cut_off_section() -> None:
    with without_history():
        stream = pb.get_tool_parser("builtin:step3").stream()
        shown = "".join(stream.feed(OPEN[i : i + 5]).content or "" for i in range(0, len(OPEN), 5))
        shown += stream.flush().content or ""
        assert stream.call_spans == []  # (the section's calls never showed: no span either)
    assert shown == OPEN


def test_a_held_section_is_held_text() -> None:
    """What a stream shows plus what it says it holds back is the text fed, chunk after chunk: the guard's
    `max_held` counts a held section, and a break releases it."""
    stream = pb.get_tool_parser("builtin:step3").stream()
    shown = ""
    for i in range(0, len(OPEN), 4):
        shown += stream.feed(OPEN[i : i + 4]).content or ""
        assert shown + stream.pending_text() == OPEN[: i + 4], i
    guarded = pb.get_tool_parser("builtin:step3", max_held=40, on_error="fallback").stream()
    text = "".join(guarded.feed(OPEN[i : i + 4]).content or "" for i in range(0, len(OPEN), 4))
    assert text + (guarded.flush().content or "") == OPEN  # (over the limit: released as content)

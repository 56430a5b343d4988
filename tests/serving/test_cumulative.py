"""`OutputProcessor(cumulative=True)`: an engine that sends all its text so far at each step.

A detokenizer shows half a multi-byte character as U+FFFD and replaces it once the rest arrives
("ab\ufffd" then "abé"): the processor holds such a tail back, so the client gets the final
character, never the stand-in. Text the engine takes back once it was sent cannot be unsent:
under on_error="raise" that is a `StreamStateError` (the stream ends in-band with an error
event), under "fallback" a warning and the rest of the text from where the two differ.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from _convention import TOOLS, check_convention

from parsebridge import StreamDelta, StreamStateError, ToolParserBase, ToolParseResult, ToolStreamBase
from parsebridge.serving import EngineOutput, OutputProcessor

TAG = "python:pbserving_testparsers:TagTool"


def _steps_showing_stand_ins(text: str) -> list[str]:
    """Every prefix of `text` a character at a time, each non-ASCII character first shown as
    U+FFFD (its bytes arrive in two tokens): what a cumulative engine's detokenizer sends."""
    steps: list[str] = []
    for end in range(1, len(text) + 1):
        if not text[end - 1].isascii():
            steps.append(text[: end - 1] + "\ufffd")
        steps.append(text[:end])
    return steps


def _content(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)


def test_a_stand_in_the_engine_replaces_never_reaches_the_client(caplog: pytest.LogCaptureFixture) -> None:
    """The call's arguments and the content carry the final characters; a U+FFFD the engine
    still shows at the end of its output is its own, and is sent at finish."""
    output = 'Voilà <tool_call>{"name": "get_weather", "arguments": {"city": "Zürich 北京"}}</tool_call>'
    proc = OutputProcessor(None, TAG, tools=TOOLS, cumulative=True)
    stream = proc.stream()
    chunks: list[dict[str, Any]] = []
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        for step in [*_steps_showing_stand_ins(output), output + " ok\ufffd"]:
            chunks += stream.feed(step)
        chunks += stream.finish("stop")
    got = check_convention(chunks)
    assert got["tool_calls"][0]["arguments"] == {"city": "Zürich 北京"}
    assert _content(chunks) == "Voilà  ok\ufffd"
    assert not caplog.records


class _Recording(ToolParserBase):
    """Passes text through as content, and records what each feed was given."""

    name = "recording"

    def __init__(self) -> None:
        self.fed: list[tuple[str, list[int] | None]] = []

    def parse(self, text: str) -> ToolParseResult:
        return ToolParseResult(content=text)

    def stream(self) -> _RecordingStream:
        return _RecordingStream(self.fed)


class _RecordingStream(ToolStreamBase):
    def __init__(self, fed: list[tuple[str, list[int] | None]]) -> None:
        super().__init__()
        self.fed = fed

    def _feed(self, text: str, token_ids: Sequence[int] | None) -> StreamDelta:
        self.fed.append((text, None if token_ids is None else list(token_ids)))
        return StreamDelta(content=text)


def test_the_ids_of_a_held_step_go_on_at_once_and_its_text_with_the_rest() -> None:
    """As vLLM's server hands its parsers a step's ids while its detokenizer holds the text."""
    recording = _Recording()
    stream = OutputProcessor(None, recording, tools=TOOLS, cumulative=True).stream()
    for text, ids in [
        ("ab", [1, 2]),
        ("ab\ufffd", [1, 2, 3]),
        ("abé", [1, 2, 3, 4]),
        ("abé!", [1, 2, 3, 4, 5]),
    ]:
        stream.feed(text, ids)
    stream.finish("stop")
    assert recording.fed == [("ab", [1, 2]), ("", [3]), ("é", [4]), ("!", [5])]


#: Cumulative texts whose later step takes back something already sent: how many characters, where,
#: what the message shows, and what a client assembles under fallback.
REVISIONS = [
    (["abc", "abXd", "abXde"], 1, 2, "'c' became 'Xd'", "abcXde"),
    (["abc", "ab", "abcd"], 1, 2, "'c' became ''", "abccd"),
    (["ab\ufffdc", "abéc"], 2, 2, "'\ufffdc' became 'éc'", "ab\ufffdcéc"),
]
REVISED = ("steps", "taken_back", "offset", "said", "assembled")


@pytest.mark.parametrize(REVISED, REVISIONS)
def test_a_revision_of_sent_text_is_an_error_under_raise(
    steps: list[str], taken_back: int, offset: int, said: str, assembled: str
) -> None:
    stream = OutputProcessor(None, TAG, cumulative=True).stream(request_id="req-1")
    stream.feed(steps[0])
    with pytest.raises(StreamStateError) as caught:
        for step in steps[1:]:
            stream.feed(step)
    message = str(caught.value)
    assert f"request req-1: the cumulative text took back {taken_back} character(s) already sent" in message
    assert f"at offset {offset} ({said})" in message and "on_error='fallback'" in message


def test_a_revision_ends_an_sse_stream_with_an_error_event() -> None:
    stream = OutputProcessor(None, TAG, cumulative=True).stream()
    lines = list(stream.sse([EngineOutput("abc"), EngineOutput("abX")]))
    assert lines[-1] == "data: [DONE]\n\n"
    error = json.loads(lines[-2][len("data: ") :])["error"]
    assert error["type"] == "parser_error" and "took back 1 character(s)" in error["message"]


@pytest.mark.parametrize(REVISED, REVISIONS)
def test_under_fallback_a_revision_is_told_and_the_new_text_goes_on(
    steps: list[str],
    taken_back: int,
    offset: int,
    said: str,
    assembled: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client's text is the engine's last text with what it took back left in place: nothing
    the engine ends with is lost, and the warning says what was taken back."""
    stream = OutputProcessor(None, TAG, cumulative=True, on_error="fallback").stream()
    chunks: list[dict[str, Any]] = []
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        for step in steps:
            chunks += stream.feed(step)
        chunks += stream.finish("stop")
    assert _content(chunks) == assembled
    warning = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warning) == 1 and f"took back {taken_back} character(s) already sent" in warning[0]
    assert f"({said}); sent text cannot be unsent; kept it, and went on from offset {offset}" in warning[0]

"""The `answer` check against a recording server that answers what each test scripts: answers a
client could not read (a null message, content that is not a string, stream events that are not
chunk objects, a stream request answered with HTML or plain JSON) fail it with a sentence naming
what came. Each test answers the other mode rightly and checks that it passes, so the fixture
itself cannot be what fails."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
from pathlib import Path
from typing import Any

import pytest
from _probe_servers import Reply, json_reply, recording_server, run_probe, sse_reply, url_of

from parsebridge.cli.commands import main

CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
RIGHT_MESSAGE = {"role": "assistant", "content": None, "tool_calls": [CALL]}


def _message(message: Any, **choice: Any) -> Reply:
    return json_reply(
        {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls", **choice}]}
    )


def _chunk(delta: Any, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


RIGHT_CALL = {"index": 0, **CALL}
#: A right stream, and the same with `bad` events in the middle (a client reads the rest).
RIGHT_EVENTS = [_chunk({"role": "assistant", "content": ""}), _chunk({"tool_calls": [RIGHT_CALL]})]
END = _chunk({}, "tool_calls")


PASSED = {"status": "pass", "detail": ""}


def _stream_with(*bad: Any) -> Reply:
    return sse_reply(*RIGHT_EVENTS, *bad, END)


def _answer_check(replies: dict[str, Reply], recorders: list[http.server.HTTPServer]) -> dict[str, Any]:
    """Each mode's `answer` outcome for the single-call scenario, with both modes answered."""
    server, _ = recording_server(
        replies={"oneshot": _message(RIGHT_MESSAGE), "stream": _stream_with(), **replies}
    )
    recorders.append(server)
    code, report, err = run_probe("--base-url", url_of(server), "--model", "m", "--scenario", "single-call")
    assert report is not None and "Traceback" not in err, err
    assert code == (1 if report["summary"]["failed"] else 0)
    return {r["mode"]: r["checks"]["answer"] for r in report["results"]}


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (
            _message(None),
            "choice 0's message is null: a client expects an object with role, content and tool_calls",
        ),
        (json_reply({"choices": [{"index": 0, "finish_reason": "stop"}]}), "choice 0's message is missing"),
        (_message("hi"), 'choice 0\'s message is a string ("hi")'),
        (
            _message({"role": "assistant", "content": ["a", 1]}),
            'the message\'s content is an array (["a", 1]), not a string or null',
        ),
        (
            _message({**RIGHT_MESSAGE, "reasoning_content": {"text": "x"}}),
            "the message's reasoning_content is an object",
        ),
        (
            _message({**RIGHT_MESSAGE, "tool_calls": "get_weather"}),
            'tool_calls is a string ("get_weather"), not an array',
        ),
        (_message({**RIGHT_MESSAGE, "tool_calls": [CALL, 5]}), "tool call 1 is a number (5), not an object"),
        (
            _message({"role": "assistant", "tool_calls": [{"id": "c1", "function": "get_weather"}]}),
            "tool call 0's function is a string",
        ),
        (json_reply({"choices": {"0": {"message": RIGHT_MESSAGE}}}), "the answer's choices is an object"),
        (json_reply({"choices": [None]}), "choice 0 is null, not an object with a message"),
        (json_reply([1, 2, 3]), "the answer is an array ([1, 2, 3]), not a chat completion object"),
        ((200, "text/html", b"<html>hello</html>"), "the answer is not JSON: '<html>hello</html>'"),
        (
            _message({"role": "assistant", "content": "Tokyo \ud83c"}),
            "the message's content holds U+D83C, half of a UTF-16 surrogate pair and no character",
        ),
        (
            _message({**RIGHT_MESSAGE, "tool_calls": [{**CALL, "id": "c\udc00"}]}),
            "tool call 0's id holds U+DC00",
        ),
    ],
)
def test_a_one_shot_answer_a_client_cannot_read_fails(
    reply: Reply, said: str, recorders: list[http.server.HTTPServer]
) -> None:
    outcomes = _answer_check({"oneshot": reply}, recorders)
    assert outcomes["stream"] == PASSED
    assert outcomes["oneshot"]["status"] == "fail" and said in outcomes["oneshot"]["detail"], outcomes


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (_stream_with({"choices": "nope"}), 'event 3\'s choices is a string ("nope"), not an array'),
        (_stream_with([1]), "event 3 is an array ([1]), not a chunk object with choices"),
        (_stream_with(5), "event 3 is a number (5), not a chunk object with choices"),
        (
            _stream_with({"choices": [None, 5]}),
            "event 3's choice 0 is null, not an object with index and delta",
        ),
        (_stream_with({"choices": [None, 5]}), "event 3's choice 1 is a number (5)"),
        (_stream_with(_chunk(None)), "event 3's delta is null, not an object"),
        (_stream_with(_chunk({"content": ["a", 1]})), 'event 3\'s delta content is an array (["a", 1])'),
        (_stream_with(_chunk({"tool_calls": {"index": 0}})), "event 3's delta tool_calls is an object"),
        (
            _stream_with(_chunk({"tool_calls": [{"index": 0, "function": "x"}]})),
            "event 3's call 0 function is a string",
        ),
        (
            (200, "text/html", b"<html><body>Bad gateway</body></html>"),
            "the stream request was answered with a body that is not an event stream (text/html): "
            "'<html><body>Bad gateway</body></html>'; a client reads 'data: {chunk}' lines",
        ),
        (_message(RIGHT_MESSAGE), 'not an event stream (application/json): \'{"choices"'),
        (_stream_with(_chunk({"content": "\ud83c"})), "event 3's delta content holds U+D83C, half of a"),
        (
            _stream_with(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\udf38"}}]})),
            "event 3's call 0 function arguments holds U+DF38",
        ),
    ],
)
def test_a_stream_a_client_cannot_read_fails(
    reply: Reply, said: str, recorders: list[http.server.HTTPServer]
) -> None:
    outcomes = _answer_check({"stream": reply}, recorders)
    assert outcomes["oneshot"] == PASSED
    assert outcomes["stream"]["status"] == "fail" and said in outcomes["stream"]["detail"], outcomes


@pytest.mark.parametrize(
    "error",
    [
        {"error": {"message": "the parser failed", "code": 500}},
        {"object": "error", "message": "the parser failed", "type": "InternalServerError", "code": 500},
    ],
)
def test_an_error_event_is_named(error: dict[str, Any], recorders: list[http.server.HTTPServer]) -> None:
    """An error response's own shape as an event ({"object": "error", "message"}, no choices) was
    read as an empty chunk: the answer passed and only finish failed, with no word of the error."""
    outcome = _answer_check({"stream": sse_reply(*RIGHT_EVENTS, error)}, recorders)["stream"]
    assert outcome["status"] == "fail" and outcome["detail"].startswith("event 3 is an error: ")
    assert "the parser failed" in outcome["detail"], outcome


def test_a_stream_without_done_is_still_checked(recorders: list[http.server.HTTPServer]) -> None:
    """A missing [DONE] fails the answer check, and the rest of the stream (whole: the connection
    ended cleanly) is still checked. Before, every other check was skipped, so a call with no
    index in the same stream went unsaid."""
    no_index = _chunk({"tool_calls": [{k: v for k, v in RIGHT_CALL.items() if k != "index"}]})
    server, _ = recording_server(
        replies={
            "oneshot": _message(RIGHT_MESSAGE),
            "stream": sse_reply(RIGHT_EVENTS[0], no_index, END, done=False),
        }
    )
    recorders.append(server)
    code, report, err = run_probe("--base-url", url_of(server), "--model", "m", "--scenario", "single-call")
    stream = report["results"][1]["checks"]
    assert code == 1 and stream["answer"] == {
        "status": "fail",
        "detail": "the stream ended without [DONE]",
    }, err
    assert stream["index"]["status"] == "fail" and "with no index" in stream["index"]["detail"]
    assert stream["finish"]["status"] == stream["same-shape"]["status"] == "pass"


def test_many_malformed_events_are_counted_not_listed(recorders: list[http.server.HTTPServer]) -> None:
    outcome = _answer_check({"stream": _stream_with(*range(7))}, recorders)["stream"]
    assert outcome["detail"].count("not a chunk object") == 3 and outcome["detail"].endswith("(and 4 more)")


def test_a_body_that_is_not_an_event_stream_is_told_from_a_stream_cut_short(
    recorders: list[http.server.HTTPServer],
) -> None:
    """Comments and blank lines are an event stream's own: a stream of them, cut short, is one
    that ended without [DONE]; a plain-text body is not an event stream."""
    cut = b": keep-alive\n\n" + sse_reply(*RIGHT_EVENTS, done=False)[2]
    outcome = _answer_check({"stream": (200, "text/event-stream", cut)}, recorders)["stream"]
    assert outcome == {"status": "fail", "detail": "the stream ended without [DONE]"}
    text = (200, "text/plain", b"upstream timed out\n")
    outcome = _answer_check({"stream": text}, recorders)["stream"]
    assert "not an event stream (text/plain): 'upstream timed out'" in outcome["detail"], outcome


def _call_with(**fields: Any) -> dict[str, Any]:
    """CALL with `fields` replacing its id or its function's name (``name=``)."""
    name = fields.pop("name", CALL["function"]["name"])
    return {**CALL, **fields, "function": {**CALL["function"], "name": name}}


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (_call_with(id=5), "tool call 0's id is a number (5), not a string"),
        (_call_with(id=None), "tool call 0's id is null, not a string"),
        (_call_with(id=["c1"]), 'tool call 0\'s id is an array (["c1"]), not a string'),
        (_call_with(name=7), "tool call 0's function name is a number (7), not a string"),
        (_call_with(name=None), "tool call 0's function name is null, not a string"),
    ],
)
def test_a_one_shot_call_whose_id_or_name_is_not_a_string_fails(
    call: dict[str, Any], said: str, recorders: list[http.server.HTTPServer]
) -> None:
    """A client sends the id back as the next turn's tool_call_id and looks the name up: a number
    or null there is a broken answer, not one to pass after `str()`."""
    outcomes = _answer_check({"oneshot": _message({**RIGHT_MESSAGE, "tool_calls": [call]})}, recorders)
    assert outcomes["stream"] == PASSED
    assert outcomes["oneshot"]["status"] == "fail" and said in outcomes["oneshot"]["detail"], outcomes


@pytest.mark.parametrize(
    ("part", "said"),
    [
        ({**RIGHT_CALL, "id": 5}, "event 2's call 0 id is a number (5), not a string"),
        ({**RIGHT_CALL, "id": {"v": "c1"}}, "event 2's call 0 id is an object"),
        (
            {**RIGHT_CALL, "function": {"name": 7, "arguments": "{}"}},
            "event 2's call 0 function name is a number (7), not a string",
        ),
        (
            {**RIGHT_CALL, "function": {"name": False, "arguments": "{}"}},
            "event 2's call 0 function name is a boolean (false), not a string",
        ),
    ],
)
def test_a_streamed_call_whose_id_or_name_is_not_a_string_fails(
    part: dict[str, Any], said: str, recorders: list[http.server.HTTPServer]
) -> None:
    """In a stream a null id or name is how a later delta says "none here" (clients skip it); any
    other value that is not a string is named."""
    reply = sse_reply(RIGHT_EVENTS[0], _chunk({"tool_calls": [part]}), END)
    outcomes = _answer_check({"stream": reply}, recorders)
    assert outcomes["oneshot"] == PASSED
    assert outcomes["stream"]["status"] == "fail" and said in outcomes["stream"]["detail"], outcomes
    later = {"index": 0, "id": None, "type": None, "function": {"name": None, "arguments": ""}}
    reply = sse_reply(*RIGHT_EVENTS, _chunk({"tool_calls": [later]}), END)
    assert _answer_check({"stream": reply}, recorders)["stream"] == PASSED


@pytest.mark.parametrize("ctype", ["application/json", "text/plain; charset=utf-8", ""])
def test_a_valid_event_stream_under_another_content_type_fails(
    ctype: str, recorders: list[http.server.HTTPServer]
) -> None:
    """A right body under the wrong type is not a stream everywhere: a browser's EventSource
    refuses it, and a proxy that streams only text/event-stream holds it back until it ends."""
    _, _, body = _stream_with()
    outcomes = _answer_check({"stream": (200, ctype, body)}, recorders)
    assert outcomes["oneshot"] == PASSED
    shown = f"Content-Type {ctype}" if ctype else "no Content-Type"
    said = (
        f"the stream came with {shown}, not text/event-stream: EventSource clients "
        "refuse it and proxies may hold it back whole"
    )
    assert outcomes["stream"] == {"status": "fail", "detail": said}, outcomes
    with_charset = (200, "Text/Event-Stream; charset=utf-8", body)
    assert _answer_check({"stream": with_charset}, recorders)["stream"] == PASSED


def _sse(*events: Any, separator: bytes) -> Reply:
    """Each event's JSON over ``data:`` lines (one per line of `json.dumps(indent=1)` when
    `separator` is a blank line; one line each, followed by just `separator`, otherwise)."""
    if separator == b"\n\n":
        parts = [json.dumps(e, indent=1).encode() for e in [*events, END]]
        body = b"".join(b"".join(b"data: " + ln + b"\n" for ln in p.split(b"\n")) + b"\n" for p in parts)
        return 200, "text/event-stream", body + b"data: [DONE]\n\n"
    body = b"".join(b"data: " + json.dumps(e).encode() + separator for e in [*events, END])
    return 200, "text/event-stream", body + b"data: [DONE]" + separator


def test_events_are_framed_as_an_sse_client_frames_them(recorders: list[http.server.HTTPServer]) -> None:
    """An event's data lines end at a blank line and are joined by a newline (the openai package's
    SSE decoder). Before, each data line was read as an event: an event whose JSON spans several
    data lines (valid SSE) failed as 'not JSON', and data lines with no blank line between them
    passed, though those clients read them as one event (no chunk at all, or a JSON error)."""
    spread = _sse(*RIGHT_EVENTS, separator=b"\n\n")
    assert _answer_check({"stream": spread}, recorders)["stream"] == PASSED
    _, _, lf = _stream_with()
    cr = (200, "text/event-stream", lf.replace(b"\n", b"\r"))  # (the SSE format's third line end)
    assert _answer_check({"stream": cr}, recorders)["stream"] == PASSED
    unseparated = _sse(*RIGHT_EVENTS, separator=b"\n")
    outcome = _answer_check({"stream": unseparated}, recorders)["stream"]
    assert outcome["status"] == "fail"
    assert outcome["detail"].startswith(
        "event 1 is not JSON (its 4 data lines had no blank line between them: an SSE client reads "
        "them as one event)"
    ), outcome


def test_a_lone_surrogate_is_written_out_not_a_crash(
    tmp_path: Path, recorders: list[http.server.HTTPServer]
) -> None:
    """UTF-8 output cannot hold a lone surrogate: --json crashed (exit 1, 'UnicodeEncodeError',
    no report) and so did --save. Now --json keeps it as its JSON escape, as the server sent it,
    and the saved transcript holds U+FFFD (compare refuses a record with a lone surrogate)."""
    content = "Tokyo \ud83c"
    logprobs = {"content": [{"token": "Tokyo", "bytes": list(b"Tokyo"), "logprob": 0.0}]}
    message = {"role": "assistant", "content": content}
    oneshot = json_reply(
        {"choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": logprobs}]}
    )
    stream = sse_reply(_chunk({"role": "assistant", "content": content}), _chunk({}, "stop"))
    server, _ = recording_server(replies={"oneshot": oneshot, "stream": stream})
    recorders.append(server)
    save = tmp_path / "probe.jsonl"
    args = ["probe", "--base-url", url_of(server), "--model", "m", "--scenario", "no-call", "--json"]
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--save", str(save)])
    out.flush()
    assert code == 1, err.getvalue()
    report = json.loads(out.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    assert [r["answer"]["content"] for r in report["results"]] == [content, content]
    saved = json.loads(save.read_text(encoding="utf-8"))
    assert saved["served"]["oneshot"]["content"] == saved["served"]["stream"]["content"] == "Tokyo \ufffd"

"""builtin:gpt_oss — harmony tool calls and reasoning, alone and chained, streaming equivalence."""

from __future__ import annotations

import json
from typing import Any

from _streaming import (
    EXAMPLES,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    json_args,
    max_held,
    names,
    norm,
    random_chunkings,
    split_at,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.gpt_oss import GptOssReasoningParser, GptOssToolParser
from parsebridge.formats.gpt_oss import (
    CALL,
    CHANNEL,
    CONSTRAIN,
    END,
    MESSAGE,
    NEXT,
    RETURN,
    START,
    read_header,
    render_analysis,
    render_call,
)
from parsebridge.protocol import Pipeline

T = GptOssToolParser(conventions="lossless")
R = GptOssReasoningParser()
MARKERS = (START, CHANNEL, MESSAGE, END, CALL, RETURN, CONSTRAIN)


def final(text: str, end: str = "") -> str:
    return f"{CHANNEL}final{MESSAGE}{text}{end}"


def check(text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]) -> None:
    result = assert_streams_like_oneshot(T, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def reasoning_stream(text: str, chunks: list[str]) -> tuple[str | None, str | None]:
    s = R.stream()
    for c in chunks:
        s.feed(c)
    got = s.finish()
    return got.reasoning, got.content


def check_reasoning(text: str, reasoning: str | None, content: str | None) -> None:
    one = R.parse(text)
    assert (one.reasoning, one.content) == (reasoning, content)
    for chunks in [list(text), *random_chunkings(text, seed=len(text))]:
        assert reasoning_stream(text, chunks) == (reasoning, content)


def test_read_header() -> None:
    assert read_header("<|channel|>analysis") == ("analysis", None)
    assert read_header("<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json") == (
        "commentary",
        "functions.f",
    )
    assert read_header("<|start|>assistant to=functions.g<|channel|>commentary json") == (
        "commentary",
        "functions.g",
    )
    assert read_header("<|start|>assistantß") is None
    assert read_header("<|channel|>final extra words") is None


def test_tool_calls_and_content() -> None:
    check(render_call("get", {"city": "Oslo"}), None, [("get", {"city": "Oslo"}, None)])
    two = render_analysis("r") + render_call("a", {"x": 1}) + NEXT + render_call("b", {})
    check(two, None, [("a", {"x": 1}, None), ("b", {}, None)])
    check(render_analysis("think") + final("Hello!", RETURN), "Hello!", [])
    check(
        f"{CHANNEL}commentary{MESSAGE}Working on it.{END}{NEXT}" + render_call("a", {}),
        "Working on it.",
        [("a", {}, None)],
    )
    # a built-in tool's recipient (browser, python): no function call, its message left out with
    # the header that names the tool
    header = f"{CHANNEL}commentary to=browser.search json{MESSAGE}"
    builtin_tool = header + '{"q": "x"}' + CALL
    check(builtin_tool, None, [])
    assert T.parse(builtin_tool).dropped == header + '{"q": "x"}'
    check(f"{CHANNEL}analysis to=python code{MESSAGE}print(1){CALL}", None, [])
    # the output opens inside the first header's role part (the prompt ended with <|start|>assistant)
    check(
        ' to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>', None, [("f", {"a": 1}, None)]
    )
    # a body's end marker inside a JSON string is text
    doc = '{"text": "end a call with <|call|>, a message with <|end|>"}'
    check(
        f"{CHANNEL}commentary to=functions.f json{MESSAGE}{doc}{CALL}", None, [("f", json.loads(doc), None)]
    )
    check("plain text", "plain text", [])


def test_call_closed_without_its_call_token() -> None:
    """``<|call|>`` is gpt-oss's stop token: a server that stops on it leaves it out of the text, so
    a call's body often ends the output right after its JSON object closes (Dynamo's parser tests
    keep such outputs). The object closed is the call closed (as Hermes's object is): a call, under
    both conventions, one-shot and streamed; a body cut off inside the object, or empty, is not."""
    head = f"{START}assistant{CHANNEL}commentary to=functions.get_weather {CONSTRAIN}json{MESSAGE}"
    for conv in ("servers", "lossless"):
        t = GptOssToolParser(conventions=conv)
        for text, content, calls in (
            (head + '{"location":"NYC"}', None, [("get_weather", {"location": "NYC"}, None)]),
            (head + '{"location":"NYC"}\n', None, [("get_weather", {"location": "NYC"}, None)]),
            (
                f"{CHANNEL}commentary to=functions.get_current_weather {CONSTRAIN}json{MESSAGE}"
                + '{"format":"celsius"}',
                None,
                [("get_current_weather", {"format": "celsius"}, None)],
            ),
            (head + '{"location":"NYC', head + '{"location":"NYC', []),
            (head, head, []),
            (head + " ", head + " ", []),
        ):
            result = assert_streams_like_oneshot(t, text, random_chunkings(text, seed=len(text)))
            assert norm(result) == (content, calls), (conv, text)


def test_tool_malformed_and_truncated() -> None:
    check(
        f"{CHANNEL}commentary to=functions.a json{MESSAGE}[1]{CALL}",
        "<|channel|>commentary to=functions.a json<|message|>[1]<|call|>",
        [],
    )
    check(
        f"{CHANNEL}commentary to=functions.a json{MESSAGE}" + '{"k": "v',
        '<|channel|>commentary to=functions.a json<|message|>{"k": "v',
        [],
    )
    cut = f"{CHANNEL}commentary to=functions.get_we"
    check(cut, cut, [])
    odd = f"{START}assistantß{MESSAGE}hi"
    check(odd, odd, [])
    check(END + CALL + "x", "x", [])
    assert T.format_tool_result("functions.get", {"t": 1}) == (
        '<|start|>functions.get to=assistant<|channel|>commentary<|message|>{"t": 1}<|end|>'
    )


def test_reasoning() -> None:
    check_reasoning(render_analysis("A") + final("B"), "A", "B")
    check_reasoning(f"{CHANNEL}analysis{MESSAGE}unclosed", "unclosed", None)
    check_reasoning(final("only", RETURN), None, "only")
    check_reasoning(
        render_analysis("one") + f"{CHANNEL}analysis{MESSAGE}two{END}" + final("c"), "one\ntwo", "c"
    )
    call = render_call("f", {"a": 1})
    check_reasoning(render_analysis("r") + call, "r", NEXT + call)
    assert R.spec == "builtin:gpt_oss"


def test_chained_pipeline() -> None:
    """Reasoning → tools: analysis is reasoning, the call survives the reasoning parser, final is content."""
    p = Pipeline(reasoning=GptOssReasoningParser(), tools=GptOssToolParser(conventions="lossless"))
    text = render_analysis("plan") + render_call("f", {"a": [1]}) + NEXT + final("done", RETURN)
    for chunks in [[text], list(text), *random_chunkings(text, seed=3)]:
        s = p.stream()
        for c in chunks:
            s.feed(c)
        got = s.finish()
        assert (got.reasoning, got.content, [(c.name, c.arguments) for c in got.tool_calls]) == (
            "plan",
            "done",
            [("f", {"a": [1]})],
        )


@st.composite
def harmony(draw: Any) -> str:
    parts = []
    for i in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["analysis", "final", "call", "preamble"]))
        head = "" if i == 0 else NEXT
        if kind == "analysis":
            parts.append(head + f"{CHANNEL}analysis{MESSAGE}{draw(st.text(max_size=8))}{END}")
        elif kind == "final":
            parts.append(head + final(draw(st.text(max_size=8)), draw(st.sampled_from([END, RETURN, ""]))))
        elif kind == "preamble":
            parts.append(head + f"{CHANNEL}commentary{MESSAGE}{draw(st.text(max_size=8))}{END}")
        else:
            parts.append(head + render_call(draw(names), draw(json_args())))
    return "".join(parts)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_tool_stream_equals_oneshot(data: st.DataObject) -> None:
    text = data.draw(harmony())
    assert_streams_like_oneshot(T, text, [data.draw(chunk_plan(text))])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_reasoning_stream_equals_oneshot(data: st.DataObject) -> None:
    text = data.draw(
        harmony()
        | st.lists(st.sampled_from([*MARKERS, "analysis", "final", " to=functions.f", "x"]), max_size=12).map(
            "".join
        )
    )
    one = R.parse(text)
    chunks = data.draw(chunk_plan(text))
    assert reasoning_stream(text, chunks) == (one.reasoning, one.content)
    assert reasoning_stream(text, list(text)) == (one.reasoning, one.content)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(data: st.DataObject) -> None:
    check_soup(T, data, (*MARKERS, "analysis", "final", "commentary", " to=functions.f", "json", NEXT))


def test_stream_holds_little() -> None:
    text = render_analysis("y" * 5000) + render_call("f", {"s": "x" * 20000}) + NEXT + final("z" * 5000)
    assert max_held(T, text) < 64
    s = R.stream()
    most = 0
    for piece in split_at(text, range(4, len(text), 4)):
        s.feed(piece)
        most = max(most, len(s.pending_text()))
    s.finish()
    assert most < 128  # a message header waits for <|message|>
    assert json.loads(json.dumps(T.parse(text).tool_calls[0].arguments)) == {"s": "x" * 20000}

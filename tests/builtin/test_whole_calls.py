"""Every builtin tool stream shows a call only once it is whole (`whole_calls`), under both conventions.

vLLM 0.33 and SGLang 0.5.23 announce Kimi K3's and MiniCPM 5's calls at their close, never
before, and read a call the end of output cuts off as text: MiniCPM 5's as content, Kimi K3's
left out with everything after the tools section's start (the consensus check, 35 cases).
Builtin's stream holds every call's deltas until it closes; at the end of output inside one,
the call's text is text: under "lossless" content, under "servers" content before the first
call and `dropped` after it.
"""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.protocol.streams import without_history

MINI = 'Let me check. <function name="get_weather"><param name="location">Paris</param>'
MINI_DONE = MINI + "</function>"
KIMI_CALL = (
    '<|open|>call tool="get_weather" index="1"<|sep|>'
    '<|open|>argument key="location" type="string"<|sep|>Paris<|close|>argument<|sep|>'
)
KIMI = "Let me check. <|open|>tools<|sep|>" + KIMI_CALL
KIMI_DONE = KIMI + "<|close|>call<|sep|>"


def _stream(spec: str, text: str, size: int, **kw: object) -> tuple[list[int], object]:
    """Feed `text` in chunks of `size`; the offsets (fed so far) at which a call delta came, and the result."""
    stream = pb.get_tool_parser(spec, **kw).stream()  # type: ignore[arg-type]
    at = []
    for i in range(0, len(text), size):
        if stream.feed(text[i : i + size]).tool_calls:
            at.append(min(i + size, len(text)))
    return at, stream.finish()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_minicpm5_cut_off_call_is_content_and_never_announced(size: int) -> None:
    at, result = _stream("builtin:minicpm5", MINI, size)
    assert at == []
    assert (result.content, result.tool_calls, result.dropped) == (MINI, [], None)  # type: ignore[attr-defined]
    assert pb.get_tool_parser("builtin:minicpm5").parse(MINI) == result


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_kimi_k3_cut_off_call_is_left_out_with_the_section(size: int) -> None:
    at, result = _stream("builtin:kimi_k3", KIMI, size)
    assert at == []
    assert result.content == "Let me check. "  # type: ignore[attr-defined]
    assert result.tool_calls == [] and result.dropped == KIMI[len("Let me check. ") :]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("spec", "text"), [("builtin:minicpm5", MINI_DONE), ("builtin:kimi_k3", KIMI_DONE)])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_complete_call_is_announced_at_its_close(spec: str, text: str, size: int) -> None:
    at, result = _stream(spec, text, size)
    closed_at = len(text) - len("<|sep|>") if spec.endswith("kimi_k3") else len(text)  # (the close's end)
    assert at and min(closed_at, at[0]) > closed_at - size  # (in the chunk that completes the close)
    (call,) = result.tool_calls  # type: ignore[attr-defined]
    assert (call.name, call.arguments) == ("get_weather", {"location": "Paris"})
    assert call.raw_text == pb.get_tool_parser(spec).parse(text).tool_calls[0].raw_text != ""


def test_a_second_call_cut_off_leaves_the_first() -> None:
    text = MINI_DONE + '<function name="get_time"><param name="tz">UTC'
    for size in (1, 4, 1000):
        _at, result = _stream("builtin:minicpm5", text, size)
        assert [c.name for c in result.tool_calls] == ["get_weather"]  # type: ignore[attr-defined]
        assert result.content == "Let me check. "  # type: ignore[attr-defined]
        assert result.dropped == text[len(MINI_DONE) :]  # type: ignore[attr-defined]  (after the first call)


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_lossless_reads_a_cut_off_call_as_content_too(size: int) -> None:
    at, result = _stream("builtin:minicpm5", MINI, size, conventions="lossless")
    assert at == []  # never announced
    assert (result.content, result.tool_calls, result.dropped) == (MINI, [], None)  # type: ignore[attr-defined]


def test_a_stream_without_history_shows_the_cut_off_text() -> None:
    with without_history():
        stream = pb.get_tool_parser("builtin:minicpm5").stream()
        shown = "".join(stream.feed(MINI[i : i + 5]).content or "" for i in range(0, len(MINI), 5))
        shown += stream.flush().content or ""
    assert shown == MINI


def test_minicpm5_call_to_an_undeclared_tool_is_content_under_servers() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    text = '<function name="no_such_tool"><param name="x">1</param></function>'
    result = pb.get_tool_parser("builtin:minicpm5", tools=tools).parse(text)
    assert (result.content, result.tool_calls) == (text, [])
    lossless = pb.get_tool_parser("builtin:minicpm5", tools=tools, conventions="lossless").parse(text)
    assert [c.name for c in lossless.tool_calls] == ["no_such_tool"]


GLM_FIRST = (
    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n"
)


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
@pytest.mark.parametrize("spec", ["builtin:glm45", "builtin:ling3", "builtin:poolside_v1"])
def test_glm_call_cut_off_before_its_first_parameter_is_no_call(spec: str, size: int) -> None:
    """Both servers read no call in ``…get_weather\\n<arg`` (vLLM 0.33, SGLang 0.5.23, one-shot)."""
    text = "Let me check. <tool_call>get_weather\n<arg"
    at, result = _stream(spec, text, size)
    assert at == [] and result.tool_calls == []  # type: ignore[attr-defined]
    assert (result.content, result.dropped) == ("Let me check. ", text[len("Let me check. ") :])  # type: ignore[attr-defined]
    at, result = _stream(spec, GLM_FIRST + "<tool_call>get_time\n<arg", size)
    assert [c.name for c in result.tool_calls] == ["get_weather"]  # type: ignore[attr-defined]
    assert result.dropped == "\n<tool_call>get_time\n<arg"  # type: ignore[attr-defined]


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_glm_call_cut_off_in_a_value_is_never_shown(conventions: str) -> None:
    """Both servers' streams show it from its first value on; builtin never shows a call it will
    not finish (`whole_calls`)."""
    text = "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Par"
    at, result = _stream("builtin:glm45", text, 1, conventions=conventions)
    assert at == [] and result.tool_calls == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_glm_block_after_a_doubled_start_is_no_call_under_servers(size: int) -> None:
    """Both servers read no call in ``<tool_call><tool_call>NAME…</tool_call>`` (glm45, glm47, ling3)."""
    text = "<tool_call>" + GLM_FIRST
    at, result = _stream("builtin:glm45", text, size)
    assert (at, result.content, result.tool_calls, result.dropped) == ([], None, [], text)  # type: ignore[attr-defined]
    _, lossless = _stream("builtin:glm45", text, size, conventions="lossless")
    assert [c.name for c in lossless.tool_calls] == ["get_weather"]  # type: ignore[attr-defined]


DS_CALL = (
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"location": "Paris"}\n```<｜tool▁call▁end｜>'
)
DS = "Let me check.<｜tool▁calls▁begin｜>" + DS_CALL
DS_TOKENS = [
    "Let",
    " me",
    " check.",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "function",
    "<｜tool▁sep｜>",
]
DS_TOKENS += [
    "get",
    "_weather",
    "\n",
    "```",
    "json",
    "\n",
    '{"',
    "location",
    '":',
    ' "',
    "Paris",
    '"}',
    "\n",
    "```",
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000, 0])
@pytest.mark.parametrize(
    "cut", [len(DS) - len('Paris"}\n```<｜tool▁call▁end｜>'), len(DS) - len("<｜tool▁call▁end｜>")]
)
def test_deepseek_v3_cut_off_call_is_never_announced_under_servers(size: int, cut: int) -> None:
    # (both servers' one-shot readings drop it; SGLang's stream never announces one cut in its arguments)
    text = DS[:cut]
    chunks = DS_TOKENS if size == 0 else [text[i : i + size] for i in range(0, len(text), size)]
    chunks = [c for c in chunks if c] if size else _token_prefix(chunks, text)
    stream = pb.get_tool_parser("builtin:deepseek_v3").stream()
    assert not any(stream.feed(c).tool_calls for c in chunks)
    result = stream.finish()
    assert (result.content, result.tool_calls, result.dropped) == (
        "Let me check.",
        [],
        text[len("Let me check.") :],
    )
    lossless = pb.get_tool_parser("builtin:deepseek_v3", conventions="lossless").parse(text)
    assert (lossless.content, lossless.tool_calls) == (text, [])
    v31 = pb.get_tool_parser("builtin:deepseek_v31").parse(text)  # (both servers' streams announce it)
    assert v31.tool_calls == []


def _token_prefix(tokens: list[str], text: str) -> list[str]:
    out, fed = [], ""
    for t in tokens:
        if len(fed + t) > len(text):
            break
        out.append(t)
        fed += t
    return out + ([text[len(fed) :]] if len(fed) < len(text) else [])


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_deepseek_v3_complete_call_is_shown_at_its_end_under_servers(size: int) -> None:
    at, result = _stream("builtin:deepseek_v3", DS, size)
    assert at == [len(DS)]
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"location": "Paris"})]
    tokens = [*DS_TOKENS, "<｜tool▁call▁end｜>"]
    stream = pb.get_tool_parser("builtin:deepseek_v3").stream()
    shown = [i for i, t in enumerate(tokens) if stream.feed(t).tool_calls]
    assert shown == [len(tokens) - 1]
    assert stream.finish().tool_calls[0].arguments == {"location": "Paris"}


# --- the rule over every builtin tool parser ------------------------------------------------------


def _cuts(text: str) -> list[str]:
    """The output and a few of its prefixes (the end of output anywhere: inside names, values, markers)."""
    step = max(1, len(text) // 6)
    return [text, *(text[:i] for i in range(step, len(text), step))]


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_no_builtin_parser_returns_a_call_that_is_not_whole(conventions: str) -> None:
    """Over the bundled tool fixtures, each cut at a few points: no call whose arguments are not a
    complete JSON object, one-shot or streamed at the default chunkings (`DEFAULT_CHUNKINGS`) and
    one character a chunk, and a
    stream announces no call its final reading does not hold."""
    from parsebridge.adapters.builtin import TOOL_PARSERS
    from parsebridge.conformance import DEFAULT_CHUNKINGS
    from parsebridge.conformance.chunking import parse_chunkings
    from parsebridge.conformance.transcripts import bundled_transcripts

    chunkings = [c for c in parse_chunkings(["char", *DEFAULT_CHUNKINGS]) if c.streamed]
    for t in bundled_transcripts(kinds=["tool"]):
        fam = t.resolve_family()
        name = fam.parser_for("builtin") if fam else None
        if name not in TOOL_PARSERS:
            continue
        parser = pb.get_tool_parser(f"builtin:{name}", tools=t.tools or None, conventions=conventions)
        for text in _cuts(t.output)[:: 1 if t.id.endswith(("cut", "truncated-args")) else 3]:
            one = parser.parse(text)
            assert all(c.invalid_arguments is None for c in one.tool_calls), (t.id, text)
            for chunking in chunkings[::4]:
                stream = parser.stream()
                announced = [
                    d for chunk in chunking.split(text, parser) for d in stream.feed(chunk.text).tool_calls
                ]
                announced += stream.flush().tool_calls
                got = stream.finish()
                assert [c.name for c in got.tool_calls] == [d.name for d in announced if d.name], (
                    t.id,
                    chunking.name,
                )
                assert all(c.invalid_arguments is None for c in got.tool_calls), (t.id, chunking.name)


STEP3_CALL = (
    '<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">'
    '<steptml:parameter name="location">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜>'
)


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_step3_second_call_cut_after_its_head_is_content_under_lossless(size: int) -> None:
    """Cut off right after the second call's head (``…function<｜tool_sep｜>``), that head is the
    text of a call that never came, as it is cut anywhere else: content under "lossless"."""
    head = "<｜tool_call_begin｜>function<｜tool_sep｜>"
    text = "<｜tool_calls_begin｜>" + STEP3_CALL + head
    at, result = _stream("builtin:step3", text, size, conventions="lossless")
    assert len(at) == 1
    assert [c.name for c in result.tool_calls] == ["get_weather"]  # type: ignore[attr-defined]
    assert (result.content, result.dropped) == (head, None)  # type: ignore[attr-defined]
    one = pb.get_tool_parser("builtin:step3", conventions="lossless").parse(text)
    assert (one.content, [c.arguments for c in one.tool_calls]) == (head, [{"location": "Paris"}])

"""conventions="servers" read as vLLM 0.33 and SGLang 0.5.23 both read these outputs (measured with the
consensus check, their one-shot readings and their streams alike); "lossless" keeps builtin's reading.
Each reading is checked again streamed at several chunkings (a stream finishes equal to its one-shot
result, field for field)."""

from __future__ import annotations

from typing import Any

import pytest

import parsebridge as pb

SIZES = (1, 2, 3, 5, 8, 13, 10_000)


def _tool_fields(r: Any) -> tuple[Any, ...]:
    calls = [(c.name, c.arguments, c.invalid_arguments, c.raw_text) for c in r.tool_calls]
    return r.content, calls, r.dropped


def _tool_reading(name: str, text: str, conventions: str) -> tuple[Any, ...]:
    tp = pb.get_tool_parser(f"builtin:{name}", conventions=conventions)
    one = _tool_fields(tp.parse(text))
    for size in SIZES:
        s = tp.stream()
        for i in range(0, len(text), size):
            s.feed(text[i : i + size])
        assert _tool_fields(s.finish()) == one, (name, conventions, size)
    return one


def _reasoning_reading(name: str, text: str, conventions: str) -> tuple[Any, ...]:
    rp = pb.get_reasoning_parser(f"builtin:{name}", conventions=conventions)
    r = rp.parse(text)
    for size in SIZES:
        s = rp.stream()
        for i in range(0, len(text), size):
            s.feed(text[i : i + size])
        f = s.finish()
        assert (f.reasoning, f.content, f.block) == (r.reasoning, r.content, r.block), (name, size)
    return r.reasoning, r.content


K3_THINK, K3_END = "<|open|>think<|sep|>", "<|close|>think<|sep|>"


def test_kimi_k3_servers_keep_a_repeated_opener_as_reasoning() -> None:
    text = K3_THINK + K3_THINK + "I should check the weather." + K3_END + "It is sunny."
    assert _reasoning_reading("kimi_k3", text, "servers") == (
        K3_THINK + "I should check the weather.",
        "It is sunny.",
    )
    assert _reasoning_reading("kimi_k3", text, "lossless") == ("I should check the weather.", "It is sunny.")


G4 = '<|tool_call>call:get_time{timezone <|"|>UTC<|"|>}<tool_call|>'


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_gemma4_malformed_arguments_are_no_call(conventions: str) -> None:
    """Both servers close the arguments read before a syntax error and return the call; builtin
    returns no call whose arguments do not parse, under either convention (`whole_calls`): its
    text is content (a reviewed divergence of the consensus check)."""
    assert _tool_reading("gemma4", G4, conventions) == (G4, [], None)


@pytest.mark.parametrize("args", ['{a:<|"|>x<|"|>, junk}', "{a:[1,]}", "{a:]}", "{a:[}", "{a:1,,b:2}", "{,}"])
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_gemma4_a_syntax_error_makes_no_call(args: str, conventions: str) -> None:
    text = "<|tool_call>call:f" + args + "<tool_call|>"
    assert _tool_reading("gemma4", text, conventions) == (text, [], None)


GC_SEP, GC_HEAD = "<|message_sep|>\n\n", "function call<|role_sep|>\n"
GC_A = GC_HEAD + '{"name": "a", "arguments": {"x": 1}}'
GC_B = GC_HEAD + '{"name": "b", "arguments": {}}'


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_gigachat3_message_sep_before_a_header_that_opens_no_call_stays_content(conventions: str) -> None:
    text = "Let me check. " + GC_SEP + GC_HEAD.rstrip()
    assert _tool_reading("gigachat3", text, conventions) == (text, [], None)


@pytest.mark.parametrize("between", ["\n", "\nAnd the time:\n"])
def test_gigachat3_servers_read_the_first_call_only(between: str) -> None:
    text = GC_SEP + GC_A + between + GC_SEP + GC_B
    assert _tool_reading("gigachat3", text, "servers") == (
        None,
        [("a", {"x": 1}, None, GC_A)],
        between + GC_SEP + GC_B,
    )
    lossless = _tool_reading("gigachat3", text, "lossless")
    assert lossless[1] == [("a", {"x": 1}, None, GC_A), ("b", {}, None, GC_B)]
    assert lossless[0] == (between if between.strip() else None)


def test_gigachat3_a_doubled_header_and_its_separator_stay_left_out_under_servers() -> None:
    text = GC_SEP + GC_HEAD.rstrip() + GC_A
    assert _tool_reading("gigachat3", text, "servers") == (
        None,
        [("a", {"x": 1}, None, GC_A)],
        GC_SEP + GC_HEAD.rstrip(),
    )


@pytest.mark.parametrize("before", ["", "Hi "])
def test_gigachat3_servers_show_a_header_without_its_separator_as_content(before: str) -> None:
    # (both servers' streams show it as content, and the call as a call)
    text = before + GC_A
    assert _tool_reading("gigachat3", text, "servers") == (
        before + GC_HEAD.rstrip(),
        [("a", {"x": 1}, None, GC_A)],
        None,
    )
    assert _tool_reading("gigachat3", text, "lossless") == (
        before or None,
        [("a", {"x": 1}, None, GC_A)],
        None,
    )
    text = before + "<|message_sep|>" + GC_A  # with its separator, the header is structure
    assert _tool_reading("gigachat3", text, "servers")[0] == (before or None)


@pytest.mark.parametrize("before", ["", "Hello "])
def test_mistral_a_start_marker_no_call_follows_ends_the_content_under_servers(before: str) -> None:
    """``[TOOL_CALLS]not json``: vLLM 0.33 shows no content (it returns a call named "not json",
    arguments ``{}``) and SGLang 0.5.23 none either (no call, the text left out), one-shot; so under
    "servers" the content ends at the marker ("content ends at the first start marker, whether a
    call follows or not") and the rest is on `dropped`, no call (a call that is not whole is none).
    "lossless" keeps it all as content. Checked for the lead's question (builtin vs the servers):
    builtin follows the rule, nothing to change."""
    text = before + "[TOOL_CALLS]not json"
    assert _tool_reading("mistral", text, "servers") == (before or None, [], "[TOOL_CALLS]not json")
    assert _tool_reading("mistral", text, "lossless") == (text, [], None)

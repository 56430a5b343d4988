"""``prompt=`` on parse/stream: taken, or refused typed before parsing (issue 40 item 2, issue 42).

The framework backends' side is in tests/serving/test_prompt_rule.py; here what needs no framework.
"""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.protocol.prompt_rule import PROMPT_RULES, prompt_rule, start_options
from parsebridge.serving import OutputProcessor

CHAT = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"


def test_the_rule_per_backend_is_written_once() -> None:
    assert PROMPT_RULES == {
        "builtin": "markers",
        "vllm": "token_ids",
        "sglang": "ignored",
        "dynamo": "rendered",
        "smg": "rendered",
    }
    assert prompt_rule("python") == "parser"


def test_a_parser_of_your_own_without_a_prompt_keyword_refuses_it_typed() -> None:
    rp = pb.get_reasoning_parser("python:_userparsers:Colon")
    for call in (lambda: rp.parse("a::b", prompt=CHAT), lambda: rp.stream(prompt=CHAT)):
        with pytest.raises(pb.UnsupportedOptionError, match="prompt") as info:
            call()
        assert not isinstance(info.value, pb.BackendError) and info.value.option == "prompt"
    with pytest.raises(pb.UnsupportedOptionError, match="prompt_token_ids"):
        pb.get_reasoning_parser("builtin:qwen3").parse("x", prompt_token_ids=[1, 2])


def test_the_refusal_holds_under_the_fallback_policy() -> None:
    """A usage error is not a parser failure: `on_error="fallback"` does not turn it into content."""
    rp = pb.get_reasoning_parser("python:_userparsers:Colon", on_error="fallback")
    with pytest.raises(pb.UnsupportedOptionError):
        rp.parse("a::b", prompt=CHAT)


def test_builtin_reads_the_prompts_last_marker() -> None:
    rp = pb.get_reasoning_parser("builtin:deepseek_r1")
    assert rp.parse("why</think>answer", prompt=CHAT + "<think>\n").reasoning == "why"
    assert rp.parse("answer", prompt=CHAT + "<think></think>").content == "answer"


def test_processor_reads_a_plain_prompt_as_saying_nothing() -> None:
    """A prompt without markers leaves the default: it used to read as "closed" for a parser that
    takes no prompt (the processor's own marker test returned False instead of None)."""
    proc = OutputProcessor("builtin:qwen3", None)
    out = proc.request(prompt=CHAT).parse("Sure.").result
    assert (out.reasoning, out.content) == ("Sure.", None)
    assert start_options(proc.reasoning_parser, None, True, CHAT + "<think></think>")[0] is None


def test_processor_request_flag_wins_over_the_prompt() -> None:
    proc = OutputProcessor("builtin:qwen3", None)
    out = proc.request(prompt=CHAT + "<think>\n", reasoning_started=False).parse("Sure.").result
    assert (out.reasoning, out.content) == (None, "Sure.")


def test_processor_with_a_parser_of_your_own_reads_markers_itself() -> None:
    class Think(pb.protocol.ReasoningParserBase):
        markers = ("<think>", "</think>")

        def parse(self, text: str, *, reasoning_started: bool | None = None) -> pb.ReasoningParseResult:
            if reasoning_started:
                return pb.ReasoningParseResult(reasoning=text)
            return pb.ReasoningParseResult(content=text)

    proc = OutputProcessor(Think(), None)
    assert proc.request(prompt=CHAT + "<think>\n").parse("x").result.reasoning == "x"
    assert proc.request(prompt=CHAT).parse("x").result.content == "x"


def test_prompt_ids_where_only_prompt_text_is_taken_say_so() -> None:
    """Builtin takes a prompt as text: its refusal of ``prompt_token_ids=`` said "its parse/stream
    take no prompt (pass reasoning_started=)", though ``prompt=`` works."""
    rp = pb.get_reasoning_parser("builtin:qwen3")
    assert rp.parse("a</think>b", prompt="<think>\n").reasoning == "a"
    with pytest.raises(pb.UnsupportedOptionError, match=r"as prompt= only \(decode the ids"):
        rp.parse("a</think>b", prompt_token_ids=[1, 2])


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_prompt_option_given_as_none_says_nothing(on_error: str) -> None:
    """``prompt_token_ids=None`` (a caller's unset default) went on to a builtin parser, whose
    parse takes ``prompt=`` only: BackendError, or under fallback the whole output as content with
    the reasoning lost. ``prompt=None`` did the same to a parser of your own that takes no prompt."""
    text = "<think>a</think>b"
    rp = pb.get_reasoning_parser("builtin:qwen3", on_error=on_error)
    read = rp.parse(text, prompt_token_ids=None)
    assert (read.reasoning, read.content) == ("a", "b")
    stream = rp.stream(prompt_token_ids=None)
    stream.feed(text)
    assert stream.finish().reasoning == "a"
    pipe = pb.get_pipeline("builtin:qwen3", "builtin:hermes", on_error=on_error)
    assert pipe.parse(text, prompt=None, prompt_token_ids=None).reasoning == "a"
    own = pb.get_reasoning_parser("python:_userparsers:Colon", on_error=on_error)
    assert own.parse("a::b", prompt=None).reasoning == own.parse("a::b").reasoning

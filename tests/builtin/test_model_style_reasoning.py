"""Reasoning written the way real models write it, read by builtin pipelines under both conventions.

A model reasoning about its own tool format names the tool marker as text (``I will emit a
<tool_call> block``) before it ends its reasoning and calls: the marker is reasoning's text there,
not the end of the reasoning, and the call after the end marker is read; one-shot, per character
and per approximate token alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.conformance.chunking import approximate_tokens

_HERMES_CALL = '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>'
_GLM_CALL = "<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>UTC</arg_value>\n</tool_call>"
_DSML_CALL = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_time">\n<｜DSML｜parameter name="timezone" string="true">'
    "UTC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)
#: Reasoning that names the tool marker as text, then ends and calls: (reasoning, tool parser, output, reasoning read).
TOOL_MARKER_IN_REASONING = [
    (
        "qwen3",
        "hermes",
        f"<think>I will emit a <tool_call> block.</think>\n\n{_HERMES_CALL}",
        "I will emit a <tool_call> block.",
    ),
    (
        "qwen3_thinking",
        "hermes",
        f"Wrap it in `<tool_call>` tags.\n</think>\n\n{_HERMES_CALL}",
        "Wrap it in `<tool_call>` tags.\n",
    ),
    ("glm45", "glm45", f"<think>Use <tool_call> next.</think>\n{_GLM_CALL}", "Use <tool_call> next."),
    (
        "deepseek_v4",
        "deepseek_v4",
        f"I need <｜DSML｜tool_calls> here.</think>\n\n{_DSML_CALL}",
        "I need <｜DSML｜tool_calls> here.",
    ),
]


def _streamed(pipe: Any, text: str) -> Iterator[Any]:
    """The finished results of `text` streamed through `pipe` a character and a token at a time."""
    for chunks in (list(text), approximate_tokens(text)):
        stream = pipe.stream()
        for chunk in chunks:
            stream.feed(chunk)
        yield stream.finish()


@pytest.mark.parametrize(("reasoning", "tool", "text", "thought"), TOOL_MARKER_IN_REASONING)
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_a_tool_marker_written_in_reasoning_is_reasoning(
    reasoning: str, tool: str, text: str, thought: str, conventions: str
) -> None:
    """A tool marker ends reasoning where a call's start follows it; written as text (vLLM ends the
    reasoning there and shows the rest, `</think>` included, as content; SGLang, where an end marker
    follows, reads it as reasoning), it is reasoning's text, and the call after `</think>` is read."""
    pipe = pb.get_pipeline(f"builtin:{reasoning}", f"builtin:{tool}", conventions=conventions)
    one = pipe.parse(text)
    assert (one.reasoning, [(c.name, c.arguments) for c in one.tool_calls]) == (
        thought,
        [("get_time", {"timezone": "UTC"})],
    )
    assert "</think>" not in (one.content or "")
    for done in _streamed(pipe, text):
        assert (done.reasoning, done.content, done.tool_calls[0].arguments) == (
            one.reasoning,
            one.content,
            {"timezone": "UTC"},
        )


_CLOSE_DOC = "Close with {end} here."
#: A call after reasoning ended whose value names the reasoning's end marker, in tool sections that
#: do not end reasoning (no `closers`): (reasoning, tool parser, output, end marker in the value).
END_MARKER_IN_A_CALL = [
    (
        "mistral",
        "mistral",
        '[THINK]plan[/THINK]Sure.[TOOL_CALLS]write_file[ARGS]{"path": "a.md", "content": "Close with [/THINK] here."}',
        "[/THINK]",
    ),
    (
        "gemma4",
        "gemma4",
        '<|channel>thought\nplan<channel|>Sure.<|tool_call>call:write_file{content:<|"|>Close with <channel|> here.'
        '<|"|>,path:<|"|>a.md<|"|>}<tool_call|>',
        "<channel|>",
    ),
    (
        "qwen3",
        "qwen3_coder",
        "<think>plan</think>Sure.\n<function=write_file>\n<parameter=path>\na.md\n</parameter>\n"
        "<parameter=content>\nClose with </think> here.\n</parameter>\n</function>",
        "</think>",
    ),
    (
        "mimo",
        "dots",
        '<think>plan</think>Sure.<dots_function_call>\n<invoke name="write_file">\n<parameter name="path">a.md'
        '</parameter>\n<parameter name="content">Close with </think> here.</parameter>\n</invoke>\n</dots_function_call>',
        "</think>",
    ),
    (
        "mimo",
        "internlm",
        '<think>plan</think>Sure.<|action_start|><|plugin|>\n{"name": "write_file", "parameters": '
        '{"path": "a.md", "content": "Close with </think> here."}}<|action_end|>',
        "</think>",
    ),
]


@pytest.mark.parametrize(("reasoning", "tool", "text", "end"), END_MARKER_IN_A_CALL)
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_an_end_marker_in_a_call_after_reasoning_is_the_values_text(
    reasoning: str, tool: str, text: str, end: str, conventions: str
) -> None:
    """Once reasoning ended, a later end marker is dropped from the content (vLLM's reading), but not
    inside a call: the value keeps it (was: ``"Close with  here."``), one-shot and streamed."""
    pipe = pb.get_pipeline(f"builtin:{reasoning}", f"builtin:{tool}", conventions=conventions)
    want = [("write_file", {"path": "a.md", "content": _CLOSE_DOC.format(end=end)})]
    one = pipe.parse(text)
    assert (one.reasoning, [(c.name, c.arguments) for c in one.tool_calls]) == ("plan", want)
    for done in _streamed(pipe, text):
        assert (done.reasoning, done.content, [(c.name, c.arguments) for c in done.tool_calls]) == (
            "plan",
            one.content,
            want,
        )


#: A call whose JSON string names the family's answer wrapper (a model documenting its format):
#: (reasoning, tool parser, output, the value).
WRAPPER_IN_A_CALL = [
    (
        "hunyuan_a13b",
        "hunyuan_a13b",
        '<think>plan</think>\n<answer>\nSure.<tool_calls>[{"name": "write_file", "arguments": {"path": "a.md", '
        '"content": "Wrap it in <answer> and </answer> here."}}]</tool_calls>\n</answer>',
        "Wrap it in <answer> and </answer> here.",
    ),
    (
        "ernie45",
        "ernie45",
        'plan</think>\n\n<tool_call>\n{"name": "write_file", "arguments": {"path": "a.md", "content": '
        '"Wrap it in <response> and </response> here."}}\n</tool_call>',
        "Wrap it in <response> and </response> here.",
    ),
    (
        "cohere_command3",
        "cohere_command3",
        '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{"tool_name": "write_file", "parameters": '
        '{"path": "a.md", "content": "Wrap it in <|START_RESPONSE|> here."}}]<|END_ACTION|>',
        "Wrap it in <|START_RESPONSE|> here.",
    ),
    (
        "cohere_command4",
        "cohere",
        '<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[{"tool_name": "write_file", "parameters": '
        '{"path": "a.md", "content": "Wrap it in <|START_TEXT|> and <|END_TEXT|> here."}}]<|END_ACTION|>',
        "Wrap it in <|START_TEXT|> and <|END_TEXT|> here.",
    ),
    (
        "kimi_k3",
        "kimi_k3",
        "<|open|>think<|sep|>plan<|close|>think<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="write_file" index="1"<|sep|><|open|>argument key="path" type="string"<|sep|>a.md'
        '<|close|>argument<|sep|><|open|>argument key="content" type="string"<|sep|>Answer in '
        "<|open|>response<|sep|>, end with <|close|>message<|sep|>.<|close|>argument<|sep|><|close|>call<|sep|>"
        "<|close|>tools<|sep|>",
        "Answer in <|open|>response<|sep|>, end with <|close|>message<|sep|>.",
    ),
]


@pytest.mark.parametrize(("reasoning", "tool", "text", "value"), WRAPPER_IN_A_CALL)
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_an_answer_wrapper_in_a_calls_string_is_its_text(
    reasoning: str, tool: str, text: str, value: str, conventions: str
) -> None:
    """Answer wrappers leave the content, but not a call's JSON string (was: ``"Wrap it in  here."``);
    the wrapper closing the answer after the tool section still leaves it."""
    pipe = pb.get_pipeline(f"builtin:{reasoning}", f"builtin:{tool}", conventions=conventions)
    want = [("write_file", {"path": "a.md", "content": value})]
    one = pipe.parse(text)
    assert (one.reasoning, [(c.name, c.arguments) for c in one.tool_calls]) == ("plan", want)
    assert "answer>" not in (one.content or "")
    for done in _streamed(pipe, text):
        assert (done.content, [(c.name, c.arguments) for c in done.tool_calls]) == (one.content, want)

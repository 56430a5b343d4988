"""A misspelt keyword of a parse or stream call: one typed error on every backend, whatever the policy.

`UnknownOptionError` (a `TypeError`) names the option, the closest one the call takes and all of
them, before the backend is called; `on_error="fallback"` does not turn it into content (a typo
is a usage error, not a parse failure) and `"raise"` does not wrap it in `BackendError`.
"""

from __future__ import annotations

import importlib.util

import pytest

import parsebridge as pb
from parsebridge import UnknownOptionError

TEXT = "Let me think.</think>Done."


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_misspelt_reasoning_keyword_is_refused_whatever_the_policy(on_error: str) -> None:
    rp = pb.get_reasoning_parser("builtin:qwen3", on_error=on_error)
    for call in (lambda: rp.parse(TEXT, reasoning_startd=False), lambda: rp.stream(reasoning_startd=False)):
        with pytest.raises(UnknownOptionError, match="Did you mean 'reasoning_started'") as info:
            call()
        assert not isinstance(info.value, pb.BackendError) and isinstance(info.value, TypeError)
        assert "'reasoning_startd'" in str(info.value)
    # the spelling it takes still works (and still reads the text)
    assert rp.parse(TEXT, reasoning_started=False).content == TEXT


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_tool_call_keyword_the_call_does_not_take_is_refused(on_error: str) -> None:
    tp = pb.get_tool_parser("builtin:hermes", on_error=on_error)
    with pytest.raises(UnknownOptionError, match=r"builtin:hermes parse\(\) takes no option 'tool_choise'"):
        tp.parse("hi", tool_choise="auto")
    with pytest.raises(UnknownOptionError, match=r"builtin:hermes stream\(\) takes no option 'tool_choise'"):
        tp.stream(tool_choise="auto")


def test_pipelines_and_time_budgets_refuse_the_same_way() -> None:
    with pytest.raises(UnknownOptionError, match="reasoning_started"):
        pb.get_pipeline("builtin:qwen3", "builtin:hermes").parse(TEXT, reasoning_startd=True)
    with pytest.raises(UnknownOptionError, match="reasoning_started"):
        pb.get_pipeline("builtin:qwen3", "builtin:hermes").stream(reasoning_startd=True)
    with pytest.raises(UnknownOptionError, match="tool_choise"):
        pb.get_pipeline(None, "builtin:hermes").parse(TEXT, tool_choise="auto")
    with pytest.raises(UnknownOptionError, match="tool_choise"):
        pb.get_tool_parser("builtin:hermes", timeout=5).parse("hi", tool_choise="auto")
    assert pb.get_pipeline("builtin:qwen3", "builtin:hermes").parse(TEXT, prompt="<think>").reasoning


def test_reasoning_started_given_to_the_constructor_names_where_it_belongs() -> None:
    """Not "did you mean 'started'" alone: `reasoning_started` is per request; `started=` is the
    parser's default (docs/python-api.md)."""
    with pytest.raises(UnknownOptionError) as info:
        pb.get_reasoning_parser("builtin:qwen3", reasoning_started=True)
    text = str(info.value)
    assert "Did you mean" not in text
    assert "parse(text, reasoning_started=...)" in text and "started=... sets this parser's default" in text
    assert pb.get_reasoning_parser("builtin:qwen3", started=True).parse("why</think>so").reasoning == "why"


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("reasoning_started", "false"),
        ("reasoning_started", 0),
        ("prompt", 5),
        ("prompt", b"<think>"),
        ("prompt_token_ids", "<think>"),
    ],
)
def test_a_start_option_of_the_wrong_type_is_refused_whatever_the_policy(
    on_error: str, option: str, value: object
) -> None:
    """``reasoning_started="false"`` is truthy: it read the output as reasoning. ``prompt=5`` failed
    inside the parser, a `BackendError` (under fallback: the text as content, no word said)."""
    rp = pb.get_reasoning_parser("builtin:qwen3", on_error=on_error)
    pipe = pb.get_pipeline("builtin:qwen3", "builtin:hermes", on_error=on_error)
    timed = pb.get_reasoning_parser("builtin:qwen3", on_error=on_error, timeout=30)
    calls = [rp.parse, rp.stream, pipe.parse, pipe.stream, timed.parse, timed.stream]
    for call in calls:
        args = (TEXT,) if call.__name__ == "parse" else ()
        with pytest.raises(pb.UnsupportedOptionError, match=f"cannot honour {option}=") as info:
            call(*args, **{option: value})
        assert not isinstance(info.value, pb.BackendError)
    assert rp.parse(TEXT, reasoning_started=False).content == TEXT  # the right types still work


@pytest.mark.parametrize(
    ("make", "option"),
    [
        (lambda: pb.get_reasoning_parser("builtin:qwen3", started="false"), "started"),
        (lambda: pb.get_reasoning_parser("builtin:qwen3", prompt=5), "prompt"),
        (
            lambda: pb.get_reasoning_parser("builtin:qwen3", chat_template_kwargs="enable_thinking=False"),
            "chat",
        ),
        (lambda: pb.get_tool_parser("builtin:hermes", chat_template_kwargs="x"), "chat_template_kwargs"),
        (
            lambda: pb.get_reasoning_parser("builtin:qwen3", chat_template_kwargs={"enable_thinking": "no"}),
            r"chat_template_kwargs\['enable_thinking'\]='no': expected True, False or None",
        ),
        (
            lambda: pb.get_reasoning_parser(
                "builtin:deepseek_v3", chat_template_kwargs={"thinking": "false"}
            ),
            r"chat_template_kwargs\['thinking'\]='false'",
        ),
        (
            lambda: pb.get_pipeline(
                "builtin:qwen3", "builtin:hermes", chat_template_kwargs={"enable_thinking": 0}
            ),
            r"chat_template_kwargs\['enable_thinking'\]=0",
        ),
        (
            lambda: pb.get_pipeline("builtin:qwen3", "builtin:hermes", reasoning_started="no"),
            "reasoning_started",
        ),
    ],
)
def test_a_builtin_option_of_the_wrong_type_is_refused_when_the_parser_is_built(make, option: str) -> None:
    """``started="false"`` made a parser that read every output as reasoning, and a string
    ``chat_template_kwargs`` one that ignored it: both were taken without a word. So did a thinking
    switch that is no boolean: ``{"enable_thinking": "no"}`` left thinking on (any non-empty string
    is truthy, as a chat template reads it), refused now as ``started="false"`` is."""
    with pytest.raises(pb.InvalidSpecError, match=option):
        make()


def _installed(framework: str) -> None:
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed (parsebridge install-framework {framework}-latest)")


@pytest.mark.framework
@pytest.mark.parametrize("framework", ["vllm", "sglang", "dynamo", "smg"])
@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_every_framework_backend_refuses_a_misspelt_call_keyword(framework: str, on_error: str) -> None:
    _installed(framework)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    tp = pb.get_tool_parser(f"{framework}:hermes", tools, on_error=on_error)
    rp = pb.get_reasoning_parser(f"{framework}:qwen3", on_error=on_error)
    for call in (
        lambda: tp.parse("hi", tool_choise="auto"),
        lambda: tp.stream(tool_choise="auto"),
        lambda: rp.parse(TEXT, xyz=1),
        lambda: rp.stream(reasoning_startd=True),
    ):
        with pytest.raises(UnknownOptionError):
            call()


@pytest.mark.parametrize(
    ("switches", "reasoning"),
    [
        ({"thinking": None, "enable_thinking": False}, None),
        ({"enable_thinking": None, "thinking": False}, None),
        ({"thinking": True, "enable_thinking": False}, "a"),
        ({"thinking": None, "enable_thinking": None}, "a"),
    ],
)
def test_a_thinking_switch_set_to_none_does_not_hide_the_other(
    switches: dict[str, object], reasoning: str | None
) -> None:
    """``{"thinking": None, "enable_thinking": False}`` read as thinking on: the None of
    ``thinking`` (which is read first) hid ``enable_thinking``. None is unset, as the type check
    takes it; ``thinking`` still wins when both are set."""
    parser = pb.get_reasoning_parser("builtin:qwen3", chat_template_kwargs=switches)
    assert parser.parse("a</think>b").reasoning == reasoning

"""One-shot builtin parsing is linear in the output length (issue 13: 1 MB 1.5 s, 5 MB 12.3 s).

Not timed: the work is counted. Every Python and C function call made while
parsing a text of n characters and one of 8n characters is counted with
`sys.setprofile`; a linear parser makes ≈ 8× the calls, a quadratic one
(re-scanning, re-joining held text per step) ≈ 64×. The count does not see
work done inside one C call (a slice copy); the benchmark row
`benchmarks.builtin_linear` (one-shot 1 MB → 8 MB) times that side.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest

import parsebridge as pb

SMALL, FACTOR = 12_000, 8
#: Allowed call-count growth for an 8× longer text (linear: ≈ 8; quadratic: ≈ 64).
MAX_GROWTH = 9.5


def hermes_many_calls(size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        call = json.dumps({"name": f"tool_{i % 7}", "arguments": {"q": f"query {i}", "n": i}})
        piece = f"Step {i}.\n<tool_call>\n{call}\n</tool_call>\n"
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)


def hermes_long_arguments(size: int) -> str:
    item = 'line "quoted" \\ é </tool_call> <tool_call>'
    body = json.dumps({"name": "bulk", "arguments": {"items": [item] * (size // 50)}}, ensure_ascii=False)
    return "Let me run that.\n<tool_call>\n" + body + "\n</tool_call>"


def hermes_unclosed_name(size: int) -> str:
    """A block whose name never comes: held whole as an undecided span, then content."""
    return '<tool_call>\n{"arguments": {"x": "' + "y" * size + '"}'


def llama3_plain_json(size: int) -> str:
    items = [{"i": i, "text": "some value ✓"} for i in range(size // 30)]
    return json.dumps({"result": items}, ensure_ascii=False)


def qwen3_reasoning(size: int) -> str:
    return "<think>" + "Let me think about it. " * (size // 23) + "</think>The answer is 42."


CASES: list[tuple[str, str, Callable[[int], str]]] = [
    ("tool", "builtin:hermes", hermes_many_calls),
    ("tool", "builtin:hermes", hermes_long_arguments),
    ("tool", "builtin:hermes", hermes_unclosed_name),
    ("tool", "builtin:llama3_json", llama3_plain_json),
    ("reasoning", "builtin:qwen3", qwen3_reasoning),
    ("reasoning", "builtin:deepseek_r1", qwen3_reasoning),
]


def _count_calls(fn: Callable[[], object]) -> int:
    count = 0

    def profiler(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profiler)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize(("kind", "spec", "build"), CASES, ids=[f"{c[1]}-{c[2].__name__}" for c in CASES])
def test_one_shot_work_grows_linearly(kind: str, spec: str, build: Callable[[int], str]) -> None:
    parser = (
        pb.get_tool_parser(spec, conventions="lossless")
        if kind == "tool"
        else pb.get_reasoning_parser(spec, conventions="lossless")
    )
    small, big = build(SMALL), build(SMALL * FACTOR)
    size_ratio = len(big) / len(small)
    parser.parse(small)  # warm lazy imports and caches so they do not count for the small text only
    calls_small = _count_calls(lambda: parser.parse(small))
    calls_big = _count_calls(lambda: parser.parse(big))
    growth = calls_big / calls_small
    assert growth <= MAX_GROWTH * size_ratio / FACTOR, (
        f"{spec} on {build.__name__}: {calls_small} calls for {len(small)} chars, "
        f"{calls_big} for {len(big)} ({growth:.1f}× for {size_ratio:.1f}× the text)"
    )


@pytest.mark.parametrize(("kind", "spec", "build"), CASES, ids=[f"{c[1]}-{c[2].__name__}" for c in CASES])
def test_one_shot_result_is_complete(kind: str, spec: str, build: Callable[[int], str]) -> None:
    """The counted parse did the whole job (a parser that stops early cannot pass as linear)."""
    parser = (
        pb.get_tool_parser(spec, conventions="lossless")
        if kind == "tool"
        else pb.get_reasoning_parser(spec, conventions="lossless")
    )
    text = build(SMALL * FACTOR)
    result = parser.parse(text)
    if kind == "reasoning":
        assert result.reasoning is not None and len(result.reasoning) > len(text) // 2
        return
    calls = result.tool_calls
    found = sum(len(c.raw_text) for c in calls) + len(result.content or "")
    assert found >= len(text) // 2, f"{spec}: only {found} of {len(text)} chars accounted for"


def glm_close_tags_in_a_value(size: int) -> str:
    """A string value holding one example's open tag, then close and open tags in turn: every
    close tag is decided by the nested-example rule (`markers.NestedCloses`), each balanced only
    at the value's end."""
    n = size // 25
    return (
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.md</arg_value><arg_key>content</arg_key>"
        "<arg_value>Ex: <arg_value>v "
        + "</arg_value> w <arg_value>" * n
        + "</arg_value></arg_value></tool_call>"
    )


def test_close_tags_inside_a_value_are_decided_in_linear_work() -> None:
    """Each close tag's search went to the value's end (a quadratic ≈ 60× for 8× the text)."""
    from parsebridge.formats.cases.catalogue import tools

    parser = pb.get_tool_parser("builtin:glm45", conventions="lossless", tools=tools("write_file"))
    small, big = glm_close_tags_in_a_value(SMALL), glm_close_tags_in_a_value(SMALL * FACTOR)
    parser.parse(small)
    growth = _count_calls(lambda: parser.parse(big)) / _count_calls(lambda: parser.parse(small))
    assert growth <= MAX_GROWTH * (len(big) / len(small)) / FACTOR, growth
    (call,) = parser.parse(big).tool_calls  # (the whole text is the value's: one call, nothing lost)
    assert call.arguments["content"].count("</arg_value>") == big.count("</arg_value>") - 2

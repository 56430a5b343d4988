"""Models built on the hot path behave as the validated models a caller would build.

`make_tool_call` & co. store only `__dict__` (pydantic's bookkeeping slots
stay unset and read through `_Model.__getattr__`); `make_delta`,
`make_call_delta` and `make_block` store the slots of a slotted pydantic
dataclass. Everything a caller can do with a model must not tell the two
apart: equality both ways, dumps, repr, copies, pickling, assignment, use
inside another model, and a typo still raising AttributeError.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from parsebridge.protocol import (
    ReasoningBlock,
    ReasoningParseResult,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolParseResult,
)
from parsebridge.protocol.models import (
    call_delta_of,
    make_block,
    make_call_delta,
    make_delta,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)


def _call() -> ToolCall:
    return make_tool_call("get_weather", '{"city": "Paris"}', "call_1", "<tool_call>…</tool_call>")


PAIRS: list[tuple[str, Callable[[], BaseModel], Callable[[], BaseModel]]] = [
    (
        "delta",
        lambda: make_delta("hi", "why", [make_call_delta(0, "call_1", "f", '{"a"')]),
        lambda: StreamDelta(
            content="hi",
            reasoning="why",
            tool_calls=[ToolCallDelta(index=0, id="call_1", name="f", arguments='{"a"')],
        ),
    ),
    (
        "delta with one call fragment",
        lambda: call_delta_of("hi", "", 2, None, None, '"x'),
        lambda: StreamDelta(content="hi", tool_calls=[ToolCallDelta(index=2, arguments='"x')]),
    ),
    ("empty delta", make_delta, StreamDelta),
    (
        "call delta",
        lambda: make_call_delta(1, None, None, "x"),
        lambda: ToolCallDelta(index=1, arguments="x"),
    ),
    (
        "tool call",
        _call,
        lambda: ToolCall(
            id="call_1", name="get_weather", arguments={"city": "Paris"}, raw_text="<tool_call>…</tool_call>"
        ),
    ),
    (
        "tool result",
        lambda: make_tool_result("text", [_call()]),
        lambda: ToolParseResult(
            content="text",
            tool_calls=[
                ToolCall(
                    id="call_1",
                    name="get_weather",
                    arguments={"city": "Paris"},
                    raw_text="<tool_call>…</tool_call>",
                )
            ],
        ),
    ),
    (
        "reasoning result",
        lambda: make_reasoning_result("r", "c", make_block("r", "<think>", "</think>", 0, 16, True)),
        lambda: ReasoningParseResult(
            reasoning="r",
            content="c",
            block=ReasoningBlock(
                content="r", start_marker="<think>", end_marker="</think>", start_index=0, end_index=16
            ),
        ),
    ),
]


@pytest.mark.parametrize(("label", "hot", "validated"), PAIRS, ids=[p[0] for p in PAIRS])
def test_hot_model_is_indistinguishable(
    label: str, hot: Callable[[], Any], validated: Callable[[], Any]
) -> None:
    a, b = hot(), validated()
    assert type(a) is type(b)
    assert a == b and b == a
    assert a.model_dump() == b.model_dump()
    assert a.model_dump_json() == b.model_dump_json()
    assert repr(a) == repr(b)
    for clone in (copy.copy(a), copy.deepcopy(a), a.model_copy(), pickle.loads(pickle.dumps(a))):
        assert clone == b
    assert type(a).model_validate(a.model_dump()) == b
    assert a.model_extra is None
    assert set(a.model_fields_set) == set(type(a).model_fields)
    with pytest.raises(AttributeError):
        _ = a.no_such_field


def test_hot_model_assignment_and_nesting() -> None:
    delta = make_delta("a")
    delta.content = "b"
    assert delta.content == "b" and delta == StreamDelta(content="b")
    other = make_delta("c")
    assert other.content == "c"  # the shared fields set is not state: assignment leaks nothing
    result = ToolParseResult(content=None, tool_calls=[_call()])  # a hot model inside a validated one
    assert result.tool_calls[0].arguments == {"city": "Paris"}
    assert delta.model_copy(update={"reasoning": "r"}).reasoning == "r"


def test_call_ids_are_openai_style_and_fresh() -> None:
    """`call_` + 24 lowercase hex (96 random bits), a new one every time."""
    import re

    from parsebridge.protocol import new_call_id

    ids = [new_call_id() for _ in range(2000)]
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_call_ids_drawn_ahead_are_not_shared_with_a_forked_child() -> None:
    """Ids are drawn from the OS in batches; a child forked with part of a batch left must not
    hand out the ids its parent hands out next (a server forks its workers after start-up)."""
    import os

    from parsebridge.protocol import new_call_id

    new_call_id()  # a batch is drawn and mostly left
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write, " ".join(new_call_id() for _ in range(50)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = set(pipe.read().split())
    os.waitpid(pid, 0)
    parent = {new_call_id() for _ in range(50)}
    assert len(child) == 50
    assert not child & parent

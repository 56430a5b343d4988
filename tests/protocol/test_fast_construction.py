"""`fill_fields`: the results' fast construction, and its fallback to pydantic's normal construction.

The fast path stores `__dict__` through `BaseModel`'s slot descriptor and
leaves pydantic's bookkeeping slots unset; it is used only on the pydantic
releases it was written for, when `BaseModel` still has that layout. Both
paths must give models indistinguishable from validated ones.
"""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from typing import Any

import pydantic
import pytest

from parsebridge.protocol import _layout, models
from parsebridge.protocol.models import (
    ReasoningBlock,
    ReasoningParseResult,
    ToolCall,
    ToolParseResult,
    fast_construction_supported,
    init_fields,
    make_block,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
)
from parsebridge.protocol.models import (
    _alloc as alloc,
)


def _builder(fill: Any) -> Any:
    def build(cls: type[Any], fields: dict[str, Any]) -> Any:
        model = alloc(cls)
        fill(model, fields)
        return model

    return build


BUILDERS = [
    pytest.param(
        _builder(models.fill_fields),
        id="fast",
        marks=pytest.mark.skipif(not models.FAST_CONSTRUCTION, reason="pydantic without the fast layout"),
    ),
    pytest.param(_builder(init_fields), id="fallback"),
]


def _cases() -> list[tuple[type[Any], dict[str, Any]]]:
    call = ToolCall(id="call_1", name="get", arguments={"city": "Paris", "n": [1, 2]}, raw_text="<x>")
    bad = ToolCall(id="call_2", name="get", arguments={}, invalid_arguments="{oops")
    block = make_block("thinking", "<think>", "</think>", 0, 20, True)
    return [
        (ToolCall, dict(call)),
        (ToolCall, dict(bad)),
        (ToolParseResult, {"content": "hi", "tool_calls": [call, bad], "dropped": " bye", "reasoning": None}),
        (ToolParseResult, {"content": None, "tool_calls": [], "dropped": None, "reasoning": "plan"}),
        (ReasoningParseResult, {"reasoning": "r", "content": "c", "block": block}),
        (ReasoningParseResult, {"reasoning": None, "content": None, "block": None}),
    ]


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(("cls", "fields"), _cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_built_models_are_the_validated_models(build, cls, fields):
    built, validated = build(cls, dict(fields)), cls(**fields)
    assert type(built) is cls
    assert built == validated and validated == built
    assert built.model_dump() == validated.model_dump()
    assert json.loads(built.model_dump_json()) == json.loads(validated.model_dump_json())
    assert repr(built) == repr(validated)
    assert built.model_fields_set == validated.model_fields_set == set(cls.model_fields)
    assert built.model_extra is None and validated.model_extra is None
    assert copy.copy(built) == validated and copy.deepcopy(built) == validated
    assert pickle.loads(pickle.dumps(built)) == validated
    assert cls.model_validate(built.model_dump()) == validated


@pytest.mark.parametrize("build", BUILDERS)
def test_built_models_take_assignment_and_copy_with_update(build):
    call = build(
        ToolCall, {"id": "c", "name": "f", "arguments": {}, "raw_text": "", "invalid_arguments": None}
    )
    call.name = "g"
    assert call.model_dump()["name"] == "g" and call.model_fields_set == set(ToolCall.model_fields)
    assert call.model_copy(update={"id": "d"}).id == "d"
    result = build(ToolParseResult, {"content": None, "tool_calls": [call]})
    assert result.model_copy(deep=True) == result


def test_the_installed_pydantic_takes_the_fast_path():
    """The release this suite runs on is one the fast path was written for (else it would be slow)."""
    assert models.FAST_CONSTRUCTION, pydantic.VERSION
    assert models.fill_fields == pydantic.BaseModel.__dict__["__dict__"].__set__
    call = make_tool_call("f", "{}", "c")
    with pytest.raises(AttributeError):  # the bookkeeping slot is left unset: the fast path ran
        object.__getattribute__(call, "__pydantic_fields_set__")


@pytest.mark.parametrize(
    "version", ["3.0.0", "3.1.0b1", "2.5.3", "2.0", "1.10.13", "garbage", "2", "two.six", ""]
)
def test_other_pydantic_releases_are_not_trusted(version):
    assert not fast_construction_supported(version)


@pytest.mark.parametrize("version", ["2.6.0", "2.14.4", "2.99.0a1"])
def test_releases_in_the_range_are(version):
    assert fast_construction_supported(version)


def test_a_changed_basemodel_layout_is_not_trusted():
    class MoreSlots:
        __slots__ = (*_layout.BASEMODEL_SLOTS, "__pydantic_new_thing__")

    class NoDictSlot:
        __slots__ = _layout.BASEMODEL_SLOTS[1:]

    assert fast_construction_supported("2.14.0", pydantic.BaseModel)
    assert not fast_construction_supported("2.14.0", MoreSlots)
    assert not fast_construction_supported("2.14.0", NoDictSlot)


def test_forced_fallback_builds_the_same_results(monkeypatch):
    monkeypatch.setattr(models, "fill_fields", init_fields)
    call = make_tool_call("f", '{"a": 1}', "c", "<raw>")
    object.__getattribute__(call, "__pydantic_fields_set__")  # set by __init__: the fallback ran
    assert call == ToolCall(id="c", name="f", arguments={"a": 1}, raw_text="<raw>")
    assert make_tool_call("f", "{bad", "d").invalid_arguments == "{bad"
    assert make_tool_result("x", [call]) == ToolParseResult(content="x", tool_calls=[call])
    block = ReasoningBlock(content="r", start_marker=None, end_marker="</think>", start_index=0, end_index=5)
    expected = ReasoningParseResult(reasoning="r", content=None, block=block)
    assert make_reasoning_result("r", None, block) == expected


#: Run in a fresh interpreter whose `BaseModel` has another layout than the one the fast path
#: was written for (a later 2.x release might): results are built the validated way.
_FALLBACK_RUN = """
import json, pydantic
pydantic.BaseModel.__slots__ = (*pydantic.BaseModel.__slots__, "__pydantic_new_thing__")
from parsebridge.protocol import _layout, models
import parsebridge as pb
tp = pb.get_tool_parser("builtin:hermes")
res = tp.parse('hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
stream = tp.stream()
for piece in ('<tool_', 'call>{"name": "f", ', '"arguments": {}}</tool_call>'):
    stream.feed(piece)
done = stream.finish()
print(json.dumps({
    "fast": models.FAST_CONSTRUCTION,
    "fill": models.fill_fields.__name__,
    "content": res.content,
    "calls": [[c.name, c.arguments] for c in res.tool_calls],
    "fields_set": sorted(res.tool_calls[0].model_fields_set),
    "streamed": [[c.name, c.arguments] for c in done.tool_calls],
}))
"""


def test_an_untested_pydantic_release_is_a_clear_import_error():
    run = "import pydantic; pydantic.VERSION = '3.0.0'; from parsebridge import ToolCall"
    out = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: parsebridge needs pydantic>=2.6,<3.0") and "'3.0.0'" in last


@pytest.mark.parametrize("version", ["3.0.0", "2.5.3", "garbage"])
def test_check_pydantic_names_the_range_and_the_version(version):
    with pytest.raises(ImportError, match=rf"needs pydantic>=2\.6,<3\.0 .*found pydantic '{version}'"):
        models.check_pydantic(version)
    models.check_pydantic("2.14.4")


def test_a_changed_basemodel_layout_falls_back_end_to_end():
    out = subprocess.run([sys.executable, "-c", _FALLBACK_RUN], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert (seen["fast"], seen["fill"]) == (False, "init_fields")
    assert seen["content"] == "hi " and seen["calls"] == [["f", {"a": 1}]]
    assert seen["fields_set"] == sorted(ToolCall.model_fields)
    assert seen["streamed"] == [["f", {}]]


@pytest.mark.parametrize(
    "cls", [models.StreamDelta, models.ToolCallDelta, ReasoningBlock], ids=lambda c: c.__name__
)
def test_slotted_models_hold_only_their_fields(cls):
    """`alloc` plus a store per field (`make_delta`, the builtin streams) makes the whole object:
    the slotted pydantic dataclasses keep no state of their own beside their fields."""
    assert cls.__slots__ == tuple(cls.__pydantic_fields__)
    built = alloc(cls)
    values = {name: getattr(cls(**_slotted_sample(cls)), name) for name in cls.__slots__}
    for name, value in values.items():
        setattr(built, name, value)
    assert built == cls(**values) and built.model_dump() == cls(**values).model_dump()


def _slotted_sample(cls: type[Any]) -> dict[str, Any]:
    if cls is models.StreamDelta:
        return {
            "content": "a",
            "reasoning": "b",
            "tool_calls": [models.ToolCallDelta(index=0, arguments="{")],
        }
    if cls is models.ToolCallDelta:
        return {"index": 1, "id": "c", "name": "f", "arguments": "{}"}
    return {"content": "r", "start_marker": "<think>", "end_marker": None, "start_index": 0, "end_index": 3}

"""Data models in the middle of the bridge.

Every backend translates its framework's results into these, so the rest of
parsebridge (conformance, compare, the output processor) never sees a
framework type. They are pydantic v2 models: JSON-serialisable, comparable,
and with helpers for the OpenAI wire shape, where tool-call arguments travel
as a JSON *string*.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass

from ._layout import check_pydantic, fast_construction_supported, init_fields
from .calls import new_call_id, parse_arguments
from .surrogates import dumped_json

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo


class _Model(BaseModel):
    # defer_build: the validator (and pydantic's plugin scan) is built on first
    # validation, not at import — `import parsebridge` stays cheap.
    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)

    if not TYPE_CHECKING:

        def __getattr__(self, item: str) -> Any:
            # Models built by the fast `fill_fields` (`make_tool_call`, the other `make_*`) set only `__dict__`;
            # pydantic's three bookkeeping slots read as what they would hold: every field
            # set (one shared set per class), no extra fields (forbidden), no private state
            # (none is declared). Only reached when a slot is unset; validated models never are.
            if item == "__pydantic_fields_set__":
                return _all_fields_set(type(self))
            if item == "__pydantic_extra__" or item == "__pydantic_private__":
                return None
            return super().__getattr__(item)

    def model_dump_json(self, **kwargs: Any) -> str:
        """pydantic's JSON, a lone surrogate (kept from the model's output) written as its escape
        ``\\ud800`` where pydantic refuses it (`surrogates`): a result always serialises."""
        return dumped_json(lambda: super(_Model, self).model_dump_json(**kwargs), self.model_dump, kwargs)


class _SlottedModel:
    """`BaseModel`'s everyday surface for the small models made on the hot path.

    `ToolCallDelta` and `StreamDelta` are made once per chunk and
    `ReasoningBlock` once per parse, so they are slotted pydantic dataclasses:
    a slot store costs a fraction of a model's `__dict__`, and no dict is made
    per object. Validation, JSON and schema come from pydantic as for the other
    models; these methods give them the names callers of a `BaseModel` use.
    """

    __slots__ = ()

    @classmethod
    def _adapter(cls) -> TypeAdapter[Any]:
        adapter = _ADAPTERS.get(cls)
        if adapter is None:
            adapter = _ADAPTERS[cls] = TypeAdapter(cls)
        return adapter

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        return cls._adapter().validate_python(obj)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        return cls._adapter().validate_json(data)  # type: ignore[no-any-return]

    @classmethod
    def model_json_schema(cls, **kwargs: Any) -> dict[str, Any]:
        return cls._adapter().json_schema(**kwargs)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        return self._adapter().dump_python(self, **kwargs)  # type: ignore[no-any-return]

    def model_dump_json(self, **kwargs: Any) -> str:
        """pydantic's JSON, a lone surrogate written as its escape (`surrogates`)."""
        return dumped_json(
            lambda: self._adapter().dump_json(self, **kwargs).decode(), self.model_dump, kwargs
        )

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (not validated, as `BaseModel.model_copy`); `update` replaces fields."""
        clone = _alloc(type(self))
        for name in self.model_fields:
            setattr(clone, name, getattr(self, name))
        if deep:
            clone = copy.deepcopy(clone)
        for name, value in (update or {}).items():
            if name not in self.model_fields:
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            setattr(clone, name, value)
        return clone

    @property
    def model_fields_set(self) -> set[str]:
        return set(self.model_fields)

    @property
    def model_extra(self) -> None:
        return None  # extra fields are forbidden

    if TYPE_CHECKING:
        model_fields: ClassVar[dict[str, FieldInfo]]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}
# defer_build: the validator is built on first validation, not at import.
_SLOTTED_CONFIG = ConfigDict(extra="forbid", defer_build=True)


@dataclass(slots=True, config=_SLOTTED_CONFIG)
class ReasoningBlock(_SlottedModel):
    """One span of reasoning in a model output.

    `start_index`/`end_index` delimit the whole block *including* its markers
    in the parsed text, so ``text[start_index:end_index] == (start_marker or "")
    + content + (end_marker or "")``. When reasoning started in the prompt,
    `start_marker` is None and `start_index` is 0; when it was never closed,
    `end_marker` is None and `end_index` is the end of the text. Backends that
    cannot locate the block exactly (a framework that returns only strings)
    give the best span they can find and say so with `located=False`.
    """

    content: str
    start_marker: str | None = None
    end_marker: str | None = None
    start_index: int = 0
    end_index: int = 0
    located: bool = True


class ToolCall(_Model):
    """One complete tool call.

    `arguments` is the parsed JSON object. When a backend returns a call whose
    arguments are not a JSON object (malformed, truncated, a bare list, a ``NaN`` or
    ``Infinity``…; vLLM and SGLang do), `arguments` is ``{}`` and `invalid_arguments` holds the verbatim
    text: the call is flagged, not dropped. Builtin parsers never return such a
    call: a call that is not whole is no call there, its text is text.
    `raw_text` is the span of model output the call came from, when the backend
    knows it.
    """

    id: str = Field(default_factory=new_call_id)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_text: str = ""
    invalid_arguments: str | None = None

    @property
    def valid(self) -> bool:
        return self.invalid_arguments is None

    @property
    def arguments_json(self) -> str:
        """The arguments as the OpenAI wire carries them (a JSON string)."""
        if self.invalid_arguments is not None:
            return self.invalid_arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    @classmethod
    def from_arguments_text(cls, name: str, arguments: str, **fields: Any) -> ToolCall:
        """Build a call from a JSON arguments string, flagging it if invalid."""
        parsed, invalid = parse_arguments(arguments)
        return cls(name=name, arguments=parsed, invalid_arguments=invalid, **fields)

    def to_openai(self) -> dict[str, Any]:
        """`{"id", "type": "function", "function": {"name", "arguments": str}}`."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_json},
        }


def _assistant_message(
    content: str | None, reasoning: str | None, tool_calls: list[ToolCall]
) -> dict[str, Any]:
    """The assistant `message` of a tool result and of a pipeline's result (one shape for both)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if tool_calls:
        message["tool_calls"] = [call.to_openai() for call in tool_calls]
    return message


class ToolParseResult(_Model):
    """What a tool-call parser found in one output.

    `dropped` is the model text a parser's convention left out of `content` (builtin
    under ``conventions="servers"``: text after or between calls, cut-off or unnamed
    markup), in output order; None when nothing was left out. Nothing is lost: content,
    the calls' `raw_text` and `dropped` together hold every character of the output
    that is not format markup.
    `reasoning`: what a tool parser's own stream sent as reasoning (vLLM's Cohere, Inkling).
    """

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    dropped: str | None = None
    reasoning: str | None = None

    @property
    def tools_called(self) -> bool:
        return bool(self.tool_calls)

    def to_openai_message(self) -> dict[str, Any]:
        """An OpenAI chat `message` object (assistant role)."""
        return _assistant_message(self.content, self.reasoning, self.tool_calls)


class ReasoningParseResult(_Model):
    """What a reasoning parser found in one output."""

    reasoning: str | None = None
    content: str | None = None
    block: ReasoningBlock | None = None


class ParseResult(_Model):
    """Reasoning, content and tool calls together: a reasoning→tool pipeline's result."""

    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    block: ReasoningBlock | None = None
    #: Text the tool parser's convention left out of `content` (see `ToolParseResult.dropped`).
    dropped: str | None = None

    def to_openai_message(self) -> dict[str, Any]:
        """An OpenAI chat `message`, with `reasoning_content` when there is reasoning."""
        return _assistant_message(self.content, self.reasoning, self.tool_calls)

    @property
    def finish_reason(self) -> Literal["tool_calls", "stop"]:
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(slots=True, config=_SLOTTED_CONFIG)
class ToolCallDelta(_SlottedModel):
    """A tool-call fragment in the OpenAI streaming convention.

    The first delta of a call carries `index`, `id` and `name` (and maybe the
    start of the arguments); later deltas carry only `index` and an
    `arguments` fragment. Joining a call's fragments gives its arguments text.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index}
        if self.id is not None:
            out["id"] = self.id
            out["type"] = "function"
        function: dict[str, Any] = {}
        if self.name is not None:
            function["name"] = self.name
        if self.arguments or self.name is not None:
            function["arguments"] = self.arguments
        if function:
            out["function"] = function
        return out


@dataclass(slots=True, config=_SLOTTED_CONFIG)
class StreamDelta(_SlottedModel):
    """What may be shown to the client after one chunk (or at the end of stream)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallDelta] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.content or self.reasoning or self.tool_calls)

    def to_openai(self) -> dict[str, Any]:
        """The `delta` object of a `chat.completion.chunk` (empty dict when nothing)."""
        out: dict[str, Any] = {}
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        if self.content:
            out["content"] = self.content
        if self.tool_calls:
            out["tool_calls"] = [d.to_openai() for d in self.tool_calls]
        return out

    def merged(self, other: StreamDelta) -> StreamDelta:
        """This delta followed by `other`, as one delta (fragments joined per call)."""
        calls: list[ToolCallDelta] = [d.model_copy() for d in self.tool_calls]
        for d in other.tool_calls:
            if calls and calls[-1].index == d.index and d.id is None and d.name is None:
                calls[-1].arguments += d.arguments
            else:
                calls.append(d.model_copy())
        return make_delta(self.content + other.content, self.reasoning + other.reasoning, calls)


for _cls in (ReasoningBlock, ToolCallDelta, StreamDelta):
    _cls.model_fields = _cls.__pydantic_fields__  # type: ignore[union-attr]


# ---------------------------------------------------------------------- hot path
# A stream returns a `StreamDelta` per chunk. Validating one costs more than many framework parsers
# spend on the chunk, and what a backend puts in a delta or result is already typed. These build the
# same public models without validation (same type and fields, equal to the validated model), only
# for values of the right types; what callers construct themselves is still validated.

#: A slotted model (`StreamDelta`, `ToolCallDelta`, `ReasoningBlock`) is `_alloc(cls)` plus a store per
#: slot; a `BaseModel` (`ToolCall`, the results) `_alloc(cls)` plus one `fill_fields(model, {every field:
#: its value})`. Only this section knows how: everything else calls the helpers below (a caller of
#: `blank_delta` stores a `StreamDelta`'s three slots itself).
_alloc = object.__new__

check_pydantic()  # the releases and layout it was tested with (`_layout`)
#: Checked once, at import: a tested release whose `BaseModel` still has the layout relied on
#: (else the fallback: correct, validated, slower).
FAST_CONSTRUCTION = fast_construction_supported()
#: Gives a model from `_alloc(cls)` every field's value: on the releases checked for, the
#: store of BaseModel's `__dict__` slot descriptor itself (no validation, no Python frame;
#: the bookkeeping slots stay unset, see `_Model.__getattr__`), elsewhere `init_fields`.
#: `fields` holds every field, each of the right type.
fill_fields: Callable[[BaseModel, dict[str, Any]], None] = (
    BaseModel.__dict__["__dict__"].__set__ if FAST_CONSTRUCTION else init_fields
)


#: One "fields set" per class, shared: every field is set, so pydantic's `.add(name)` on
#: assignment never changes it (extra fields are forbidden).
_ALL_SET: dict[type, set[str]] = {}


def _all_fields_set(cls: type) -> set[str]:
    fields_set = _ALL_SET.get(cls)
    if fields_set is None:
        fields_set = _ALL_SET[cls] = set(cls.model_fields)  # type: ignore[attr-defined]
    return fields_set


def make_delta(
    content: str = "", reasoning: str = "", tool_calls: list[ToolCallDelta] | None = None
) -> StreamDelta:
    """A `StreamDelta` built without validation (the per-chunk path: one allocation, three slot stores)."""
    delta = _alloc(StreamDelta)
    delta.content = content
    delta.reasoning = reasoning
    delta.tool_calls = [] if tool_calls is None else tool_calls
    return delta


def delta_of(content: str, reasoning: str, tool_calls: list[ToolCallDelta]) -> StreamDelta:
    """`make_delta` with every field given: the per-chunk path of the streams, no defaults to fill."""
    delta = _alloc(StreamDelta)
    delta.content = content
    delta.reasoning = reasoning
    delta.tool_calls = tool_calls
    return delta


#: A `StreamDelta` with no field set yet (one allocation, no Python frame): for a per-chunk loop
#: that stores all three fields itself before handing the delta out (SGLang's reasoning stream,
#: whose parser takes about 5 µs a chunk, so `delta_of`'s frame is a point of its overhead).
blank_delta: Callable[[], StreamDelta] = functools.partial(_alloc, StreamDelta)


def call_delta_of(
    content: str, reasoning: str, index: int, id: str | None, name: str | None, arguments: str
) -> StreamDelta:
    """`delta_of` with one call delta (`make_call_delta`) in it, both built in one frame."""
    call = _alloc(ToolCallDelta)
    call.index = index
    call.id = id
    call.name = name
    call.arguments = arguments
    delta = _alloc(StreamDelta)
    delta.content = content
    delta.reasoning = reasoning
    delta.tool_calls = [call]
    return delta


def empty_delta() -> StreamDelta:
    """The delta of a chunk that shows nothing (a fresh one each time: callers may extend it)."""
    delta = _alloc(StreamDelta)
    delta.content = delta.reasoning = ""
    delta.tool_calls = []
    return delta


def set_raw_text(call: ToolCall, raw_text: str) -> None:
    """Sets `raw_text` of a call this process built with `make_tool_call`, in place, unvalidated."""
    call.__dict__["raw_text"] = raw_text


def set_call_id(call: ToolCall, call_id: str) -> None:
    """Sets `id` of a call this process built with `make_tool_call`, in place, unvalidated."""
    call.__dict__["id"] = call_id


def make_call_delta(index: int, id: str | None, name: str | None, arguments: str) -> ToolCallDelta:
    """A `ToolCallDelta` built without validation (the per-chunk path)."""
    delta = _alloc(ToolCallDelta)
    delta.index = index
    delta.id = id
    delta.name = name
    delta.arguments = arguments
    return delta


def make_tool_call(name: str, arguments_text: str, id: str | None = None, raw_text: str = "") -> ToolCall:
    """`ToolCall.from_arguments_text` without validation: JSON parsed, invalid text kept verbatim."""
    parsed, invalid = parse_arguments(arguments_text)
    call = _alloc(ToolCall)
    fill_fields(
        call,
        {
            "id": id or new_call_id(),
            "name": name,
            "arguments": parsed,
            "raw_text": raw_text,
            "invalid_arguments": invalid,
        },
    )
    return call


def make_tool_result(
    content: str | None, tool_calls: list[ToolCall], dropped: str | None = None, reasoning: str | None = None
) -> ToolParseResult:
    """A `ToolParseResult` built without validation (`_alloc` and `fill_fields`)."""
    result = _alloc(ToolParseResult)
    fill_fields(
        result, {"content": content, "tool_calls": tool_calls, "dropped": dropped, "reasoning": reasoning}
    )
    return result


def make_reasoning_result(
    reasoning: str | None, content: str | None, block: ReasoningBlock | None
) -> ReasoningParseResult:
    """A `ReasoningParseResult` built without validation (`_alloc` and `fill_fields`)."""
    result = _alloc(ReasoningParseResult)
    fill_fields(result, {"reasoning": reasoning, "content": content, "block": block})
    return result


def make_block(
    content: str,
    start_marker: str | None,
    end_marker: str | None,
    start_index: int,
    end_index: int,
    located: bool,
) -> ReasoningBlock:
    """A `ReasoningBlock` built without validation (one allocation, a store per slot)."""
    block = _alloc(ReasoningBlock)
    block.content = content
    block.start_marker = start_marker
    block.end_marker = end_marker
    block.start_index = start_index
    block.end_index = end_index
    block.located = located
    return block

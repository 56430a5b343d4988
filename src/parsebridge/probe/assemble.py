"""What a client assembles from a server's answer, with the traces the invariants look at.

`from_message` reads a non-streamed chat completion, `from_events` a streamed one (choice 0,
the only one the probe asks for), the way OpenAI clients accumulate deltas: content and
reasoning fragments joined, tool-call deltas merged by their ``index``. Beside the assembled
answer each `CallTrace` keeps what the client-side invariants need: every id and name the call
was given, and at which event its name and its first argument fragment arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: The fields servers put reasoning in (vLLM before 0.10 and SGLang/Dynamo: reasoning_content;
#: newer vLLM: reasoning).
REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass
class CallTrace:
    """One tool call as the client assembled it."""

    index: int
    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    arguments: str = ""
    #: Arguments that came as a JSON object instead of a string (a client expects a string).
    arguments_not_string: bool = False
    name_event: int | None = None
    args_event: int | None = None

    @property
    def name(self) -> str:
        return self.names[0] if self.names else ""

    def parsed(self) -> Any:
        """The arguments as JSON (a `ValueError` when they do not concatenate to JSON)."""
        return json.loads(self.arguments) if self.arguments.strip() else {}


@dataclass
class Reading:
    """A client's view of one answer (one scenario, one mode)."""

    mode: str
    content: str = ""
    reasoning: str = ""
    calls: list[CallTrace] = field(default_factory=list)
    finish_reason: str | None = None
    #: Tool-call deltas whose index is missing or not an integer, and other index troubles.
    index_problems: list[str] = field(default_factory=list)
    #: Why there is no answer to check (an HTTP error, no choices, a broken stream), else "".
    problem: str = ""
    events: int = 0

    def wire(self) -> dict[str, Any]:
        """The assembled answer as JSON (what `--json` and the saved transcripts show)."""
        return {
            "reasoning": self.reasoning or None,
            "content": self.content or None,
            "tool_calls": [
                {"id": c.ids[0] if c.ids else None, "name": c.name, "arguments": c.arguments}
                for c in self.calls
            ],
            "finish_reason": self.finish_reason,
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _reasoning_of(obj: dict[str, Any]) -> str:
    return "".join(_text(obj.get(name)) for name in REASONING_FIELDS)


def from_message(body: Any) -> Reading:
    """A non-streamed chat completion's choice 0."""
    reading = Reading("oneshot")
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices[0], dict):
        reading.problem = f"the answer has no choices: {str(body)[:200]!r}"
        return reading
    choice = choices[0]
    message = choice.get("message") or {}
    reading.content = _text(message.get("content"))
    reading.reasoning = _reasoning_of(message)
    reading.finish_reason = choice.get("finish_reason")
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {} if isinstance(call, dict) else {}
        trace = CallTrace(index=i, name_event=0, args_event=0)
        if isinstance(call, dict) and call.get("id"):
            trace.ids.append(str(call["id"]))
        if fn.get("name"):
            trace.names.append(str(fn["name"]))
        args = fn.get("arguments")
        trace.arguments_not_string = args is not None and not isinstance(args, str)
        trace.arguments = args if isinstance(args, str) else json.dumps(args) if args is not None else ""
        reading.calls.append(trace)
    return reading


def from_events(events: list[Any], problem: str = "", done: bool = True) -> Reading:
    """A streamed chat completion: every event's choice-0 delta, merged as a client merges them."""
    reading = Reading("stream", events=len(events))
    by_index: dict[int, CallTrace] = {}
    for number, event in enumerate(events, 1):
        if isinstance(event, dict) and event.get("error"):
            reading.problem = f"event {number} is an error: {str(event['error'])[:200]}"
            break
        for choice in event.get("choices") or [] if isinstance(event, dict) else []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            _merge(reading, by_index, choice, number)
    reading.calls = [by_index[i] for i in sorted(by_index)]
    if problem and not reading.problem:
        reading.problem = problem
    elif not done and not reading.problem:
        reading.problem = "the stream ended without [DONE]"
    return reading


def _merge(reading: Reading, by_index: dict[int, CallTrace], choice: dict[str, Any], number: int) -> None:
    delta = choice.get("delta") or {}
    reading.content += _text(delta.get("content"))
    reading.reasoning += _reasoning_of(delta)
    if choice.get("finish_reason"):
        reading.finish_reason = choice["finish_reason"]
    for position, part in enumerate(delta.get("tool_calls") or []):
        if not isinstance(part, dict):
            reading.index_problems.append(f"event {number}: a tool-call delta that is not an object")
            continue
        index = part.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            shown = "no index" if index is None else f"index {index!r}"
            reading.index_problems.append(f"event {number}: a tool-call delta with {shown}")
            index = position  # where a lenient client would put it
        _merge_call(reading, by_index, index, part, number)


def _merge_call(
    reading: Reading, by_index: dict[int, CallTrace], index: int, part: dict[str, Any], number: int
) -> None:
    trace = by_index.get(index)
    if trace is None:
        if index != len(by_index):
            reading.index_problems.append(
                f"event {number}: a new call at index {index} after {len(by_index)} calls"
            )
        trace = by_index[index] = CallTrace(index=index)
    call_id = part.get("id")
    if call_id and call_id not in trace.ids:
        trace.ids.append(str(call_id))
    fn = part.get("function") or {}
    name = fn.get("name")
    if name:
        if name not in trace.names:
            trace.names.append(str(name))
        if trace.name_event is None:
            trace.name_event = number
    args = fn.get("arguments")
    if isinstance(args, str) and args:
        trace.arguments += args
        if trace.args_event is None:
            trace.args_event = number
    elif args is not None and not isinstance(args, str):
        trace.arguments_not_string = True

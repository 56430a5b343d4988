"""What a client assembles from a server's answer, with the traces the invariants look at.

`from_message` reads a non-streamed chat completion, `from_events` a streamed one (choice 0,
the only one the probe asks for), the way OpenAI clients accumulate deltas: content and
reasoning fragments joined, tool-call deltas merged by their ``index``. Beside the assembled
answer each `CallTrace` keeps what the client-side invariants need: every id and name the call
was given, and at which event its name and its first argument fragment arrived.

Whatever the server sent is read without raising: a part a client could not read (a message that
is null, an event that is not a chunk object, content that is not a string) is named in
`Reading.malformed` (or, when nothing is left to check, `Reading.problem`), never skipped in
silence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..protocol.tools import json_kind
from ..terminal import counted

#: The fields servers put reasoning in (vLLM before 0.10 and SGLang/Dynamo: reasoning_content;
#: newer vLLM: reasoning).
REASONING_FIELDS = ("reasoning_content", "reasoning")

#: Half of a UTF-16 pair, alone: JSON lets a server send one (``\\ud83c``), no text holds it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: At most this many malformed parts are kept (a stream of 20,000 bad events needs only a few named).
MAX_MALFORMED = 20


@dataclass
class Growth:
    """How one streamed text (content, reasoning, a call's arguments) came, delta by delta: whether
    each non-empty delta began with the whole delta before it. A server that sends all the text so
    far in every delta (cumulative deltas: a deployment bug) makes every one do so, and a client
    joining them reads each part again and again; increments of real text almost never do."""

    deltas: int = 0
    #: Deltas that began with the delta before them (and, in `longer`, added text to it).
    repeating: int = 0
    longer: int = 0
    first: str = ""
    last: str = ""
    #: Characters in all the deltas, and in all of them but the last.
    total: int = 0
    before_last: int = 0

    def add(self, fragment: str) -> None:
        if not fragment:
            return
        self.deltas += 1
        self.before_last = self.total
        self.total += len(fragment)
        if self.deltas == 1:
            self.first = fragment
        elif fragment.startswith(self.last):
            self.repeating += 1
            self.longer += len(fragment) > len(self.last)
        self.last = fragment

    @property
    def cumulative(self) -> bool:
        """Every delta after the first began with the one before, and two at least grew it: three
        deltas such as "Hel", "Hello", "Hello wor". (Equal deltas alone, "ha" "ha" "ha", are text.)"""
        return self.deltas >= 3 and self.repeating == self.deltas - 1 and self.longer >= 2

    def repeated_at_end(self, joined: str, whole: str | None = None) -> bool:
        """The last delta is all the text the deltas before it carried (`joined`: every delta
        joined), so a client shows the text twice: "Hel" "lo" "Hello". Told when two deltas at least
        came before it and the text is not one unit repeated ("ha" "ha" "haha" is text a model
        writes), or, after one delta, when the non-streamed answer (`whole`) is that text alone."""
        last = self.last
        if self.deltas < 2 or self.before_last != len(last) or len(joined) != self.total:
            return False
        if joined[: self.before_last] != last:
            return False
        if whole is not None and whole == last:
            return True
        return self.deltas >= 3 and (last + last).find(last, 1) == len(last)


@dataclass
class CallTrace:
    """One tool call as the client assembled it."""

    index: int
    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    arguments: str = ""
    #: Arguments that came as a JSON object instead of a string (a client expects a string).
    arguments_not_string: bool = False
    #: How many deltas gave the call a (non-empty) id, and a name: OpenAI sends each in the
    #: call's first delta only, and clients that join a call's delta strings (the openai
    #: package's stream helper) read a repeated id or name doubled.
    id_deltas: int = 0
    name_deltas: int = 0
    name_event: int | None = None
    args_event: int | None = None
    #: How the arguments came (streamed): `Growth.cumulative` when each delta repeated the ones before.
    growth: Growth = field(default_factory=Growth)

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
    #: Parts of the answer a client cannot read, each a sentence (what came, what a client
    #: expects): the `answer` check fails with them, the others check what could be read.
    malformed: list[str] = field(default_factory=list)
    #: How many malformed parts there were in all (`malformed` keeps the first `MAX_MALFORMED`).
    malformed_count: int = 0
    events: int = 0
    #: How the streamed content and reasoning came, delta by delta (calls keep their own).
    growth: dict[str, Growth] = field(default_factory=lambda: {"content": Growth(), "reasoning": Growth()})

    def bad(self, sentence: str) -> None:
        """Name a part of the answer a client could not read."""
        self.malformed_count += 1
        if len(self.malformed) < MAX_MALFORMED:
            self.malformed.append(sentence)

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


def described(value: Any) -> str:
    """What the server sent, for a failure sentence: its kind and a short JSON rendering."""
    if value is None:
        return "null"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return f"{json_kind(value)} ({text if len(text) <= 80 else text[:77] + '...'})"


def _characters(reading: Reading, text: str, where: str) -> str:
    """`text`, with a lone surrogate in it named as malformed: a JSON escape such as ``\\ud83c``
    without its other half (half an emoji, cut between UTF-16 units) is no character."""
    found = None if text.isascii() else LONE_SURROGATE.search(text)
    if found:
        reading.bad(
            f"{where} holds U+{ord(found.group()):04X}, half of a UTF-16 surrogate pair and no character "
            "(a Python client cannot print or encode it)"
        )
    return text


def _text(reading: Reading, holder: dict[str, Any], key: str, where: str) -> str:
    """`holder[key]` when it is a string; null or absent is ""; anything else is named as malformed."""
    value = holder.get(key)
    if isinstance(value, str):
        return _characters(reading, value, f"{where} {key}")
    if value is None:
        return ""
    reading.bad(f"{where} {key} is {described(value)}, not a string or null")
    return ""


def _reasoning_of(reading: Reading, obj: dict[str, Any], where: str) -> str:
    """The reasoning in `obj`, from whichever field the server uses. A server moving from one name
    to the other may send both with the same text: a client reads one field, so that text counts
    once (joined, it read doubled: a difference from every parser's reading). Two different
    texts are named: what a client gets then depends on the field it reads."""
    texts = [_text(reading, obj, name, where) for name in REASONING_FIELDS]
    given = [t for t in texts if t]
    if len(given) > 1 and given[0] != given[1]:
        reading.bad(
            f"{where} {' and '.join(REASONING_FIELDS)} differ ({described(given[0])} vs "
            f"{described(given[1])}): a client reads one of them"
        )
    return given[0] if given else ""


def _array(reading: Reading, holder: dict[str, Any], key: str, where: str) -> list[Any]:
    """`holder[key]` when it is an array; null or absent is []; anything else is named as malformed."""
    value = holder.get(key)
    if value is None or isinstance(value, list):
        return value or []
    reading.bad(f"{where} {key} is {described(value)}, not an array")
    return []


def _identifier(reading: Reading, holder: dict[str, Any], key: str, where: str, *, null_ok: bool) -> str:
    """An id or a name: `holder[key]` when a string, "" when absent (or null, where `null_ok`: a
    later stream delta's way of saying "none here"). Anything else is named as malformed (a
    client sends the id back as tool_call_id and looks the name up) and kept as its text, so the
    other checks still see the call."""
    value = holder.get(key)
    if isinstance(value, str):
        return _characters(reading, value, f"{where} {key}")
    if value is None and (null_ok or key not in holder):
        return ""
    reading.bad(f"{where} {key} is {described(value)}, not a string")
    return "" if value is None else str(value)


def _function(reading: Reading, call: dict[str, Any], where: str) -> dict[str, Any]:
    """A tool call's ``function`` object ({} when absent; named as malformed when not an object)."""
    fn = call.get("function")
    if fn is None or isinstance(fn, dict):
        return fn or {}
    reading.bad(f"{where} function is {described(fn)}, not an object with name and arguments")
    return {}


def first_choice(body: Any) -> tuple[dict[str, Any] | None, str]:
    """A non-streamed answer's first choice, or why there is none (what came, what a client expects)."""
    if isinstance(body, str):
        return None, f"the answer is not JSON: {body[:200]!r} (a client expects a chat completion object)"
    if not isinstance(body, dict):
        return None, f"the answer is {described(body)}, not a chat completion object"
    choices = body.get("choices")
    if choices is not None and not isinstance(choices, list):
        return None, f"the answer's choices is {described(choices)}, not an array of choices"
    if not choices:
        return None, f"the answer has no choices: {str(body)[:200]!r}"
    choice = choices[0]
    if not isinstance(choice, dict):
        return None, f"choice 0 is {described(choice)}, not an object with a message"
    message = choice.get("message")
    if not isinstance(message, dict):
        what = f"is {described(message)}" if "message" in choice else "is missing"
        return (
            None,
            f"choice 0's message {what}: a client expects an object with role, content and tool_calls",
        )
    return choice, ""


def from_message(body: Any) -> Reading:
    """A non-streamed chat completion's choice 0."""
    reading = Reading("oneshot")
    choice, reading.problem = first_choice(body)
    if choice is None:
        return reading
    message = choice["message"]
    reading.content = _text(reading, message, "content", "the message's")
    reading.reasoning = _reasoning_of(reading, message, "the message's")
    reading.finish_reason = choice.get("finish_reason")
    for i, call in enumerate(_array(reading, message, "tool_calls", "the message's")):
        if not isinstance(call, dict):
            reading.bad(f"tool call {i} is {described(call)}, not an object with id and function")
            continue
        fn = _function(reading, call, f"tool call {i}'s")
        trace = CallTrace(index=i, name_event=0, args_event=0)
        call_id = _identifier(reading, call, "id", f"tool call {i}'s", null_ok=False)
        if call_id:
            trace.ids.append(call_id)
        name = _identifier(reading, fn, "name", f"tool call {i}'s function", null_ok=False)
        if name:
            trace.names.append(name)
        args = fn.get("arguments")
        trace.arguments_not_string = args is not None and not isinstance(args, str)
        trace.arguments = args if isinstance(args, str) else json.dumps(args) if args is not None else ""
        _characters(reading, trace.arguments, f"tool call {i}'s function arguments")
        reading.calls.append(trace)
    return reading


def from_events(
    events: list[Any], problem: str = "", done: bool = True, content_type: str | None = None
) -> Reading:
    """A streamed chat completion: every event's choice-0 delta, merged as a client merges them.
    `content_type` is the answer's header ("" when it had none; None: not known, not checked)."""
    reading = Reading("stream", events=len(events))
    if content_type is not None and not _is_event_stream(content_type):
        shown = f"Content-Type {content_type}" if content_type else "no Content-Type"
        reading.bad(
            f"the stream came with {shown}, not text/event-stream: EventSource clients refuse it "
            "and proxies may hold it back whole"
        )
    by_index: dict[int, CallTrace] = {}
    for number, event in enumerate(events, 1):
        if not isinstance(event, dict):
            reading.bad(f"event {number} is {described(event)}, not a chunk object with choices")
            continue
        if event.get("error") or event.get("object") == "error":
            # {"error": {...}} (vLLM 0.11, SGLang 0.4), or an error body's own shape {"object":
            # "error", "message": ...} (SGLang 0.4's error bodies) sent as an event: not a chunk
            said = event.get("error") or event.get("message") or event
            reading.problem = f"event {number} is an error: {str(said)[:200]}"
            break
        for position, choice in enumerate(_array(reading, event, "choices", f"event {number}'s")):
            if not isinstance(choice, dict):
                reading.bad(
                    f"event {number}'s choice {position} is {described(choice)}, "
                    "not an object with index and delta"
                )
            elif choice.get("index", 0) == 0:
                _merge(reading, by_index, choice, number)
    reading.calls = [by_index[i] for i in sorted(by_index)]
    if problem and not reading.problem:
        reading.problem = problem
    elif not done and not reading.problem and not events:
        reading.problem = "the stream ended without [DONE]"
    elif not done and not reading.problem:  # (what came is all there is: the other checks read it)
        reading.bad("the stream ended without [DONE]")
    return reading


def _is_event_stream(content_type: str) -> bool:
    """Whether a Content-Type header names an event stream (parameters such as charset allowed)."""
    return content_type.partition(";")[0].strip().lower() == "text/event-stream"


def _merge(reading: Reading, by_index: dict[int, CallTrace], choice: dict[str, Any], number: int) -> None:
    where = f"event {number}'s delta"
    delta = choice.get("delta", {})
    if not isinstance(delta, dict):
        reading.bad(f"{where} is {described(delta)}, not an object (a client reads delta.content)")
        delta = {}
    content = _text(reading, delta, "content", where)
    reasoning = _reasoning_of(reading, delta, where)
    reading.content += content
    reading.reasoning += reasoning
    reading.growth["content"].add(content)
    reading.growth["reasoning"].add(reasoning)
    if choice.get("finish_reason"):
        reading.finish_reason = choice["finish_reason"]
    for position, part in enumerate(_array(reading, delta, "tool_calls", where)):
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
                f"event {number}: a new call at index {index} after {counted(len(by_index), 'call')}"
            )
        trace = by_index[index] = CallTrace(index=index)
    where = f"event {number}'s call {index}"
    call_id = _identifier(reading, part, "id", where, null_ok=True)
    if call_id:
        trace.id_deltas += 1
        if call_id not in trace.ids:
            if trace.ids:  # (a second call given the first one's index: clients merge the two)
                reading.index_problems.append(
                    f"event {number}: a call with a new id {call_id!r} at index {index}, which the call "
                    f"{trace.ids[0]!r} already holds (each call takes an index of its own)"
                )
            trace.ids.append(call_id)
    fn = _function(reading, part, where)
    name = _identifier(reading, fn, "name", f"{where} function", null_ok=True)
    if name:
        trace.name_deltas += 1
        if name not in trace.names:
            trace.names.append(name)
        if trace.name_event is None:
            trace.name_event = number
    args = fn.get("arguments")
    if args is not None and not isinstance(args, str):
        # named by the arguments check, and kept as their JSON (as `from_message` keeps them) so
        # the other checks compare what came, not an empty call
        trace.arguments_not_string = True
        args = json.dumps(args, ensure_ascii=False)
    if args:
        trace.arguments += _characters(reading, args, f"{where} function arguments")
        trace.growth.add(args)
        if trace.args_event is None:
            trace.args_event = number

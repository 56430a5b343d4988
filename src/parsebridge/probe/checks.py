"""The client's invariants, each a pass or a fail with the reason, for one scenario in one mode.

`CHECKS` names them in the order the table shows them, each with the sentence the docs and
``parsebridge probe --help`` print. A check that does not apply to a row (an index in a
non-streamed answer, a forced choice when the model was free to choose) is ``n/a``; when the
request itself gave no answer every check but ``answer`` is ``skip``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..formats import reasoning_families, reasoning_format, tool_families, tool_format
from ..terminal import counted
from .assemble import Growth, Reading
from .scenarios import Scenario
from .schema import problems

CHECKS: dict[str, str] = {
    "answer": "the request returned a chat completion clients can read (HTTP 200 with a choice whose "
    "message is an object; a text/event-stream of chunk objects ending in [DONE]; content a string "
    "or null; each call's id and name a string; no lone UTF-16 surrogate in any of them)",
    "index": "every streamed tool-call delta has an integer index, and calls take 0, 1, 2… in order, "
    "each its own (no new id at an index another call holds)",
    "ids": "every call has exactly one id, never changed nor repeated in a later delta, and no two "
    "calls share one",
    "name-first": "a call's name (exactly one, in one delta) arrives with or before its first argument "
    "fragment",
    "arguments": "each call's arguments (fragments joined) are a JSON object, given as a string ('{}', "
    "not '', for none), that validates against the tool's schema, and the name is one of the tools offered",
    "markers": "no marker of any format parsebridge knows (a tool-call or reasoning tag), nor a "
    "special token such as <|im_end|>, in content, reasoning, names or arguments",
    "finish": "finish_reason is tool_calls when calls came back and stop when none did "
    "(a named tool_choice may end with stop, as OpenAI's API does)",
    "forced": "tool_choice required brings at least one call; a named tool brings calls to it only",
    "increments": "each streamed content, reasoning and argument delta carries new text only, not "
    "all the text so far again (cumulative deltas, or a last delta repeating the whole text, read "
    "repeated to a client that joins them)",
    "same-shape": "the streamed answer has the non-streamed one's shape: the same calls (names and "
    "argument keys, in order) and content and reasoning present or absent alike",
}

PASS, FAIL, NA, SKIP = "pass", "fail", "n/a", "skip"

#: A marker counts only when it holds one of these: markers made of plain words ("functools",
#: "Here's my response:") are text a model may well write.
_DELIMITERS = re.compile(r"[<>\[\]|◁▷｜]")


@dataclass(frozen=True)
class Outcome:
    status: str
    detail: str = ""


def _ok() -> Outcome:
    return Outcome(PASS)


def _fail(detail: str) -> Outcome:
    return Outcome(FAIL, detail)


@functools.cache
def all_markers() -> tuple[str, ...]:
    """Every marker of every format parsebridge knows (longest first), read from `formats`."""
    found: set[str] = set()
    for family in tool_families():
        found.update(tool_format(family).markers)
    for family in reasoning_families():
        found.update(reasoning_format(family).markers)
    return tuple(sorted((m for m in found if m and _DELIMITERS.search(m)), key=lambda m: (-len(m), m)))


#: A special token by its shape, for those no format lists: an end of turn such as
#: ``<|im_end|>``, ``<|endoftext|>`` or DeepSeek's ``<｜end▁of▁sentence｜>``, which a server that
#: decodes special tokens into the text leaves there for its clients to show.
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>\s]{1,40}\|>|<｜[^｜<>\s]{1,40}｜>")


def marker_in(text: str, markers: Iterable[str] | None = None) -> str | None:
    """The first known marker in `text` (of `markers`, else of every format), else (with every
    format's) a special token by its shape."""
    for marker in all_markers() if markers is None else markers:
        if marker in text:
            return marker
    found = _SPECIAL_TOKEN.search(text) if markers is None else None
    return found.group() if found else None


def check_index(reading: Reading) -> Outcome:
    if reading.mode != "stream":
        return Outcome(NA)
    return _fail("; ".join(reading.index_problems[:3])) if reading.index_problems else _ok()


def _repeated(what: str, value: str, deltas: int) -> str:
    """Why an id or a name sent again in later deltas fails: what a client then reads."""
    joined = value * min(deltas, 3) + ("..." if deltas > 3 else "")
    return (
        f"its {what} {value!r} came in {deltas} deltas; clients that join a call's delta strings "
        f"(the openai package's stream helper) read {joined!r} (send it in the call's first delta only)"
    )


def check_ids(reading: Reading) -> Outcome:
    seen: dict[str, int] = {}
    for call in reading.calls:
        if not call.ids:
            return _fail(f"call {call.index} has no id")
        if len(call.ids) > 1:
            return _fail(f"call {call.index} changed its id: {' then '.join(call.ids[:3])}")
        if call.id_deltas > 1:
            return _fail(f"call {call.index}: {_repeated('id', call.ids[0], call.id_deltas)}")
        if call.ids[0] in seen:
            return _fail(f"calls {seen[call.ids[0]]} and {call.index} share the id {call.ids[0]!r}")
        seen[call.ids[0]] = call.index
    return _ok()


def check_name_first(reading: Reading) -> Outcome:
    for call in reading.calls:
        if not call.names:
            return _fail(f"call {call.index} has no name")
        if len(call.names) > 1:
            return _fail(f"call {call.index} was named {' then '.join(map(repr, call.names[:3]))}")
        if call.name_deltas > 1:
            return _fail(f"call {call.index}: {_repeated('name', call.name, call.name_deltas)}")
        late = call.name_event is None or (call.args_event or 0) < call.name_event
        if reading.mode == "stream" and call.args_event is not None and late:
            return _fail(
                f"call {call.index}: arguments at event {call.args_event}, the name at event {call.name_event}"
            )
    return _ok()


def check_arguments(reading: Reading, scenario: Scenario) -> Outcome:
    offered = scenario.tool_names()
    for call in reading.calls:
        if call.name and call.name not in offered:
            return _fail(
                f"call {call.index}: {call.name!r} is not one of the tools offered ({', '.join(offered)})"
            )
        if call.arguments_not_string:
            return _fail(f"call {call.index}: arguments came as a JSON value, not a string")
        if not call.arguments.strip():
            return _fail(
                f"call {call.index}: no arguments (an empty string or none): a client's JSON parser "
                "refuses that (json.loads(''), JSON.parse('')); a call without arguments gives '{}'"
            )
        try:
            value = call.parsed()
        except ValueError as exc:
            return _fail(f"call {call.index}: the arguments are not JSON ({exc}): {call.arguments[:120]!r}")
        if not isinstance(value, dict):
            return _fail(f"call {call.index}: the arguments are a {type(value).__name__}, not an object")
        wrong = problems(value, scenario.schema_of(call.name)) if call.name else []
        if wrong:
            return _fail(f"call {call.index} ({call.name}): {'; '.join(wrong[:3])}")
    return _ok()


def check_markers(reading: Reading) -> Outcome:
    places: list[tuple[str, str]] = [("content", reading.content), ("reasoning", reading.reasoning)]
    for call in reading.calls:
        places += [
            (f"call {call.index} name", " ".join(call.names)),
            (f"call {call.index} arguments", call.arguments),
        ]
    for where, text in places:
        marker = marker_in(text)
        if marker is not None:
            return _fail(f"{marker!r} in {where}")
    return _ok()


def check_finish(reading: Reading, scenario: Scenario) -> Outcome:
    got = reading.finish_reason
    if got is None:
        return _fail("no finish_reason")
    if got == "length":
        return _fail("finish_reason length: the answer was cut (raise --max-tokens)")
    if reading.calls:
        allowed = ("tool_calls", "stop") if scenario.forced not in (None, "required") else ("tool_calls",)
    else:
        allowed = ("stop",)
    if got not in allowed:
        return _fail(
            f"finish_reason {got!r} with {counted(len(reading.calls), 'call')}; expected {' or '.join(allowed)}"
        )
    return _ok()


def check_forced(reading: Reading, scenario: Scenario) -> Outcome:
    forced = scenario.forced
    if forced is None:
        return Outcome(NA)
    if not reading.calls:
        return _fail(f"tool_choice {forced} but no call came back")
    if forced != "required":
        other = [c.name for c in reading.calls if c.name != forced]
        if other:
            return _fail(f"tool_choice named {forced!r} but the answer called {', '.join(map(repr, other))}")
    return _ok()


def _streamed_texts(stream: Reading, oneshot: Reading | None) -> list[tuple[str, Growth, str, str | None]]:
    """Each streamed text: where, how it came, what a client joined, and the same text in the
    non-streamed answer (None when there is none to set beside it)."""
    same = oneshot if oneshot is not None and not oneshot.problem else None
    out: list[tuple[str, Growth, str, str | None]] = [
        (name, growth, getattr(stream, name), getattr(same, name) if same else None)
        for name, growth in stream.growth.items()
    ]
    for position, call in enumerate(stream.calls):
        other = same.calls[position].arguments if same and position < len(same.calls) else None
        out.append((f"call {call.index} arguments", call.growth, call.arguments, other))
    return out


def check_increments(stream: Reading, oneshot: Reading | None) -> Outcome:
    if stream.mode != "stream":
        return Outcome(NA)
    for where, growth, joined, whole in _streamed_texts(stream, oneshot):
        if growth.repeated_at_end(joined, whole):
            return _fail(
                f"{where}: its last delta repeats all the text of the {growth.deltas - 1} before it "
                f"({growth.last[:30]!r}): a client joining the deltas shows it twice, {joined[:80]!r}"
            )
        if not growth.cumulative:
            continue
        said = (
            f"{where}: each of its {growth.deltas} deltas repeats all the text before it "
            f"({growth.first[:30]!r}, then ... {growth.last[:30]!r}): the server sends the text so "
            f"far, not what is new, and a client joining the deltas reads {joined[:80]!r}"
        )
        if whole == growth.last != joined:
            said += " (the non-streamed answer is the last delta alone)"
        return _fail(said)
    return _ok()


def shape(reading: Reading) -> dict[str, Any]:
    """What must agree between the modes: calls (names and argument keys), content, reasoning."""
    calls = []
    for call in reading.calls:
        try:
            value = call.parsed()
            keys = sorted(value) if isinstance(value, dict) else type(value).__name__
        except ValueError:
            keys = "not JSON"
        calls.append((call.name, keys))
    return {
        "calls": calls,
        "content": bool(reading.content.strip()),
        "reasoning": bool(reading.reasoning.strip()),
    }


def check_same_shape(stream: Reading, oneshot: Reading | None) -> Outcome:
    if stream.mode != "stream":
        return Outcome(NA)
    if oneshot is None or oneshot.problem:
        return Outcome(SKIP, "no non-streamed answer to compare with")
    a, b = shape(oneshot), shape(stream)
    for key in ("calls", "content", "reasoning"):
        if a[key] != b[key]:
            return _fail(f"{key}: non-streamed {a[key]!r}, streamed {b[key]!r}")
    return _ok()


def _malformed(reading: Reading) -> Outcome:
    """The answer came, but parts of it are not what a client reads (the first three named)."""
    more = reading.malformed_count - 3
    return _fail("; ".join(reading.malformed[:3]) + (f" (and {more} more)" if more > 0 else ""))


def evaluate(scenario: Scenario, reading: Reading, oneshot: Reading | None = None) -> dict[str, Outcome]:
    """Every check for one answer (`oneshot`: the same scenario's non-streamed reading, for a stream)."""
    if reading.problem:
        out = {name: Outcome(SKIP) for name in CHECKS}
        out["answer"] = _fail(reading.problem)
        return out
    return {
        "answer": _malformed(reading) if reading.malformed else _ok(),
        "index": check_index(reading),
        "ids": check_ids(reading),
        "name-first": check_name_first(reading),
        "arguments": check_arguments(reading, scenario),
        "markers": check_markers(reading),
        "finish": check_finish(reading, scenario),
        "forced": check_forced(reading, scenario),
        "increments": check_increments(reading, oneshot),
        "same-shape": check_same_shape(reading, oneshot),
    }

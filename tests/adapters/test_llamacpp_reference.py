"""`llamacpp:` readings equal llama.cpp's own, read with no parsebridge code in the loop.

The reference is ``pb-llamacpp-reference`` (built beside the harness from the same sources):
it calls ``common_chat_templates_apply`` and ``common_chat_parse`` as llama.cpp's tests do and
prints the message, whole and at every prefix (``is_partial``). The inputs:

* every parse of llama.cpp's own chat tests (``tests/test-chat.cpp`` of the same snapshot) that a
  ``llamacpp:`` parser can be asked for (`_llamacpp_cases`), through the template the test used;
* the bundled transcripts of every family whose row in the family table names a template of this
  snapshot, through that template.

Each is read through the public API (``llamacpp:PATH`` parsers) one-shot, and streamed: after
every step the message built from the deltas must be llama.cpp's partial parse of that prefix.
llama.cpp's test inputs are streamed one code point per step, the (longer) transcripts
`FAMILY_STEP` at a time (a partial parse re-reads the whole text).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

import parsebridge as pb
from parsebridge.adapters.registry import get_backend
from parsebridge.conformance.transcripts import bundled_transcripts
from parsebridge.protocol import BackendError, family_table

pytestmark = [pytest.mark.framework, pytest.mark.timeout(900)]

if not get_backend("llamacpp").is_available():
    pytest.skip(
        f"no llama.cpp harness: {get_backend('llamacpp').unavailable_reason()}", allow_module_level=True
    )

from _llamacpp_cases import cases, user_message  # noqa: E402

from parsebridge._frameworks.llamacpp_build import REFERENCE  # noqa: E402
from parsebridge.adapters.llamacpp import _templates  # noqa: E402

SNAP = _templates.snapshot()
assert SNAP is not None
SOURCE = (SNAP.root / "tests" / "test-chat.cpp").read_text(encoding="utf-8")
USER = user_message(SOURCE)


def _test_cases() -> list[dict[str, Any]]:
    out = []
    for c in cases(SOURCE):
        path = SNAP.root / "templates" / c.template.rsplit("/", 1)[-1]
        if not path.is_file():
            continue
        req = c.request(str(path), [USER])
        if c.reasoning_format == "none":  # a tool parser: enable_thinking reaches it as the server's kwarg
            req["kwargs"] = {"enable_thinking": json.dumps(c.enable_thinking)}
        req["id"] = f"test-chat.cpp:{c.line}:{path.stem}"
        out.append(req)
    return out


#: Code points per stream step for the family transcripts (llama.cpp's test inputs go one at a time):
#: a partial parse re-reads the whole text, so one per step costs the square of a long output.
FAMILY_STEP = 4


def _family_cases() -> list[dict[str, Any]]:
    table, out = family_table(), []
    names = set(SNAP.template_names())
    for t in bundled_transcripts():
        fam = table.get(t.kind, t.family)
        template = fam.parser_for("llamacpp") if fam else None
        if template not in names:
            continue
        tools = [
            {
                "name": f["name"],
                "description": f.get("description", ""),
                "parameters": json.dumps(f.get("parameters", {})),
            }
            for f in (tool.get("function", tool) for tool in t.tools)
        ]
        tool_kind = t.kind == "tool"
        out.append(
            {
                "id": f"{t.kind}:{fam.name}:{t.id}",  # type: ignore[union-attr]
                "template_path": str(SNAP.templates / f"{template}.jinja"),
                "tools": tools if tool_kind else [],
                "messages": [{"role": "user", "content": "Hello"}],
                "reasoning_format": "auto",
                # A tool parser renders with thinking off (its default); a pipeline as the transcript says.
                "enable_thinking": False if tool_kind else t.reasoning_started_in_prompt,
                "tool_parser": tool_kind,
                "parallel_tool_calls": None,
                "tool_choice": "auto",
                "input": t.output,
                "step": FAMILY_STEP,
            }
        )
    return out


CASES = _test_cases() + _family_cases()


@pytest.fixture(scope="module")
def readings() -> dict[str, dict[str, Any]]:
    lines = "".join(json.dumps(c) + "\n" for c in CASES)
    done = subprocess.run(
        [str(SNAP.root / "bin" / REFERENCE)],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == len(CASES)
    return {c["id"]: r for c, r in zip(CASES, out, strict=True)}


def _parser(case: dict[str, Any]) -> Any:
    spec = f"llamacpp:{case['template_path']}"
    tools = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": json.loads(t["parameters"]),
            },
        }
        for t in case["tools"]
    ]
    options: dict[str, Any] = {"messages": case["messages"], "tool_choice": case["tool_choice"]}
    if case["parallel_tool_calls"] is not None:
        options["parallel_tool_calls"] = case["parallel_tool_calls"]
    if case["reasoning_format"] == "none" or case.get("tool_parser"):
        options["reasoning_format"] = case["reasoning_format"]
        if "kwargs" in case:
            options["chat_template_kwargs"] = {k: json.loads(v) for k, v in case["kwargs"].items()}
        return pb.get_tool_parser(spec, tools, **options), None, True
    return pb.get_pipeline(spec, spec, tools=tools, **options), case["enable_thinking"], False


def _message(content: str | None, reasoning: str | None, calls: Iterator[tuple[str, str]]) -> dict[str, Any]:
    return {
        "content": content or "",
        "reasoning_content": reasoning or "",
        "tool_calls": [list(c) for c in calls],
    }


def _expected(msg: dict[str, Any]) -> dict[str, Any]:
    return _message(
        msg["content"], msg["reasoning_content"], ((c["name"], c["arguments"]) for c in msg["tool_calls"])
    )


def _call(c: Any) -> tuple[str, Any]:
    """A call's name and arguments: parsed, or the text kept verbatim where it is not JSON."""
    return c.name, (c.invalid_arguments if c.invalid_arguments is not None else c.arguments)


def _oneshot(parser: Any, started: bool | None, tool: bool, text: str) -> dict[str, Any]:
    if tool:
        r = parser.parse(text)
        return _message(r.content, r.reasoning, (_call(c) for c in r.tool_calls))
    r = parser.parse(text, reasoning_started=started)
    return _message(r.content, r.reasoning, (_call(c) for c in r.tool_calls))


def _same_calls(ours: list[list[Any]], theirs: list[list[Any]]) -> bool:
    """Names equal; arguments equal as JSON (ours are parsed), or verbatim where llama.cpp's are not JSON."""
    if [c[0] for c in ours] != [c[0] for c in theirs]:
        return False
    for (_, mine), (_, text) in zip(ours, theirs, strict=True):
        try:
            if mine != json.loads(text or "{}"):
                return False
        except ValueError:
            if mine != text:
                return False
    return True


class _Built:
    """The message a streaming client builds from the deltas (content, reasoning, calls by index)."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, tuple[str, str]] = {}

    def add(self, d: Any) -> dict[str, Any]:
        self.content.append(d.content)
        self.reasoning.append(d.reasoning)
        for c in d.tool_calls or ():
            name, args = self.calls.get(c.index, ("", ""))
            self.calls[c.index] = (c.name or name, args + c.arguments)
        calls = (self.calls[i] for i in sorted(self.calls))
        return _message("".join(self.content), "".join(self.reasoning), calls)


def _stream_states(
    parser: Any, started: bool | None, tool: bool, text: str, step: int
) -> Iterator[dict[str, Any]]:
    """The message built from every delta so far, after each step of `step` code points, then
    after the final step (the stream's flush).

    The steps go in one exchange (`feed_many`, what the conformance runner uses); where one of
    them throws, the stream is fed again one `feed` at a time, to fail at that step."""
    pieces = [text[k - step : k] for k in range(step, len(text) + step, step)]
    stream = parser.stream() if tool else parser.stream(reasoning_started=started)
    built = _Built()
    try:
        deltas = stream.feed_many(pieces)
    except BackendError:
        stream = parser.stream() if tool else parser.stream(reasoning_started=started)
        deltas = (stream.feed(piece) for piece in pieces)
    for delta in deltas:
        yield built.add(delta)
    yield built.add(stream.flush())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_llamacpp_reads_as_common_chat_parse(
    case: dict[str, Any], readings: dict[str, dict[str, Any]]
) -> None:
    ref = readings[case["id"]]
    parser, started, tool = _parser(case)
    if "error" in ref:
        with pytest.raises(BackendError):
            _oneshot(parser, started, tool, case["input"])
        return
    ours, theirs = _oneshot(parser, started, tool, case["input"]), _expected(ref["oneshot"])
    assert (ours["content"], ours["reasoning_content"]) == (theirs["content"], theirs["reasoning_content"])
    assert _same_calls(ours["tool_calls"], theirs["tool_calls"]), (ours, theirs)
    states = _stream_states(parser, started, tool, case["input"], case.get("step", 1))
    for points, msg in ref["stream"]:
        if "error" in msg:  # the server's stream ends at a step that throws; so does ours
            with pytest.raises(BackendError):
                next(states)
            return
        assert next(states) == _expected(msg), f"after {points} code points"
    assert next(states, None) is None

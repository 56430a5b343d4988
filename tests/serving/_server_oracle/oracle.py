"""One oracle comparison: a transcript, a chunking, a request shape and an ending, on both sides.

`compare(case, scenario)` runs the framework's real server (`vllm.run` /
`sglang.run`) and parsebridge's `OutputProcessor` on the same engine steps
and returns both `Run`s. `Scenario` names the request (`auto`, `no_tools`,
`none`, `required`, `named`), the chunking (``char1``, ``char3``, ``char20``,
``tok1``) and the ending (``stop``: the stop came with the last chunk;
``eos``: an end token after it; ``length``: cut at two thirds with
``finish_reason="length"``).

``required`` and ``named`` requests get the output a grammar-constrained
engine produces for them: the server decides per tool parser whether it
constrains generation to the model's own call format (then the transcript's
output is that output) or to JSON (`forced_output`: the transcript's calls as
vLLM's arguments object for a named function, or as the
``[{"name": …, "parameters": …}]`` array of vLLM's ``required`` and both of
SGLang's), after the transcript's reasoning block when it has one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from parsebridge import BackendError

from . import sglang as sglang_server
from . import vllm as vllm_server
from .cases import Case
from .common import Run, Script, ServerError, chunked, parsebridge_run, tokenizer_of, without_unnamed_calls

CHUNKINGS = ("char1", "char3", "char20", "tok1")
REQUESTS = ("auto", "no_tools", "none", "required", "named")
FORCED = ("required", "named")
ENDINGS = ("stop", "eos", "length")

#: Tools for requests on transcripts that declare none (a tool parser without tools is still a request shape).
DEFAULT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@dataclass(frozen=True)
class Scenario:
    chunking: str = "tok1"
    request: str = "auto"
    ending: str = "stop"

    @property
    def id(self) -> str:
        return f"{self.request}-{self.chunking}-{self.ending}"


def request_shape(case: Case, request: str) -> tuple[list[dict[str, Any]] | None, Any]:
    """(tools, tool_choice) a client sends for this request kind (tool_choice None: not sent)."""
    tools = list(case.transcript.tools or []) or DEFAULT_TOOLS
    if request == "auto":
        return tools, "auto"
    if request == "none":
        return tools, "none"
    if request == "no_tools":
        return None, None
    if request == "required":
        return tools, "required"
    if request == "named":
        return tools, {"type": "function", "function": {"name": _forced_calls(case, tools)[0][0]}}
    raise ValueError(f"unknown request kind {request!r}")


@functools.lru_cache(maxsize=32)
def processor(specs: tuple[str | None, str | None], tools_key: str, conventions: str | None = None) -> Any:
    """A cached `OutputProcessor` for these specs and default tools (`conventions`: builtin's option)."""
    import json

    from parsebridge.serving import OutputProcessor

    options = {"conventions": conventions} if conventions else {}
    return OutputProcessor(specs[0], specs[1], tools=json.loads(tools_key), on_error="raise", **options)


def _tools_key(tools: list[dict[str, Any]] | None) -> str:
    import json

    return json.dumps(tools or [], sort_keys=True)


def _tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or t).get("name")) for t in tools]


def _forced_calls(case: Case, tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of the calls a forced request produces: the transcript's calls to declared
    tools (a named request: the first one), or one call to the first tool."""
    expected = case.transcript.expected
    names = _tool_names(tools)
    calls = [
        (c.name, dict(c.arguments))
        for c in (expected.tool_calls if expected is not None else [])
        if c.name in names and c.arguments is not None
    ]
    return calls or [(names[0], {"city": "Paris"})]


def _reasoning_block(case: Case, proc: Any) -> str:
    """The transcript's output up to and including its reasoning end marker ("" without one)."""
    if case.reasoning is None or proc.reasoning_parser is None:
        return ""
    inner = proc.reasoning_parser.inner
    markers = tuple(getattr(inner, "markers", None) or ())
    engine = getattr(inner, "engine", None)
    if len(markers) < 2 and engine is not None:
        markers = tuple(engine.markers())
    end = markers[1] if len(markers) > 1 else None
    output = case.transcript.output
    if not end or end not in output:
        return ""
    return output[: output.index(end) + len(end)] + "\n\n"


def forced_output(case: Case, request: str, proc: Any) -> str:
    """What a grammar-constrained engine sends for a ``required``/``named`` request (see above)."""
    import json

    tools, tool_choice = request_shape(case, request)
    assert tools is not None
    driver = vllm_server if case.framework == "vllm" else sglang_server
    shape = driver.forced_output_format(case.tool, tools, tool_choice)
    if shape == "native":
        return str(case.transcript.output)
    calls = _forced_calls(case, tools)
    if request == "named":
        calls = calls[:1]
    if shape == "arguments":
        body = json.dumps(calls[0][1], ensure_ascii=False)
    else:
        body = json.dumps([{"name": n, "parameters": a} for n, a in calls], ensure_ascii=False)
    return _reasoning_block(case, proc) + body


def script_for(case: Case, scenario: Scenario, proc: Any, tools: list[dict[str, Any]] | None) -> Script:
    text = case.transcript.output
    if scenario.request in FORCED:
        text = forced_output(case, scenario.request, proc)
    chunks = chunked(proc, text, scenario.chunking, tools)
    tokenizer = tokenizer_of(proc, tools)
    prompt: list[int] = []
    if case.transcript.reasoning_started_in_prompt and case.framework == "vllm":
        # A chat template that ends the prompt with the start marker: its ids, as vLLM's engine passes them.
        start = _start_marker(proc)
        prompt = [i for _, ids in proc.engine_chunks(start, 1 << 30, list(tools or [])) for i in (ids or [])]
        prompt = prompt if start else []
    if scenario.ending == "length":
        cut = max(1, (2 * len(chunks)) // 3)
        return Script(chunks[:cut], "length", prompt)
    if scenario.ending == "eos":
        eos = getattr(tokenizer, "eos_token_id", None)
        return Script(chunks, "stop", prompt, eos_ids=[eos] if isinstance(eos, int) else [])
    return Script(chunks, "stop", prompt)


def _start_marker(proc: Any) -> str:
    inner = proc.reasoning_parser.inner
    markers = getattr(inner, "markers", None) or ()
    if markers and markers[0]:
        return str(markers[0])
    engine = getattr(inner, "engine", None)
    start = engine.markers()[0] if engine is not None else None
    # No start marker (the parser reasons from the first token): an empty prompt, as the adapter sends.
    return str(start or "")


def server_run(case: Case, scenario: Scenario, proc: Any, script: Script) -> Run:
    tools, tool_choice = request_shape(case, scenario.request)
    tokenizer = tokenizer_of(proc, request_shape(case, "auto")[0])
    if case.framework == "vllm":
        return vllm_server.run(
            case.reasoning, case.tool, tokenizer, script, tools=tools, tool_choice=tool_choice
        )
    return sglang_server.run(
        case.reasoning,
        case.tool,
        tokenizer,
        script,
        tools=tools,
        tool_choice=tool_choice,
        reasoning_started=bool(case.transcript.reasoning_started_in_prompt),
    )


def compare(
    case: Case, scenario: Scenario, *, swap: str | None = None, conventions: str | None = None
) -> tuple[Run, Run]:
    """(the framework server's run, parsebridge's run) for one case and scenario.

    `swap`: run parsebridge with another backend (e.g. ``"builtin"``) for the
    same families — the negative control; `conventions`: the swapped builtin's.
    """
    tools, tool_choice = request_shape(case, scenario.request)
    all_tools = request_shape(case, "auto")[0]
    swap_specs = None
    if swap is not None:
        swap_specs = _swapped(case, swap)
    proc = processor(case.specs, _tools_key(all_tools))
    script = script_for(case, scenario, proc, all_tools)
    failed: ServerError | None = None
    try:
        server = server_run(case, scenario, proc, script)
    except ServerError as exc:  # the server's own parser raised: an in-band error event
        failed = exc
    ours = processor(swap_specs or case.specs, _tools_key(all_tools), conventions)
    started = True if case.transcript.reasoning_started_in_prompt else None
    try:
        mine = parsebridge_run(ours, script, tools=tools, tool_choice=tool_choice, reasoning_started=started)
    except BackendError as exc:
        if failed is not None:
            raise BothFailed(f"server: {failed}; parsebridge: {exc}") from exc
        raise
    if failed is not None:
        raise failed
    return without_unnamed_calls(server), mine


class BothFailed(RuntimeError):
    """The server sent an error event and parsebridge raised `BackendError` on the same output:
    they agree (under ``on_error="raise"`` the processor's SSE drivers send the error event too)."""


def probe(framework: str) -> str | None:
    """Why this release's server cannot be driven by the harness (None: a plain answer streams through).

    A server without parsers must stream "Hello." back as content; anything
    else (an unknown constructor, a missing runtime setting, an import that
    fails) means the release needs a shim the harness does not have yet.
    """
    from parsebridge.adapters import _tokenizers

    try:
        tokenizer = _tokenizers.build_tokenizer((), None)
        text = "Hello."
        script = Script([(text, list(tokenizer.encode(text, add_special_tokens=False)))])
        driver = vllm_server if framework == "vllm" else sglang_server
        got = driver.run(None, None, tokenizer, script)
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    if got.message["content"] != "Hello." or got.finish_reason != "stop":
        return f"a plain answer came back as {got.message} / {got.finish_reason!r}"
    return None


def _swapped(case: Case, backend: str) -> tuple[str | None, str | None]:
    import parsebridge as pb

    table = pb.family_table()
    t = case.transcript
    tool_family = t.resolve_family(table) if t.kind == "tool" else None
    reasoning_family = t.resolve_reasoning_family(table)
    r = reasoning_family.parser_for(backend) if reasoning_family is not None else None
    tl = tool_family.parser_for(backend) if tool_family is not None else None
    return (f"{backend}:{r}" if r else None, f"{backend}:{tl}" if tl else None)

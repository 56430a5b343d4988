"""The oracle's test body, shared by test_server_oracle_vllm.py and test_server_oracle_sglang.py."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from _server_oracle.cases import Case, cases
from _server_oracle.common import ServerError, chunked, describe
from _server_oracle.oracle import (
    CHUNKINGS,
    ENDINGS,
    FORCED,
    REQUESTS,
    BothFailed,
    Scenario,
    _tools_key,
    compare,
    processor,
    request_shape,
)

from parsebridge import ParserUnsupportedError

#: Configurations parsebridge refuses to build (`ParserUnsupportedError`): vLLM registers
#: `openai_gptoss` as a boundary-detection stub whose text parsing raises NotImplementedError;
#: its server parses gpt-oss with HarmonyParser on token ids when the model is gpt-oss, which a
#: text-level comparison cannot stand in for. (framework, reasoning, tool)
REFUSED = {
    ("vllm", "openai_gptoss", None),
    ("vllm", "openai_gptoss", "openai"),
}


#: Tool parsers whose server path the harness cannot drive: SGLang hands DeepSeek V4/V4.1 chats to
#: DeepSeek's own encoder (the `deepseek-recipe` package), which needs the model's real vocabulary
#: (none ships in a PyPI package) and streams outside the parser path. The test checks that the
#: server still refuses, so a release that changes this shows up. (framework, tool)
UNDRIVABLE = {("sglang", "deepseekv4"), ("sglang", "deepseekv41")}


#: Recorded differences (case id → why): expected to fail (xfail); a case that agrees again fails
#: so the entry is removed.
KNOWN_DIFFERENCES: dict[str, str] = {}


@functools.cache
def framework_cases(framework: str) -> list[Case]:
    try:
        return cases(framework)
    except Exception:  # the framework is not installed: the tests skip with the reason below
        return []


def unusable(framework: str) -> str | None:
    """Why the framework's server cannot be driven here (None: it can)."""
    import parsebridge as pb

    try:
        reason = pb.get_backend(framework).unavailable_reason()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if reason:
        return reason
    return None


#: Releases whose own chat server this harness does not drive, reviewed: (framework, first release
#: that is driven) → why. An undrivable release not listed here fails `test_*_server_drivable`.
NOT_DRIVEN = {
    ("sglang", (0, 5, 0)): (
        "SGLang 0.4.x's chat server module imports Pillow, sentencepiece and a torch of its own era, "
        "none of which its parsers-only install has (its parsers are pure Python); with the matrix's "
        "CPU torch 2.13 it still fails at import (torch._C._cpu has no _is_amx_tile_supported)"
    ),
}


def reviewed_not_driven(framework: str) -> str | None:
    """The reviewed reason this release's server is not driven (None: it is expected to be)."""
    for (fw, first_driven), why in NOT_DRIVEN.items():
        if fw == framework and _release(fw) < first_driven:
            return why
    return None


def check_drivable(framework: str, undrivable: str | None) -> None:
    """The body of `test_*_server_drivable`: a reviewed undriven release is an xfail, any other
    release whose server cannot be driven fails (never silently passed over)."""
    if undrivable is None:
        return
    why = reviewed_not_driven(framework)
    if why is None:
        pytest.fail(f"{framework}'s server cannot be driven and no reviewed reason says why: {undrivable}")
    pytest.xfail(f"server not driven: {why} (here: {undrivable})")


def driven_params(cases_: list[Case], undrivable: str | None) -> Any:
    """`param(cases_)`, or one placeholder the test turns into the release's reviewed xfail."""
    if undrivable is None:
        return param(cases_)
    return [pytest.param(None, id="server-not-driven")]


@functools.cache
def server_undrivable(framework: str) -> str | None:
    """Why this release's own server cannot be driven here (None: it can); recorded, not hidden."""
    from _server_oracle import sglang as sglang_server
    from _server_oracle import vllm as vllm_server
    from _server_oracle.oracle import probe

    try:
        (vllm_server if framework == "vllm" else sglang_server).serving_module()
    except Exception as exc:
        return f"its serving module does not import: {type(exc).__name__}: {str(exc)[:300]}"
    return probe(framework)


def per_config(framework: str) -> list[Case]:
    """The first transcript of each distinct parser configuration (reasoning, tool)."""
    seen: dict[tuple[str | None, str | None], Case] = {}
    for case in framework_cases(framework):
        seen.setdefault((case.reasoning, case.tool), case)
    return list(seen.values())


def scenarios(case: Case) -> list[Scenario]:
    requests = REQUESTS if case.tool is not None else ("no_tools",)
    return [Scenario(c, r, e) for c, r, e in itertools.product(CHUNKINGS, requests, ENDINGS)]


def transcript_scenarios(case: Case) -> list[Scenario]:
    """Per transcript: one token and three characters a step; with a tool parser, auto, then
    required (one token a step) and a named function (three characters a step)."""
    if case.tool is None:
        return [Scenario("tok1", "no_tools", "stop"), Scenario("char3", "no_tools", "eos")]
    return [
        Scenario("tok1", "auto", "stop"),
        Scenario("char3", "auto", "eos"),
        Scenario("tok1", "required", "stop"),
        Scenario("char3", "named", "eos"),
    ]


def check(case: Case, scenario: Scenario) -> list[str]:
    """Compare one case on one scenario; the differences found (a refusal must be in `REFUSED`)."""
    import parsebridge as pb

    if (case.framework, case.tool) in UNDRIVABLE:
        try:
            compare(case, scenario)
        except Exception:
            return []
        return [f"{scenario.id}: the server streamed a result; {case.tool} is drivable now: compare it"]
    try:
        server, ours = compare(case, scenario)
    except BothFailed:
        return []
    except ServerError:
        # vLLM 0.11's own required/named loop can fail the stream (a JSON decode of a partial
        # array after reasoning that opened in the prompt): part of that recorded difference.
        if _forced_in_server_loop(case, scenario):
            return [f"{scenario.id}: {RELEASE_FORCED}"]
        raise
    except pb.ParserUnsupportedError as refused:
        if (case.framework, case.reasoning, case.tool) in REFUSED:
            return []
        return [f"{scenario.id}: parsebridge refuses a configuration not known to be a stub: {refused}"]
    same = server.message == ours.message and server.finish_reason == ours.finish_reason
    if same and server.merged() == ours.merged():
        return []
    known = _release_difference(case, scenario, server, ours)
    return [f"{scenario.id}: {known or describe(server, ours)}"]


#: Recorded per-release differences (reviewed; counted as differing in the support table's record):
#: vLLM 0.11's server reports ``tool_calls`` whenever calls were streamed, also when the engine
#: stopped on ``length``; OutputProcessor keeps ``length`` (a cut-off call stays visible), as
#: vLLM 0.33 does.
RELEASE_FINISH = "vLLM 0.11 finish_reason: tool_calls over length (recorded release difference)"
#: vLLM 0.11 decides ``tool_calls`` from its parser's internal call record
#: (``prev_tool_call_arr``), so a call the parser began but never streamed (malformed, or JSON
#: that turned out to be an answer) still makes ``tool_calls`` with no call in the message;
#: OutputProcessor says ``stop``, as vLLM 0.33 does.
RELEASE_PHANTOM = "vLLM 0.11 finish_reason: tool_calls without a call (recorded release difference)"
#: vLLM 0.11 skips an engine step with neither text nor token ids before any token ("chunked
#: prefill"), also the finishing step of a generation with no tokens at all, so the client never
#: gets a ``finish_reason``; OutputProcessor ends the choice with ``stop``, as vLLM 0.33 does.
RELEASE_EMPTY = "vLLM 0.11 sends no finish for an empty generation (recorded release difference)"
#: vLLM before 0.33 handles ``tool_choice="required"`` and named functions in its server loop,
#: outside the parsers parsebridge drives (with a reasoning parser it sends no reasoning for a
#: forced call, and it reports ``tool_calls`` over ``length``); OutputProcessor reads such output
#: with its own JSON stages there (docs/serving.md).
RELEASE_FORCED = "vLLM 0.11 required/named: the server's own loop (recorded release difference)"
RELEASE_DIFFERENCES = (RELEASE_FINISH, RELEASE_PHANTOM, RELEASE_EMPTY, RELEASE_FORCED)


@functools.cache
def _server_forced(framework: str) -> bool:
    import parsebridge as pb

    return bool(pb.get_backend(framework).server_forced_choices())


def _forced_in_server_loop(case: Case, scenario: Scenario) -> bool:
    """A required/named request on a vLLM release that parses those in its own server loop."""
    return (
        case.framework == "vllm"
        and _release(case.framework) < (0, 13, 0)
        and scenario.request in FORCED
        and not _server_forced(case.framework)
    )


def _release_difference(case: Case, scenario: Scenario, server: Any, ours: Any) -> str | None:
    """Which recorded release difference explains server ≠ ours (None: none does)."""
    if case.framework != "vllm" or _release(case.framework) >= (0, 13, 0):
        return None
    if _forced_in_server_loop(case, scenario):
        return RELEASE_FORCED
    if server.message != ours.message or server.merged() != ours.merged():
        return None
    finishes = (server.finish_reason, ours.finish_reason)
    if finishes == ("tool_calls", "length"):
        return RELEASE_FINISH
    if finishes == ("tool_calls", "stop") and not server.message["tool_calls"]:
        return RELEASE_PHANTOM
    if finishes == (None, "stop"):
        return RELEASE_EMPTY
    return None


@functools.cache
def _release(framework: str) -> tuple[int, ...]:
    import re

    import parsebridge as pb

    version = pb.get_backend(framework).version() or "0"
    return tuple(int(re.match(r"\d*", p)[0] or 0) for p in version.split(".")[:3])


#: framework → config id → [runs, runs that differ]; written to $REPORT_DIR by `write_record`.
TALLY: dict[str, dict[str, list[int]]] = {}
#: framework → request kind (auto, no_tools, none, required, named) → [runs, runs that differ].
BY_REQUEST: dict[str, dict[str, list[int]]] = {}
UNDRIVEN: dict[str, set[str]] = {}


def run_all(case: Case, which: list[Scenario]) -> None:
    failures: list[str] = []
    driven = not (
        (case.framework, case.tool) in UNDRIVABLE or (case.framework, case.reasoning, case.tool) in REFUSED
    )
    for scenario in which:
        found = check(case, scenario)
        failures += found
        if driven:
            counts = BY_REQUEST.setdefault(case.framework, {}).setdefault(scenario.request, [0, 0])
            counts[0] += 1
            counts[1] += bool(found)
    config = f"{case.reasoning or '-'}+{case.tool or '-'}"
    tally = TALLY.setdefault(case.framework, {}).setdefault(config, [0, 0])
    tally[0] += len(which)
    tally[1] += len(failures)
    if not driven:
        UNDRIVEN.setdefault(case.framework, set()).add(config)
    known = KNOWN_DIFFERENCES.get(case.id)
    if known is not None:
        if failures:
            pytest.xfail(f"recorded difference: {known}")
        pytest.fail(f"{case.id} agrees with the server now: remove it from KNOWN_DIFFERENCES")
    if failures and all(f.endswith(RELEASE_DIFFERENCES) for f in failures):
        kinds = sorted({k for f in failures for k in RELEASE_DIFFERENCES if f.endswith(k)})
        pytest.xfail(f"{len(failures)} of {len(which)} runs: {'; '.join(kinds)}")
    if failures:
        pytest.fail(
            f"{case.id} differs from {case.framework}'s server in {len(failures)} of "
            f"{len(which)} runs:\n" + "\n".join(failures[:12])
        )


def param(cases_: list[Case]) -> Any:
    return [pytest.param(c, id=c.id.split("-", 1)[1]) for c in cases_]


RECORD_NAME = "server-oracle.json"


def write_record(framework: str) -> None:
    """The oracle's result for this release, beside the env's conformance report ($REPORT_DIR).

    `parsebridge conformance support` renders it as the support table's
    "server-equivalent" column. Written only when the oracle ran here.
    """
    import json
    import os
    from pathlib import Path

    import parsebridge as pb

    target = os.environ.get("REPORT_DIR")
    tally = TALLY.get(framework, {})
    why = server_undrivable(framework) if unusable(framework) is None else None
    why = (reviewed_not_driven(framework) or why) if why else None
    if not target or not (tally or why):
        return
    try:
        version = pb.get_backend(framework).version()
    except Exception:
        version = None
    undriven = sorted(UNDRIVEN.get(framework, ()))
    differing = sorted(c for c, (_, bad) in tally.items() if bad and c not in undriven)
    record = {
        "framework": framework,
        "version": version,
        "configurations": len(tally) - len(undriven),
        "runs": sum(n for c, (n, _) in tally.items() if c not in undriven),
        "runs_differing": sum(bad for c, (_, bad) in tally.items() if c not in undriven),
        "differing": differing,
        "not_driven": undriven,
        "undrivable": why,
        "by_request": {
            k: {"runs": n, "runs_differing": bad}
            for k, (n, bad) in sorted(BY_REQUEST.get(framework, {}).items())
        },
        "checked": (
            "assembled message, finish_reason, delta order up to grouping; tool_choice auto, none, "
            "required, named and no tools"
        ),
        "command": f"pytest tests/serving/test_server_oracle_{framework}.py",
    }
    path = Path(target)
    path.mkdir(parents=True, exist_ok=True)
    previous = path / RECORD_NAME
    records = json.loads(previous.read_text()) if previous.exists() else {}
    records[framework] = record
    previous.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")


def split_after_opened_prompt(framework: str) -> list[str]:
    """The transcripts every test here runs at one token a step whose token ids split a multi-byte
    character (ids with no text of their own, in the tokenizer both sides read: the family's real
    vocabulary where one is installed) after a prompt that opens reasoning."""
    found = []
    for case in framework_cases(framework):
        t = case.transcript
        if not t.reasoning_started_in_prompt or t.output.isascii():
            continue
        tools = request_shape(case, "auto")[0]
        try:
            proc = processor(case.specs, _tools_key(tools))
        except ParserUnsupportedError:  # a refused configuration: its test says so
            continue
        if any(ids and not text for text, ids in chunked(proc, t.output, "tok1", tools)):
            found.append(case.id)
    return found


def oracle_suite(framework: str, why: str | None, undrivable: str | None) -> dict[str, Any]:
    """The tests every server-oracle module runs, named ``test_<framework>_…`` for its module's
    `globals()` (`why`: the module's `unusable`; `undrivable`: its `server_undrivable`), and the
    fixture that writes the release's record once the module has run."""

    @pytest.fixture(scope="module", autouse=True)
    def _record() -> object:
        """After the module: the release's oracle result for the support table (see `write_record`)."""
        yield
        write_record(framework)

    def server_drivable() -> None:
        """Every release streams a plain answer through its own server, or is a reviewed "server not
        driven" (`NOT_DRIVEN`, shown in docs/support.md): never silently passed over."""
        check_drivable(framework, undrivable)

    @pytest.mark.parametrize("case", driven_params(per_config(framework), undrivable) if why is None else [])
    def server_every_scenario(case) -> None:  # type: ignore[no-untyped-def]
        if case is None:
            check_drivable(framework, undrivable)
        run_all(case, scenarios(case))

    @pytest.mark.parametrize(
        "case", driven_params(framework_cases(framework), undrivable) if why is None else []
    )
    def server_every_transcript(case) -> None:  # type: ignore[no-untyped-def]
        if case is None:
            check_drivable(framework, undrivable)
        run_all(case, transcript_scenarios(case))

    def transcripts_split_a_character_after_a_prompt_that_opens_reasoning() -> None:
        """`test_<framework>_server_every_transcript` runs, at one token a step, token ids that split a
        multi-byte character after a prompt that opens reasoning (e.g.
        qwen3_thinking-reasoning-unicode-emoji in Qwen's real vocabulary): the case stays covered."""
        check_drivable(framework, undrivable)
        assert split_after_opened_prompt(framework)

    tests = [
        server_drivable,
        server_every_scenario,
        server_every_transcript,
        transcripts_split_a_character_after_a_prompt_that_opens_reasoning,
    ]
    named = {f"test_{framework}_{test.__name__}": test for test in tests}
    for name, test in named.items():
        test.__name__ = test.__qualname__ = name
    return {"_record": _record, **named}

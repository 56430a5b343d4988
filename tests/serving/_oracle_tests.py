"""The oracle's test body, shared by test_server_oracle_vllm.py and test_server_oracle_sglang.py."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from _server_oracle.cases import Case, cases
from _server_oracle.common import describe
from _server_oracle.oracle import CHUNKINGS, ENDINGS, REQUESTS, BothFailed, Scenario, compare

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
    except pb.ParserUnsupportedError as refused:
        if (case.framework, case.reasoning, case.tool) in REFUSED:
            return []
        return [f"{scenario.id}: parsebridge refuses a configuration not known to be a stub: {refused}"]
    same = server.message == ours.message and server.finish_reason == ours.finish_reason
    if same and server.merged() == ours.merged():
        return []
    if (
        (server.finish_reason, ours.finish_reason) == ("tool_calls", "length")
        and server.message == ours.message
        and server.merged() == ours.merged()
        and _release(case.framework) < (0, 13, 0)
    ):
        return [f"{scenario.id}: {RELEASE_FINISH}"]
    return [f"{scenario.id}: {describe(server, ours)}"]


#: A recorded per-release difference: vLLM 0.11's server reports ``tool_calls`` whenever calls were
#: streamed, also when the engine stopped on ``length``; OutputProcessor keeps ``length`` (a cut-off
#: call stays visible), as vLLM 0.33 does. Counted as differing in the support table's record.
RELEASE_FINISH = "vLLM 0.11 finish_reason: tool_calls over length (recorded release difference)"


@functools.cache
def _release(framework: str) -> tuple[int, ...]:
    import re

    import parsebridge as pb

    version = pb.get_backend(framework).version() or "0"
    return tuple(int(re.match(r"\d*", p)[0] or 0) for p in version.split(".")[:3])


#: framework → config id → [runs, runs that differ]; written to $REPORT_DIR by `write_record`.
TALLY: dict[str, dict[str, list[int]]] = {}
UNDRIVEN: dict[str, set[str]] = {}


def run_all(case: Case, which: list[Scenario]) -> None:
    failures: list[str] = []
    for scenario in which:
        failures += check(case, scenario)
    config = f"{case.reasoning or '-'}+{case.tool or '-'}"
    tally = TALLY.setdefault(case.framework, {}).setdefault(config, [0, 0])
    tally[0] += len(which)
    tally[1] += len(failures)
    if (case.framework, case.tool) in UNDRIVABLE or (case.framework, case.reasoning, case.tool) in REFUSED:
        UNDRIVEN.setdefault(case.framework, set()).add(config)
    known = KNOWN_DIFFERENCES.get(case.id)
    if known is not None:
        if failures:
            pytest.xfail(f"recorded difference: {known}")
        pytest.fail(f"{case.id} agrees with the server now: remove it from KNOWN_DIFFERENCES")
    if failures and all(f.endswith(RELEASE_FINISH) for f in failures):
        pytest.xfail(f"{len(failures)} of {len(which)} runs: {RELEASE_FINISH}")
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
        "checked": "assembled message, finish_reason, delta order up to grouping",
        "command": f"pytest tests/serving/test_server_oracle_{framework}.py",
    }
    path = Path(target)
    path.mkdir(parents=True, exist_ok=True)
    previous = path / RECORD_NAME
    records = json.loads(previous.read_text()) if previous.exists() else {}
    records[framework] = record
    previous.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")

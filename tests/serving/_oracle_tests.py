"""The oracle's test body, shared by test_server_oracle_vllm.py and test_server_oracle_sglang.py."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from _server_oracle.cases import Case, cases
from _server_oracle.common import describe
from _server_oracle.oracle import CHUNKINGS, ENDINGS, REQUESTS, Scenario, compare


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
    try:
        from _server_oracle import sglang as sglang_server
        from _server_oracle import vllm as vllm_server

        (vllm_server if framework == "vllm" else sglang_server).serving_module()
    except Exception as exc:
        return f"{framework}'s serving module does not import here: {type(exc).__name__}: {exc}"
    return None


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
    """Compare one case on every scenario given; the differences found."""
    server, ours = compare(case, scenario)
    if server.message == ours.message and server.finish_reason == ours.finish_reason:
        if server.merged() == ours.merged():
            return []
    return [f"{scenario.id}: {describe(server, ours)}"]


def run_all(case: Case, which: list[Scenario]) -> None:
    failures: list[str] = []
    for scenario in which:
        failures += check(case, scenario)
    if failures:
        pytest.fail(f"{case.id} differs from {case.framework}'s server in {len(failures)} of "
                    f"{len(which)} runs:\n" + "\n".join(failures[:12]))


def param(cases_: list[Case]) -> Any:
    return [pytest.param(c, id=c.id.split("-", 1)[1]) for c in cases_]

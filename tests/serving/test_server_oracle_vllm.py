"""vLLM's own chat server vs parsebridge's `OutputProcessor` on the same scripted engine output.

The server is vLLM's `OpenAIServingChat.chat_completion_stream_generator`,
fed real `RequestOutput`s (tests/serving/_server_oracle/vllm.py). Per parser
configuration of the bundled fixtures: every chunking (1, 3, 20 characters, 1
token), request (tools with tool_choice auto, no tools, tool_choice none) and
ending (stop with the last chunk, an EOS token, `length`); then every
transcript at one token and three characters a step. Equal means: the
assembled message, `finish_reason`, and the order of deltas up to grouping.
"""

from __future__ import annotations

import re

import pytest
from _oracle_tests import (
    framework_cases,
    param,
    per_config,
    run_all,
    scenarios,
    server_undrivable,
    unusable,
    write_record,
)
from _server_oracle.oracle import Scenario

FRAMEWORK = "vllm"
#: The newest release shape the drivers know; an undrivable release at or above it fails.
KNOWN_SHAPE = (0, 33, 0)
WHY = unusable(FRAMEWORK)


@pytest.fixture(scope="module", autouse=True)
def _record() -> object:
    """After the module: the release's oracle result for the support table (see `write_record`)."""
    yield
    write_record(FRAMEWORK)


pytestmark = pytest.mark.skipif(WHY is not None, reason=f"vLLM not usable here: {WHY}")
#: The release is installed but its server needs a shim the harness lacks: recorded for the
#: support table ("server not driven"), and the comparisons below are not generated.
UNDRIVABLE_SERVER = server_undrivable(FRAMEWORK) if WHY is None else None
DRIVEN = WHY is None and UNDRIVABLE_SERVER is None


def test_vllm_server_drivable() -> None:
    """Every release this harness knows streams a plain answer through its own server; a release
    it does not know is recorded as not driven (docs/support.md), never silently passed over."""
    if UNDRIVABLE_SERVER is not None:
        import parsebridge as pb

        version = pb.get_backend(FRAMEWORK).version() or "0"
        release = tuple(int(re.match(r"\d*", p)[0] or 0) for p in version.split(".")[:3])
        assert release < KNOWN_SHAPE, UNDRIVABLE_SERVER


@pytest.mark.parametrize("case", param(per_config(FRAMEWORK)) if DRIVEN else [])
def test_vllm_server_every_scenario(case) -> None:  # type: ignore[no-untyped-def]
    run_all(case, scenarios(case))


@pytest.mark.parametrize("case", param(framework_cases(FRAMEWORK)) if DRIVEN else [])
def test_vllm_server_every_transcript(case) -> None:  # type: ignore[no-untyped-def]
    request = "auto" if case.tool is not None else "no_tools"
    run_all(case, [Scenario("tok1", request, "stop"), Scenario("char3", request, "eos")])


def test_vllm_negative_control_builtin_differs() -> None:
    """The harness can fail: builtin's OutputProcessor keeps qwen3_coder call markup as content in a
    request without tools, while vLLM's server runs its tool parser and drops the calls."""
    if not DRIVEN:
        pytest.skip(f"not driven here: {WHY or UNDRIVABLE_SERVER}")
    from _oracle_tests import _release
    from _server_oracle.common import describe
    from _server_oracle.oracle import compare

    if _release(FRAMEWORK) < (0, 33, 0):
        # Before the vllm.parser driver the server skips the tool parser without tools; builtin's
        # hermes differs there in finish_reason after a cut-off call (length vs tool_calls).
        case = next(c for c in per_config(FRAMEWORK) if c.tool == "hermes" and c.reasoning is None)
        server, builtin = compare(case, Scenario("tok1", "auto", "length"), swap="builtin")
        assert (server.finish_reason, builtin.finish_reason) == ("tool_calls", "length")
        return
    case = next(c for c in per_config(FRAMEWORK) if c.tool == "qwen3_coder" and c.reasoning is None)
    server, builtin = compare(case, Scenario("tok1", "no_tools", "stop"), swap="builtin")
    assert describe(server, builtin) != "equal"
    assert "<tool_call>" in (builtin.message["content"] or "")
    assert "<tool_call>" not in (server.message["content"] or "")
    server, ours = compare(case, Scenario("tok1", "no_tools", "stop"))
    assert describe(server, ours) == "equal"

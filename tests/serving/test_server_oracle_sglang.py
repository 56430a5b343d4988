"""SGLang's own chat server vs parsebridge's `OutputProcessor` on the same scripted engine output.

The server is SGLang's `OpenAIServingChat._generate_chat_stream`, fed by a
stand-in tokenizer manager that streams cumulative text as SGLang's does
(tests/serving/_server_oracle/sglang.py). Per parser
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

FRAMEWORK = "sglang"
#: The newest release shape the drivers know; an undrivable release at or above it fails.
KNOWN_SHAPE = (0, 5, 23)
WHY = unusable(FRAMEWORK)


@pytest.fixture(scope="module", autouse=True)
def _record() -> object:
    """After the module: the release's oracle result for the support table (see `write_record`)."""
    yield
    write_record(FRAMEWORK)


pytestmark = pytest.mark.skipif(WHY is not None, reason=f"SGLang not usable here: {WHY}")
#: The release is installed but its server needs a shim the harness lacks: recorded for the
#: support table ("server not driven"), and the comparisons below are not generated.
UNDRIVABLE_SERVER = server_undrivable(FRAMEWORK) if WHY is None else None
DRIVEN = WHY is None and UNDRIVABLE_SERVER is None


def test_sglang_server_drivable() -> None:
    """Every release this harness knows streams a plain answer through its own server; a release
    it does not know is recorded as not driven (docs/support.md), never silently passed over."""
    if UNDRIVABLE_SERVER is not None:
        import parsebridge as pb

        version = pb.get_backend(FRAMEWORK).version() or "0"
        release = tuple(int(re.match(r"\d*", p)[0] or 0) for p in version.split(".")[:3])
        assert release < KNOWN_SHAPE, UNDRIVABLE_SERVER


@pytest.mark.parametrize("case", param(per_config(FRAMEWORK)) if DRIVEN else [])
def test_sglang_server_every_scenario(case) -> None:  # type: ignore[no-untyped-def]
    run_all(case, scenarios(case))


@pytest.mark.parametrize("case", param(framework_cases(FRAMEWORK)) if DRIVEN else [])
def test_sglang_server_every_transcript(case) -> None:  # type: ignore[no-untyped-def]
    request = "auto" if case.tool is not None else "no_tools"
    run_all(case, [Scenario("tok1", request, "stop"), Scenario("char3", request, "eos")])


def test_sglang_negative_control_builtin_differs() -> None:
    """The harness can fail: builtin's qwen3 reads untagged output as content, while SGLang's server
    forces reasoning for qwen3 when the request has no chat_template_kwargs."""
    if not DRIVEN:
        pytest.skip(f"not driven here: {WHY or UNDRIVABLE_SERVER}")
    from _server_oracle.common import describe
    from _server_oracle.oracle import compare

    case = next(c for c in framework_cases(FRAMEWORK) if c.transcript.id == "qwen3-reasoning-no-think")
    server, builtin = compare(case, Scenario("char3", "no_tools", "stop"), swap="builtin")
    assert describe(server, builtin) != "equal"
    assert server.message["reasoning"] and not server.message["content"]
    assert builtin.message["content"] and not builtin.message["reasoning"]
    server, ours = compare(case, Scenario("char3", "no_tools", "stop"))
    assert describe(server, ours) == "equal"

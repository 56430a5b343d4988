"""SGLang's own chat server vs parsebridge's `OutputProcessor` on the same scripted engine output.

The server is SGLang's `OpenAIServingChat._generate_chat_stream`, fed by a
stand-in tokenizer manager that streams cumulative text as SGLang's does
(tests/serving/_server_oracle/sglang.py). Per parser
configuration of the bundled fixtures: every chunking (1, 3, 20 characters, 1
token), request (tools with tool_choice auto, no tools, tool_choice none,
required and a named function) and ending (stop with the last chunk, an EOS
token, `length`); then every transcript at one token and three characters a
step (with tools also required at one token and named at three characters). Equal means: the
assembled message, `finish_reason`, and the order of deltas up to grouping.
"""

from __future__ import annotations

import pytest
from _oracle_tests import (
    check_drivable,
    driven_params,
    framework_cases,
    per_config,
    run_all,
    scenarios,
    server_undrivable,
    split_after_opened_prompt,
    transcript_scenarios,
    unusable,
    write_record,
)
from _server_oracle.oracle import Scenario

FRAMEWORK = "sglang"
WHY = unusable(FRAMEWORK)


@pytest.fixture(scope="module", autouse=True)
def _record() -> object:
    """After the module: the release's oracle result for the support table (see `write_record`)."""
    yield
    write_record(FRAMEWORK)


pytestmark = pytest.mark.skipif(WHY is not None, reason=f"SGLang not usable here: {WHY}")
#: The release is installed but its server cannot be driven: a reviewed reason (`NOT_DRIVEN`) is
#: recorded for the support table ("server not driven: …") and every test here is that xfail.
UNDRIVABLE_SERVER = server_undrivable(FRAMEWORK) if WHY is None else None


def test_sglang_server_drivable() -> None:
    """Every release streams a plain answer through its own server, or is a reviewed "server not
    driven" (`NOT_DRIVEN`, shown in docs/support.md): never silently passed over."""
    check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)


@pytest.mark.parametrize(
    "case", driven_params(per_config(FRAMEWORK), UNDRIVABLE_SERVER) if WHY is None else []
)
def test_sglang_server_every_scenario(case) -> None:  # type: ignore[no-untyped-def]
    if case is None:
        check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
    run_all(case, scenarios(case))


@pytest.mark.parametrize(
    "case", driven_params(framework_cases(FRAMEWORK), UNDRIVABLE_SERVER) if WHY is None else []
)
def test_sglang_server_every_transcript(case) -> None:  # type: ignore[no-untyped-def]
    if case is None:
        check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
    run_all(case, transcript_scenarios(case))


def test_sglang_transcripts_split_a_character_after_a_prompt_that_opens_reasoning() -> None:
    """`test_sglang_server_every_transcript` runs, at one token a step, token ids that split a multi-byte
    character after a prompt that opens reasoning (e.g. qwen3_thinking-reasoning-unicode-emoji in
    Qwen's real vocabulary): the case stays covered."""
    check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
    assert split_after_opened_prompt(FRAMEWORK)


def test_sglang_negative_control_builtin_differs() -> None:
    """The harness can fail: builtin's qwen3 under conventions="lossless" reads untagged output as
    content (its template does not open reasoning), while SGLang's server forces reasoning for qwen3
    when the request has no chat_template_kwargs. Under "servers" (the default) builtin reads it so too."""
    check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
    from _server_oracle.common import describe
    from _server_oracle.oracle import compare

    case = next(c for c in framework_cases(FRAMEWORK) if c.transcript.id == "qwen3-reasoning-no-think")
    scenario = Scenario("char3", "no_tools", "stop")
    server, builtin = compare(case, scenario, swap="builtin", conventions="lossless")
    assert describe(server, builtin) != "equal"
    assert server.message["reasoning"] and not server.message["content"]
    assert builtin.message["content"] and not builtin.message["reasoning"]
    server, ours = compare(case, scenario)
    assert describe(server, ours) == "equal"
    server, default = compare(case, scenario, swap="builtin")
    assert describe(server, default) == "equal"

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

import pytest
from _oracle_tests import framework_cases, param, per_config, run_all, scenarios, unusable
from _server_oracle.oracle import Scenario

FRAMEWORK = "sglang"
WHY = unusable(FRAMEWORK)
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"SGLang not usable here: {WHY}")


@pytest.mark.parametrize("case", param(per_config(FRAMEWORK)) if WHY is None else [])
def test_sglang_server_every_scenario(case) -> None:  # type: ignore[no-untyped-def]
    run_all(case, scenarios(case))


@pytest.mark.parametrize("case", param(framework_cases(FRAMEWORK)) if WHY is None else [])
def test_sglang_server_every_transcript(case) -> None:  # type: ignore[no-untyped-def]
    request = "auto" if case.tool is not None else "no_tools"
    run_all(case, [Scenario("tok1", request, "stop"), Scenario("char3", request, "eos")])

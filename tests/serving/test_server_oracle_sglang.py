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
    framework_cases,
    oracle_suite,
    server_undrivable,
    unusable,
)
from _server_oracle.oracle import Scenario

FRAMEWORK = "sglang"
WHY = unusable(FRAMEWORK)
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"SGLang not usable here: {WHY}")
#: The release is installed but its server cannot be driven: a reviewed reason (`NOT_DRIVEN`) is
#: recorded for the support table ("server not driven: …") and every test here is that xfail.
UNDRIVABLE_SERVER = server_undrivable(FRAMEWORK) if WHY is None else None
# The drivable check, every scenario, every transcript and the split-character guard (`oracle_suite`).
globals().update(oracle_suite(FRAMEWORK, WHY, UNDRIVABLE_SERVER))


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

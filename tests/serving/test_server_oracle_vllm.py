"""vLLM's own chat server vs parsebridge's `OutputProcessor` on the same scripted engine output.

The server is vLLM's `OpenAIServingChat.chat_completion_stream_generator`,
fed real `RequestOutput`s (tests/serving/_server_oracle/vllm.py). Per parser
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
    oracle_suite,
    per_config,
    server_undrivable,
    unusable,
)
from _server_oracle.oracle import Scenario

FRAMEWORK = "vllm"
WHY = unusable(FRAMEWORK)
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"vLLM not usable here: {WHY}")
#: The release is installed but its server cannot be driven: a reviewed reason (`NOT_DRIVEN`) is
#: recorded for the support table ("server not driven: …") and every test here is that xfail.
UNDRIVABLE_SERVER = server_undrivable(FRAMEWORK) if WHY is None else None
# The drivable check, every scenario, every transcript and the split-character guard (`oracle_suite`).
globals().update(oracle_suite(FRAMEWORK, WHY, UNDRIVABLE_SERVER))


def test_vllm_negative_control_builtin_differs() -> None:
    """The harness can fail: builtin's OutputProcessor keeps qwen3_coder call markup as content in a
    request without tools, while vLLM's server runs its tool parser and drops the calls."""
    check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
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


def test_vllm_negative_control_forced_choice_differs() -> None:
    """The harness can fail on forced choices. vLLM 0.33 constrains hermes' ``required`` output to
    hermes' own format and parses it with the tool parser; parsebridge's own JSON stages (the
    builtin backend) read that text as a broken array. Before 0.33 the server's own loop drops the
    reasoning of a forced call (a recorded release difference), which the comparison must see."""
    check_drivable(FRAMEWORK, UNDRIVABLE_SERVER)
    from _oracle_tests import _release
    from _server_oracle.common import describe
    from _server_oracle.oracle import compare

    if _release(FRAMEWORK) < (0, 33, 0):
        case = next(c for c in per_config(FRAMEWORK) if c.tool == "hermes" and c.reasoning == "qwen3")
        server, ours = compare(case, Scenario("tok1", "required", "stop"))
        assert ours.message["reasoning"] and not server.message["reasoning"]
        return
    case = next(c for c in per_config(FRAMEWORK) if c.tool == "hermes" and c.reasoning is None)
    server, builtin = compare(case, Scenario("tok1", "required", "stop"), swap="builtin")
    assert describe(server, builtin) != "equal"
    assert server.message["tool_calls"] and not builtin.message["tool_calls"]
    server, ours = compare(case, Scenario("tok1", "required", "stop"))
    assert describe(server, ours) == "equal"

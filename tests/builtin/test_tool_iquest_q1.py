"""builtin:iquest_q1 — GLM-4.7's layout in <iquest_tool_call> blocks, streaming equivalence."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.iquest_q1 import IQuestQ1ToolParser

START, END = "<iquest_tool_call>", "</iquest_tool_call>"


def call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in params)
    return f"{START}{name}{body}{END}"


T = Tagged(
    parser_class=IQuestQ1ToolParser,
    spec="builtin:iquest_q1",
    call=call,
    markers=(START, END, "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    tool_result=("42", "42"),
    truncated_value=f"{START}typed<arg_key>s</arg_key><arg_value>hel",
    unnamed=[f'{START}{{"name": "f"}}{END}', f"{START}{END}"],
    broken=[f"{START}f<arg_key>a", f"{START}f<arg_value>1", "</arg_value>" + START],
)
globals().update(suite(T))


def test_glm_block_is_not_iquest() -> None:
    text = "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
    check(T, text, text, [])

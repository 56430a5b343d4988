"""builtin:minicpm5 — <function name=…><param name=…> calls without a wrapper, CDATA values."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.minicpm5 import MiniCPM5ToolParser


def call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f'<param name="{k}">{v}</param>' for k, v in params)
    return f'<function name="{name}">{body}</function>'


T = Tagged(
    parser_class=MiniCPM5ToolParser,
    spec="builtin:minicpm5",
    call=call,
    markers=("<function name=", "</function>", "<param name=", "</param>"),
    tool_result=({"a": 1}, '{"a": 1}'),
    truncated_value='<function name="typed"><param name="s">hel',
    unnamed=['<function name=""><param name="a">1</param></function>', "<function name=a b></function>"],
    broken=['<function name="f"><param name="a', "</param></function>", '<function name="f">x'],
)
globals().update(suite(T))


def test_cdata_value_is_unwrapped_then_typed() -> None:
    text = call("typed", [("s", "<![CDATA[a < b\nc]]>"), ("i", "<![CDATA[7]]>")])
    check(T, text, None, [("typed", {"s": "a < b\nc", "i": 7}, None)])


def test_calls_without_wrapper_and_text_between() -> None:
    text = "Hi " + call("a", []) + " and " + call("b", [("q", "x")])
    check(T, text, "Hi  and ", [("a", {}, None), ("b", {"q": "x"}, None)])

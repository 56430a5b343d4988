"""builtin:dots — invoke/parameter tags in <dots_function_call> blocks, streaming equivalence."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.dots import DotsToolParser

START, END = "<dots_function_call>", "</dots_function_call>"


def invoke(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def call(name: str, params: list[tuple[str, str]]) -> str:
    return f"{START}\n{invoke(name, params)}{END}"


T = Tagged(
    parser_class=DotsToolParser,
    spec="builtin:dots",
    call=call,
    markers=(START, END, "<invoke name=", "</invoke>", "<parameter name=", "</parameter>"),
    tool_result=("done", "done"),
    truncated_value=f'{START}\n<invoke name="typed">\n<parameter name="s">hel',
    unnamed=[f'{START}{{"name": "f", "arguments": {{}}}}{END}', f"{START}\n{END}"],
    broken=[f'{START}<invoke name="f"><parameter name="a', "</invoke>", f'{START}<invoke name="f">x'],
)
globals().update(suite(T))


def test_several_invokes_and_unquoted_names() -> None:
    text = f"{START}<invoke name=a><parameter name=q>1</parameter></invoke>{invoke('b', [])}{END}"
    check(T, text, None, [("a", {"q": 1}, None), ("b", {}, None)])

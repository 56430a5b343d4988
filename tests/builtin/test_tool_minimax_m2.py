"""builtin:minimax_m2 — invoke/parameter tags, several invokes per block, streaming equivalence."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.minimax_m2 import MinimaxM2ToolParser

START, END = "<minimax:tool_call>", "</minimax:tool_call>"


def invoke(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def call(name: str, params: list[tuple[str, str]]) -> str:
    return f"{START}\n{invoke(name, params)}{END}"


T = Tagged(
    parser_class=MinimaxM2ToolParser,
    spec="builtin:minimax_m2",
    call=call,
    markers=(START, END, "<invoke name=", "</invoke>", "<parameter name=", "</parameter>"),
    tool_result=("sunny", "<response>sunny</response>"),
    truncated_value=f'{START}\n<invoke name="typed">\n<parameter name="s">hel',
    unnamed=[
        f'{START}\n<invoke>\n<parameter name="a">1</parameter>\n</invoke>\n{END}',
        f"{START}\n{END}",
        f"{START}\nhello\n{END}",
    ],
    broken=[
        f'{START}<invoke name="f"><parameter name="a',
        "</invoke></parameter>",
        f'{START}<invoke name="f">x',
    ],
)
globals().update(suite(T))


def test_several_invokes_in_one_block() -> None:
    text = f"{START}\n{invoke('a', [('q', '1')])}{invoke('b', [('r', 'x')])}{END}"
    check(T, text, None, [("a", {"q": 1}, None), ("b", {"r": "x"}, None)])


def test_unquoted_and_single_quoted_names() -> None:
    check(
        T,
        f"{START}<invoke name=f><parameter name='a'>1</parameter></invoke>{END}",
        None,
        [("f", {"a": 1}, None)],
    )


def test_missing_invoke_close() -> None:
    text = f'{START}<invoke name="a"><parameter name="q">1</parameter><invoke name="b"></invoke>{END}'
    check(T, text, None, [("a", {"q": 1}, None), ("b", {}, None)])
    check(T, f'{START}<invoke name="a"><parameter name="q">1</parameter>{END}', None, [("a", {"q": 1}, None)])


def test_stray_text_between_invokes_is_content() -> None:
    text = f'{START}<invoke name="a"></invoke>note<invoke name="b"></invoke>{END}'
    check(T, text, "note", [("a", {}, None), ("b", {}, None)])

"""builtin:seed_oss — Qwen3-Coder's layout in <seed:tool_call> blocks, streaming equivalence."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.seed_oss import SeedOssToolParser

START, END = "<seed:tool_call>", "</seed:tool_call>"


def call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params)
    return f"{START}\n<function={name}>\n{body}</function>\n{END}"


T = Tagged(
    parser_class=SeedOssToolParser,
    spec="builtin:seed_oss",
    call=call,
    markers=(START, END, "<function=", "</function>", "<parameter=", "</parameter>"),
    tool_result=({"ok": True}, '{"ok": true}'),
    truncated_value=f"{START}\n<function=typed>\n<parameter=s>hel",
    unnamed=[
        f"{START}\n<parameter=a>1</parameter>\n{END}",
        f"{START}<function=\n>x{END}",
        f"{START}{END}",
    ],
    broken=[f"{START}<function=f><parameter=a", "</function></parameter>", f"{START}<function=f>x"],
)
globals().update(suite(T))


def test_missing_function_close() -> None:
    check(T, f"{START}<function=f><parameter=a>1</parameter>{END}", None, [("f", {"a": 1}, None)])
    check(
        T,
        f"{START}<function=f><parameter=a>1</parameter>{START}<function=g></function>{END}",
        None,
        [("f", {"a": 1}, None), ("g", {}, None)],
    )


def test_block_markers_inside_a_value_are_text() -> None:
    """As in qwen3_coder: only a parameter/function tag ends a value, so code holding block tags survives."""
    value = f"x = '{START}' + '{END}'"
    check(T, call("typed", [("s", value)]), None, [("typed", {"s": value}, None)])


def test_qwen3_coder_block_is_not_seed() -> None:
    text = "<tool_call>\n<function=f>\n</function>\n</tool_call>"
    check(T, text, text, [])

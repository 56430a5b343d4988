"""builtin:glm45 — GLM-4.5 and GLM-4.7 layouts, schema-typed values, streaming equivalence."""

from __future__ import annotations

from _tagged_suite import Tagged, check, suite

from parsebridge.adapters.builtin.glm45 import Glm45ToolParser


def glm45_call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in params)
    return f"<tool_call>{name}\n{body}</tool_call>"


def glm47_call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in params)
    return f"<tool_call>{name}{body}</tool_call>"


MARKERS = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
COMMON = dict(
    parser_class=Glm45ToolParser,
    spec="builtin:glm45",
    markers=MARKERS,
    tool_result=({"temp": 21}, '<tool_response>\n{"temp": 21}\n</tool_response>'),
    truncated_value="<tool_call>typed\n<arg_key>s</arg_key>\n<arg_value>hel",
    unnamed=[
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        "<tool_call>\n</tool_call>",
        "<tool_call><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
    ],
    broken=[
        "<tool_call>f\n<arg_key>a",
        "<tool_call>f\n<arg_value>1</arg_value>",
        "</arg_value><tool_call>",
        "<tool_call>g\nx",
    ],
)
T = Tagged(call=glm45_call, **COMMON)  # type: ignore[arg-type]
T47 = Tagged(call=glm47_call, **COMMON)  # type: ignore[arg-type]

globals().update(suite(T))
globals().update({f"{k}_glm47_layout": v for k, v in suite(T47).items()})


def test_name_ends_at_newline_arg_key_or_close() -> None:
    check(T, "<tool_call>f\n</tool_call>", None, [("f", {}, None)])
    check(T, "<tool_call>f</tool_call>", None, [("f", {}, None)])
    check(
        T,
        "<tool_call>\n  f  \n<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
        None,
        [("f", {"a": 1}, None)],
    )


def test_key_without_value_is_content() -> None:
    check(T, "<tool_call>f<arg_key>a</arg_key></tool_call>", "<arg_key>a</arg_key>", [("f", {}, None)])
    text = "<tool_call>f<arg_key>a</arg_key>\n<arg_key>b</arg_key><arg_value>2</arg_value></tool_call>"
    check(T, text, "<arg_key>a</arg_key>", [("f", {"b": 2}, None)])


def test_truncated_after_key_keeps_it_flagged() -> None:
    check(T, "<tool_call>f<arg_key>a</arg_key>", "<tool_call>f<arg_key>a</arg_key>", [])
    check(T, "<tool_call>f<arg_key>a", "<tool_call>f<arg_key>a", [])


def test_missing_value_close_and_block_close() -> None:
    check(
        T,
        "<tool_call>f<arg_key>a</arg_key><arg_value>1<arg_key>b</arg_key><arg_value>x</tool_call>",
        None,
        [("f", {"a": 1, "b": "x"}, None)],
    )
    check(
        T,
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value><tool_call>g</tool_call>",
        None,
        [("f", {"a": 1}, None), ("g", {}, None)],
    )


def test_truncated_name_is_content() -> None:
    check(T, "x <tool_call>get_wea", "x <tool_call>get_wea", [])
    check(T, "<tool_call>f\n", "<tool_call>f\n", [])

"""builtin:deepseek_v32 / deepseek_v4 / deepseek_v41 (DSML) and builtin:step3 (steptml): the invoke machine."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _streaming import (
    EXAMPLES,
    assert_no_text_lost,
    assert_streams_like_oneshot,
    check_soup,
    chunk_plan,
    expected_content,
    max_held,
    names,
    noise,
    norm,
    random_chunkings,
    ws,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsebridge.adapters.builtin.deepseek_v32 import (
    DeepSeekV4ToolParser,
    DeepSeekV32ToolParser,
    DeepSeekV41ToolParser,
)
from parsebridge.adapters.builtin.kimi_k3 import KimiK3ToolParser
from parsebridge.adapters.builtin.minicpm5 import MiniCPM5ToolParser
from parsebridge.adapters.builtin.step3 import Step3ToolParser
from parsebridge.formats import deepseek_v4, deepseek_v32, deepseek_v41, kimi_k3, minicpm5, step3
from parsebridge.protocol.parsers import ToolParserBase

DSML = [
    (DeepSeekV32ToolParser, deepseek_v32),
    (DeepSeekV4ToolParser, deepseek_v4),
    (DeepSeekV41ToolParser, deepseek_v41),
]
ALL = [*(cls for cls, _ in DSML), Step3ToolParser, KimiK3ToolParser, MiniCPM5ToolParser]

# values that survive both value rules unchanged (strings that are not JSON literals, JSON values)
text_values = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=10
).filter(lambda s: s.strip() == s and s and s[0] not in '-0123456789[{"tfn')
json_values = (
    st.integers(-1000, 1000)
    | st.booleans()
    | st.lists(st.integers(0, 9), max_size=3)
    | st.dictionaries(st.sampled_from(["a", "b", "ü"]), st.integers(0, 9), max_size=2)
)
args_strategy = st.dictionaries(
    st.from_regex(r"[a-z_]{1,6}", fullmatch=True), text_values | json_values, max_size=3
)


def check(
    p: ToolParserBase, text: str, content: str | None, calls: list[tuple[str, dict[str, Any], str | None]]
) -> None:
    result = assert_streams_like_oneshot(p, text, random_chunkings(text, seed=len(text)))
    assert norm(result) == (content, calls)


def step3_call(name: str, params: list[tuple[str, str]]) -> str:
    body = "".join(f'<steptml:parameter name="{k}">{v}{step3.PARAM_END}' for k, v in params)
    return f'{step3.CALL_BEGIN}function{step3.SEP}<steptml:invoke name="{name}">{body}{step3.INVOKE_END}{step3.CALL_END}'


# --- DSML -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "fmt"), DSML)
def test_dsml_render_roundtrip_and_text_around(cls: Any, fmt: Any) -> None:
    p = cls(conventions="lossless")
    calls = [
        ("get_weather", {"city": "杭州", "days": 3, "opts": {"a": [1, None]}, "flag": False}),
        ("noargs", {}),
    ]
    text = "Let me check.\n\n" + fmt.TOOL.render(calls) + "\nDone."
    check(p, text, "Let me check.\n\n\nDone.", [(n, a, None) for n, a in calls])


@pytest.mark.parametrize(("cls", "fmt"), DSML)
def test_dsml_value_rules(cls: Any, fmt: Any) -> None:
    t = fmt.TAGS
    p = cls(conventions="lossless")

    def one(params: str) -> str:
        return f'{t.calls_begin}\n{t.invoke_open} name="f">\n{params}\n{t.invoke_close}\n{t.calls_end}'

    par = lambda k, v, s=None: (  # noqa: E731
        f'{t.param_open} name="{k}"' + (f' string="{s}"' if s else "") + f">{v}{t.param_close}"
    )
    # string="true": verbatim (whitespace and JSON-looking text kept)
    check(p, one(par("s", " 42 ", "true")), None, [("f", {"s": " 42 "}, None)])
    # string="false" or missing: JSON when it parses, else the text
    check(p, one(par("n", " 42 ", "false") + par("m", "[1, 2]")), None, [("f", {"n": 42, "m": [1, 2]}, None)])
    check(p, one(par("x", "five", "false")), None, [("f", {"x": "five"}, None)])
    check(p, one(par("x", "NaN", "false")), None, [("f", {"x": "NaN"}, None)])
    # a missing </parameter> is tolerated: the invoke's close ends the value; a parameter head
    # whose close follows is the value's text (a model writing about DSML), as SGLang reads it
    check(p, one(f'{t.param_open} name="a" string="true">x'), None, [("f", {"a": "x\n"}, None)])
    head = f'{t.param_open} name="b" string="false">'
    check(
        p,
        one(f'{t.param_open} name="a" string="true">x\n' + par("b", "1", "false")),
        None,
        [("f", {"a": f"x\n{head}1"}, None)],
    )


@pytest.mark.parametrize(("cls", "fmt"), DSML)
def test_dsml_malformed_and_truncated(cls: Any, fmt: Any) -> None:
    t = fmt.TAGS
    p = cls(conventions="lossless")
    unnamed = f"{t.calls_begin}\n{t.invoke_open}>\n{t.invoke_close}\n{t.calls_end}"
    check(p, unnamed, unnamed, [])
    check(p, t.calls_begin + t.calls_end, t.calls_begin + t.calls_end, [])
    # self-closing invoke: a call with no arguments
    check(p, f'{t.invoke_open} name="ping"/>', None, [("ping", {}, None)])
    # truncated: inside a value, right after the open tag, inside the open tag: no call, content (`whole_calls`)
    cut = f'{t.calls_begin}{t.invoke_open} name="f">{t.param_open} name="q" string="true">hel'
    check(p, cut, cut, [])
    check(p, f'{t.calls_begin}{t.invoke_open} name="f">', f'{t.calls_begin}{t.invoke_open} name="f">', [])
    partial = f'{t.calls_begin}{t.invoke_open} name="f'
    check(p, partial, partial, [])
    # stray text inside an invoke is content, in place
    check(
        p,
        f'{t.invoke_open} name="f">oops {t.param_open} name="a" string="false">1{t.param_close}{t.invoke_close}',
        "oops",
        [("f", {"a": 1}, None)],
    )


def test_dsml_v4_alt_openers_and_format_results() -> None:
    p = DeepSeekV4ToolParser(conventions="lossless")
    t = deepseek_v4.TAGS
    for opener in deepseek_v4.ALT_BEGINS:
        check(
            p,
            f'{opener}\n{t.invoke_open} name="g">\n{t.invoke_close}\n{t.calls_end}',
            None,
            [("g", {}, None)],
        )
    assert DeepSeekV32ToolParser(conventions="lossless").format_tool_result("c", {"a": 1}) == (
        '<function_results>\n<result>{"a": 1}</result>\n</function_results>'
    )
    assert p.format_tool_result("c", "ok") == "<tool_result>ok</tool_result>"
    assert (
        DeepSeekV41ToolParser(conventions="lossless").format_tool_result("c", "ok")
        == "<tool_result>ok</tool_result>"
    )
    assert {c().spec for c in ALL} == {
        "builtin:deepseek_v32",
        "builtin:deepseek_v4",
        "builtin:deepseek_v41",
        "builtin:step3",
        "builtin:kimi_k3",
        "builtin:minicpm5",
    }


def test_dsml_dialects() -> None:
    """V3.2 and V4 share the invoke tags (a bare invoke is read; the other block's markers stay text);
    V4.1's spaced tags are another dialect."""
    v32 = deepseek_v32.TOOL.render([("f", {})])
    got = DeepSeekV4ToolParser(conventions="lossless").parse(v32)
    assert [c.name for c in got.tool_calls] == ["f"]
    assert got.content is not None and deepseek_v32.TAGS.calls_begin in got.content
    assert DeepSeekV41ToolParser(conventions="lossless").parse(v32).tool_calls == []
    assert (
        DeepSeekV32ToolParser(conventions="lossless").parse(deepseek_v41.TOOL.render([("f", {})])).tool_calls
        == []
    )


# --- Step-3 ---------------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"s": {"type": "string"}, "n": {"type": "integer"}},
            },
        },
    }
]


def test_step3_typed_values() -> None:
    p = Step3ToolParser(tools=TOOLS, conventions="lossless")
    text = (
        step3.CALLS_BEGIN
        + step3_call("f", [("s", " 12 "), ("n", "12"), ("u", "true"), ("v", "word")])
        + step3.CALLS_END
    )
    # a string keeps every character under "lossless" (the template writes it inline); both servers strip it
    check(p, text, None, [("f", {"s": " 12 ", "n": 12, "u": True, "v": "word"}, None)])
    check(
        Step3ToolParser(tools=TOOLS),
        text,
        None,
        [("f", {"s": "12", "n": 12, "u": "true", "v": "word"}, None)],
    )
    # undeclared everything without tools: JSON when it parses
    check(
        Step3ToolParser(conventions="lossless"),
        text,
        None,
        [("f", {"s": 12, "n": 12, "u": True, "v": "word"}, None)],
    )


def test_step3_wrapper_and_malformed() -> None:
    p = Step3ToolParser(conventions="lossless")
    two = step3.CALLS_BEGIN + step3_call("a", [("x", "1")]) + "\n" + step3_call("b", []) + step3.CALLS_END
    check(p, "Hi " + two + " bye", "Hi  bye", [("a", {"x": 1}, None), ("b", {}, None)])
    bad = (
        step3.CALLS_BEGIN
        + step3.CALL_BEGIN
        + "function"
        + step3.SEP
        + "<steptml:invoke>"
        + step3.INVOKE_END
        + step3.CALL_END
        + step3.CALLS_END
    )
    check(p, bad, bad, [])
    trunc = (
        step3.CALLS_BEGIN
        + step3.CALL_BEGIN
        + "function"
        + step3.SEP
        + '<steptml:invoke name="a"><steptml:parameter name="q">pa'
    )
    check(
        p,
        trunc,
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="a"><steptml:parameter name="q">pa',
        [],
    )
    head_only = step3.CALLS_BEGIN + step3.CALL_BEGIN + "func"
    check(p, head_only, head_only, [])
    assert p.format_tool_result("c", {"ok": True}) == '{"ok": true}'


# --- properties -----------------------------------------------------------------------------


def _render_for(cls: Any) -> Any:
    if cls is Step3ToolParser:
        return step3.TOOL.render
    if cls is KimiK3ToolParser:
        return kimi_k3.TOOL.render
    if cls is MiniCPM5ToolParser:
        return minicpm5.TOOL.render
    return {c: f for c, f in DSML}[cls].TOOL.render


@st.composite
def outputs(draw: Any, cls: Any) -> tuple[str, list[tuple[str, Any]]]:
    render = _render_for(cls)
    items: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["text", "ws", "block"]))
        if kind == "text":
            items.append(("text", draw(noise)))
        elif kind == "ws":
            items.append(("text", draw(ws)))
        else:
            calls = draw(st.lists(st.tuples(names, args_strategy), min_size=1, max_size=3))
            items.append(("call", (calls[0][0], calls[0][1], render(calls))))
            items.extend(("call", (n, a, "")) for n, a in calls[1:])
    text = "".join(v[2] if k == "call" else v for k, v in items)
    return text, items


@pytest.mark.parametrize("cls", ALL)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_streaming_equals_oneshot(cls: Any, data: st.DataObject) -> None:
    p = cls(conventions="lossless")
    text, items = data.draw(outputs(cls))
    one = assert_streams_like_oneshot(p, text, [data.draw(chunk_plan(text))])
    assert norm(one) == (expected_content(items), [(v[0], v[1], None) for k, v in items if k == "call"])


@pytest.mark.parametrize("cls", ALL)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_soup(cls: Any, data: st.DataObject) -> None:
    p = cls(conventions="lossless")
    tokens = (*p.markers, ' name="f">', ' string="true">', ' string="false">', ">", "/>", "function")
    check_soup(p, data, tokens)
    text = data.draw(st.lists(st.sampled_from(tokens) | noise, max_size=12).map("".join))
    assert_no_text_lost(
        p, text, (*p.markers, "function"), structural='{}[]:,"\\/<>=_namestrigtuefls0123456789 '
    )


@pytest.mark.parametrize("cls", ALL)
def test_stream_holds_little(cls: Any) -> None:
    """Linear streaming: the raw buffer never holds more than a marker; a value is collected as pieces."""
    p = cls(conventions="lossless")
    text = _render_for(cls)([("f", {"s": "x" * 20000, "t": 1})])
    assert max_held(p, text) < 128
    assert json.loads(json.dumps(p.parse(text).tool_calls[0].arguments))["s"] == "x" * 20000


# --- Kimi K3 ----------------------------------------------------------------------------------


def test_kimi_k3_channels_types_and_escapes() -> None:
    p = KimiK3ToolParser(conventions="lossless")
    k = kimi_k3
    arg = lambda key, t, v: f'{k.ARG_OPEN} key="{key}" type="{t}"{k.SEP}{v}{k.ARG_CLOSE}'  # noqa: E731
    body = (
        arg("s", "string", " 1 ")
        + arg("n", "integer", " 1 ")
        + arg("o", "object", '{"a": [1]}')
        + arg("bad", "number", "x")
    )
    text = (
        k.RESPONSE_OPEN
        + "Sure."
        + k.RESPONSE_CLOSE
        + k.TOOLS_OPEN
        + f'{k.CALL_OPEN} tool="a&quot;b&amp;c" index="1"{k.SEP}'
        + body
        + k.CALL_CLOSE
        + k.TOOLS_CLOSE
        + k.MESSAGE_CLOSE
    )
    check(p, text, "Sure.", [('a"b&c', {"s": " 1 ", "n": 1, "o": {"a": [1]}, "bad": "x"}, None)])
    untitled = k.TOOLS_OPEN + f'{k.CALL_OPEN} index="1"{k.SEP}' + k.CALL_CLOSE + k.TOOLS_CLOSE
    check(p, untitled, untitled, [])
    cut = k.TOOLS_OPEN + f'{k.CALL_OPEN} tool="f" ind'
    check(p, cut, cut, [])
    assert p.format_tool_result("c", {"x": 1}) == '{"x": 1}'


# --- MiniCPM 5 --------------------------------------------------------------------------------


def test_minicpm5_bare_calls_cdata_and_types() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"s": {"type": "string"}}},
            },
        }
    ]
    p = MiniCPM5ToolParser(tools=tools, conventions="lossless")
    text = 'Hi <function name="f"><param name="s"> 7 </param><param name="n">7</param></function>'
    text += '<function name="g"><param name="c"><![CDATA[a\n</b>]]></param></function>'
    check(p, text, "Hi ", [("f", {"s": " 7 ", "n": 7}, None), ("g", {"c": "a\n</b>"}, None)])
    prose = "use <functions> like <function>this"
    check(p, prose, prose, [])
    assert p.format_tool_result("c", "ok") == "ok"

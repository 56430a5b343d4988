"""Outputs written the way real models write them, read under both conventions, one-shot and streamed.

Each case is a model-style output and what each convention reads from it: Python literals typed
by the schema, whitespace kept in inline values, a format's own markers written inside an
argument (a model documenting its format), and shapes the templates allow (Mistral's call ids,
Qwen3-Coder's ``<function=…>`` without its block, gpt-oss output opening in the role header or
calling a built-in tool, Magistral's plain-text ``<think>``). Where the servers agree on another
reading, "servers" gives theirs and "lossless" the right one. Every stream, per character, per
approximate token, at 5 and 20 tokens and at seeded random splits, equals its one-shot parse.
"""

from __future__ import annotations

from typing import Any

import pytest
from _streaming import assert_streams_like_oneshot, norm, random_chunkings, run_stream

import parsebridge as pb
from parsebridge.conformance.chunking import approximate_tokens
from parsebridge.formats import deepseek_v4, deepseek_v32, deepseek_v41, tool_format
from parsebridge.formats.cases.catalogue import tools as catalogue_tools

Reading = tuple[str | None, list[tuple[str, dict[str, Any], str | None]]]


def _token_chunkings(text: str) -> list[list[str]]:
    tokens = approximate_tokens(text)
    groups = [["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)] for k in (1, 5, 20)]
    return [*groups, *random_chunkings(text, seed=len(text))]


def _read(spec: str, conventions: str, text: str, tools: list[str] | None = None) -> Reading:
    parser = pb.get_tool_parser(
        spec, tools=catalogue_tools(*tools) if tools else None, conventions=conventions
    )
    return norm(assert_streams_like_oneshot(parser, text, _token_chunkings(text)))


DOC = "End a call with </function> and then </tool_call>."
QWEN_DOC = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\nFORMAT.md\n</parameter>\n"
    f"<parameter=content>\n{DOC}\n</parameter>\n</function>\n</tool_call>"
)
QWEN_LITERALS = (
    "<tool_call>\n<function=book_room>\n<parameter=title>\nStandup\n</parameter>\n<parameter=room>\nNone\n"
    "</parameter>\n<parameter=projector>\nFalse\n</parameter>\n</function>\n</tool_call>"
)
#: Qwen3-Coder's template renders ``set_reminder(text="Call Anna", note=None, minutes=None)`` so.
QWEN_TEMPLATE_NONES = (
    "<tool_call>\n<function=set_reminder>\n<parameter=text>\nCall Anna\n</parameter>\n"
    "<parameter=note>\nNone\n</parameter>\n<parameter=minutes>\nNone\n</parameter>\n</function>\n</tool_call>"
)
GLM_DOC = (
    "<tool_call>write_file<arg_key>path</arg_key><arg_value>glm.md</arg_value><arg_key>content</arg_key>"
    "<arg_value>A call ends with </tool_call>.</arg_value></tool_call>"
)
GLM_WS = (
    "<tool_call>write_file<arg_key>path</arg_key><arg_value>n.txt</arg_value><arg_key>content</arg_key>"
    "<arg_value>two  spaces\nlast newline\n</arg_value></tool_call>"
)
GEMMA_DOC = '<|tool_call>call:write_file{content:<|"|>Calls end with <tool_call|>.<|"|>,path:<|"|>g.md<|"|>}<tool_call|>'
GPT_DOC = '<|channel|>commentary to=functions.write_file json<|message|>{"path": "h.md", "content": "End with <|call|>."}<|call|>'

#: A value's own close tag written inside it, prose after it (a model documenting its format).
QWEN_CLOSE_IN_VALUE = "One </parameter> closes it;\n</parameter>\nthen more."
GLM_KEY_IN_VALUE = "Use <arg_key>name</arg_key> for keys."
GLM_CLOSE_IN_VALUE = "One </arg_value> closes it; then </tool_call> ends the call."


#: A whole call written inside a value as an example (a model writing a parser's test or docs).
GLM_EXAMPLE = (
    "Example:\n<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value>"
    "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>\nEnd."
)
QWEN_EXAMPLE = (
    "Example:\n<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\nEnd."
)
#: A value's own open tag written in it with no example after it: the next parameter is one.
GLM_OPEN_IN_VALUE = (
    "<tool_call>write_file<arg_key>content</arg_key><arg_value>Values follow <arg_value> tags."
    "</arg_value><arg_key>path</arg_key><arg_value>g.md</arg_value></tool_call>"
)
GET_TIME_GLM = "<tool_call>get_time<arg_key>timezone</arg_key><arg_value>UTC</arg_value></tool_call>"


def _qwen_file(content: str) -> str:
    return (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nq.md\n</parameter>\n"
        f"<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    )


def _glm_file(content: str, sep: str = "\n") -> str:
    """GLM-4.5's layout (a newline between tags), or GLM-4.7's (``sep=""``)."""
    return (
        f"<tool_call>write_file{sep}<arg_key>path</arg_key>{sep}<arg_value>g.md</arg_value>{sep}"
        f"<arg_key>content</arg_key>{sep}<arg_value>{content}</arg_value>{sep}</tool_call>"
    )


#: DeepSeek's DSML tags written inside a string value (its close tag, a parameter, an invoke's close).
def _dsml_docs(tags: deepseek_v32.DsmlTags) -> list[str]:
    return [
        f"A value ends at {tags.param_close} and that is all.",
        f'Write {tags.param_open} name="k" string="true">v{tags.param_close} per argument.',
        f"End each call with {tags.invoke_close}.",
    ]


DSML_TAGS = {
    "deepseek_v32": deepseek_v32.TAGS,
    "deepseek_v4": deepseek_v4.TAGS,
    "deepseek_v41": deepseek_v41.TAGS,
}
DSML_DOCS = [(name, doc) for name, tags in DSML_TAGS.items() for doc in _dsml_docs(tags)]


def _minicpm_file(content: str) -> str:
    return f'<function name="write_file"><param name="path">m.md</param><param name="content">{content}</param></function>'


#: A ticket with Python-literal containers and a signed integer, as a model trained on Python writes them.
TICKET_ARGS = {
    "title": "Crash",
    "priority": "+2",
    "labels": "['bug', 'ui',]",
    "metadata": "{'team': 'core', 'urgent': True}",
}
TICKET = {
    "title": "Crash",
    "priority": 2,
    "labels": ["bug", "ui"],
    "metadata": {"team": "core", "urgent": True},
}


def _ticket(family: str) -> str:
    return tool_format(family).render([("create_ticket", TICKET_ARGS)])


STEP3_CLOSE_IN_VALUE = tool_format("step3").render(
    [
        (
            "write_file",
            {"path": "s.md", "content": "One </steptml:parameter> closes it;</steptml:parameter> then more."},
        )
    ]
)
#: A file's content with significant whitespace, as the formats that write a value inline write it.
FILE_WS = "  indented,  two  spaces\nlast newline\n"


def _ws_file(family: str) -> str:
    return tool_format(family).render([("write_file", {"path": "n.txt", "content": FILE_WS})])


def _ws_reading(content: str) -> Reading:
    return (None, [("write_file", {"path": "n.txt", "content": content}, None)])


CASES = [
    # (spec, output, tools, servers reading, lossless reading)
    (
        "builtin:minimax_m2",
        _ticket("minimax_m2"),
        ["create_ticket"],
        (None, [("create_ticket", {**TICKET_ARGS, "priority": 2}, None)]),  # (both servers: JSON only)
        (None, [("create_ticket", TICKET, None)]),
    ),
    # A value's own close tag with text after it, in a value the schema declares a string.
    (
        "builtin:step3",
        STEP3_CLOSE_IN_VALUE,
        ["write_file"],
        (
            " closes it;</steptml:parameter> then more.</steptml:parameter>",
            [("write_file", {"path": "s.md", "content": "One"}, None)],
        ),
        (
            None,
            [
                (
                    "write_file",
                    {
                        "path": "s.md",
                        "content": "One </steptml:parameter> closes it;</steptml:parameter> then more.",
                    },
                    None,
                )
            ],
        ),
    ),
    (
        "builtin:minicpm5",
        _minicpm_file("One </param> closes it;</param> then more."),
        ["write_file"],
        None,
        (
            None,
            [("write_file", {"path": "m.md", "content": "One </param> closes it;</param> then more."}, None)],
        ),
    ),
    # Inline values keep every character; "servers" trims where the servers do (vLLM's Seed-OSS one
    # newline each side, both servers' dots all whitespace).
    ("builtin:iquest_q1", _ws_file("iquest_q1"), ["write_file"], _ws_reading(FILE_WS), _ws_reading(FILE_WS)),
    (
        "builtin:minimax_m2",
        _ws_file("minimax_m2"),
        ["write_file"],
        _ws_reading(FILE_WS),
        _ws_reading(FILE_WS),
    ),
    (
        "builtin:seed_oss",
        _ws_file("seed_oss"),
        ["write_file"],
        _ws_reading(FILE_WS[:-1]),
        _ws_reading(FILE_WS),
    ),
    ("builtin:dots", _ws_file("dots"), ["write_file"], _ws_reading(FILE_WS.strip()), _ws_reading(FILE_WS)),
    ("builtin:step3", _ws_file("step3"), ["write_file"], _ws_reading(FILE_WS.strip()), _ws_reading(FILE_WS)),
    (
        "builtin:qwen3_coder",
        _qwen_file(QWEN_CLOSE_IN_VALUE),
        ["write_file"],
        (None, [("write_file", {"path": "q.md", "content": "One "}, None)]),
        (None, [("write_file", {"path": "q.md", "content": QWEN_CLOSE_IN_VALUE}, None)]),
    ),
    (
        "builtin:glm45",
        _glm_file(GLM_CLOSE_IN_VALUE),
        ["write_file"],
        (None, [("write_file", {"path": "g.md", "content": "One "}, None)]),
        (None, [("write_file", {"path": "g.md", "content": GLM_CLOSE_IN_VALUE}, None)]),
    ),
    (
        "builtin:glm45",
        _glm_file(GLM_CLOSE_IN_VALUE, sep=""),
        ["write_file"],
        (None, [("write_file", {"path": "g.md", "content": "One "}, None)]),
        (None, [("write_file", {"path": "g.md", "content": GLM_CLOSE_IN_VALUE}, None)]),
    ),
    (
        "builtin:qwen3_coder",
        QWEN_LITERALS,
        ["book_room"],
        (None, [("book_room", {"title": "Standup", "room": "None", "projector": False}, None)]),
        (None, [("book_room", {"title": "Standup", "room": None, "projector": False}, None)]),
    ),
    # A whole call written in a value as an example: under lossless each of its close tags is the
    # value's text (the value's own close follows: the close tags after it outnumber the opens);
    # both servers end the value at the example's first close tag.
    (
        "builtin:glm45",
        _glm_file(GLM_EXAMPLE, sep="") + GET_TIME_GLM,
        ["write_file", "get_weather", "get_time"],
        (
            None,
            [
                (
                    "write_file",
                    {
                        "path": "g.md",
                        "content": GLM_EXAMPLE[: GLM_EXAMPLE.index("</arg_value>")],
                        "days": 3,
                    },
                    None,
                ),
                ("get_time", {"timezone": "UTC"}, None),
            ],
        ),
        (
            None,
            [
                ("write_file", {"path": "g.md", "content": GLM_EXAMPLE}, None),
                ("get_time", {"timezone": "UTC"}, None),
            ],
        ),
    ),
    (
        "builtin:qwen3_coder",
        _qwen_file(QWEN_EXAMPLE),
        ["write_file", "get_weather"],
        (
            None,
            [
                (
                    "write_file",
                    {
                        "path": "q.md",
                        "content": "Example:\n<tool_call>\n<function=get_weather>",
                        "location": "Paris",
                        "days": "3",
                    },
                    None,
                )
            ],
        ),
        (None, [("write_file", {"path": "q.md", "content": QWEN_EXAMPLE}, None)]),
    ),
    # Qwen3-Coder's template writes a null argument as ``None`` (``args_value | string``): under
    # lossless that text is null also where the schema allows a string beside null; both servers
    # keep the string "None" there.
    (
        "builtin:qwen3_coder",
        QWEN_TEMPLATE_NONES,
        ["set_reminder"],
        (None, [("set_reminder", {"text": "Call Anna", "note": "None", "minutes": "None"}, None)]),
        (None, [("set_reminder", {"text": "Call Anna", "note": None, "minutes": None}, None)]),
    ),
    (
        "builtin:qwen3_coder",
        QWEN_DOC,
        ["write_file"],
        None,  # (both servers end the value at </function>: see the test below)
        (None, [("write_file", {"path": "FORMAT.md", "content": DOC}, None)]),
    ),
    (
        "builtin:qwen3_coder",
        "Let me look.\n<function=get_weather>\n<parameter=location>\nKyoto\n</parameter>\n</function>",
        None,
        ("Let me look.\n", [("get_weather", {"location": "Kyoto"}, None)]),
        ("Let me look.\n", [("get_weather", {"location": "Kyoto"}, None)]),
    ),
    (
        "builtin:glm45",
        GLM_WS,
        ["write_file"],
        (None, [("write_file", {"path": "n.txt", "content": "two  spaces\nlast newline\n"}, None)]),
        (None, [("write_file", {"path": "n.txt", "content": "two  spaces\nlast newline\n"}, None)]),
    ),
    (
        "builtin:glm45",
        GLM_DOC,
        ["write_file"],
        None,
        (None, [("write_file", {"path": "glm.md", "content": "A call ends with </tool_call>."}, None)]),
    ),
    (
        "builtin:gemma4",
        GEMMA_DOC,
        None,
        None,
        (None, [("write_file", {"content": "Calls end with <tool_call|>.", "path": "g.md"}, None)]),
    ),
    (
        "builtin:gpt_oss",
        GPT_DOC,
        None,
        (None, [("write_file", {"path": "h.md", "content": "End with <|call|>."}, None)]),
        (None, [("write_file", {"path": "h.md", "content": "End with <|call|>."}, None)]),
    ),
    (
        "builtin:gpt_oss",
        ' to=functions.get_time<|channel|>commentary json<|message|>{"timezone": "UTC"}<|call|>',
        None,
        (None, [("get_time", {"timezone": "UTC"}, None)]),
        (None, [("get_time", {"timezone": "UTC"}, None)]),
    ),
    (
        "builtin:gpt_oss",
        "<|channel|>analysis to=python code<|message|>print(2 ** 10)<|call|>",
        None,
        (None, []),
        (None, []),
    ),
    (
        "builtin:mistral",
        'Sure. [TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"location": "Lyon"}'
        '[TOOL_CALLS]get_time[CALL_ID]Zz9Yy8Xx7[ARGS]{"timezone": "UTC"}',
        None,
        ("Sure. ", [("get_weather", {"location": "Lyon"}, None), ("get_time", {"timezone": "UTC"}, None)]),
        ("Sure. ", [("get_weather", {"location": "Lyon"}, None), ("get_time", {"timezone": "UTC"}, None)]),
    ),
]


QWEN_TWO_IN_ONE = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n'
    '{"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}\n</tool_call>'
)
LLAMA_LIST = (
    '[{"name": "get_weather", "parameters": {"location": "Oslo"}}, '
    '{"name": "get_time", "parameters": {"timezone": "Europe/Oslo"}}]'
)
#: A model escaping its quotes once too often: the block is no call, and the next one still is.
OVER_ESCAPED = (
    'A <tool_call>{\\"name\\": \\"f\\"}</tool_call> B, "q"\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>'
)
QWEN_NULLS = (
    "<tool_call>\n<function=set_reminder>\n<parameter=text>\nCall Anna\n</parameter>\n"
    "<parameter=note>\nnull\n</parameter>\n<parameter=minutes>\nNull\n</parameter>\n</function>\n</tool_call>"
)
GLM_NULL = (
    "<tool_call>set_reminder<arg_key>text</arg_key><arg_value>Stretch</arg_value>"
    "<arg_key>note</arg_key><arg_value>null</arg_value></tool_call>"
)
STRING_ARGS = '"{\\"timezone\\": \\"UTC\\"}"'


#: MiniCPM 5 with Python literals for a boolean and a nullable integer (both servers type them).
MINICPM_LITERALS = (
    '<function name="book_room"><param name="title">Standup</param><param name="room">None</param>'
    '<param name="projector">False</param></function>'
)
#: Shapes builtin reads under both conventions (docs/builtin-parsers.md, "Shapes models write").
SAME_UNDER_BOTH = [
    # (spec, output, tools, reading)
    (
        "builtin:hermes",
        QWEN_TWO_IN_ONE,
        None,
        (
            None,
            [("get_weather", {"location": "Paris"}, None), ("get_time", {"timezone": "Europe/Paris"}, None)],
        ),
    ),
    (
        "builtin:hermes",
        QWEN_TWO_IN_ONE.replace("}}\n{", "}},\n{"),
        None,
        (
            None,
            [("get_weather", {"location": "Paris"}, None), ("get_time", {"timezone": "Europe/Paris"}, None)],
        ),
    ),
    (
        "builtin:llama3_json",
        LLAMA_LIST,
        None,
        (
            None,
            [("get_weather", {"location": "Oslo"}, None), ("get_time", {"timezone": "Europe/Oslo"}, None)],
        ),
    ),
    (
        "builtin:llama3_json",
        '<|python_tag|>[{"name": "get_time", "parameters": {"timezone": "UTC"}}]',
        None,
        (None, [("get_time", {"timezone": "UTC"}, None)]),
    ),
    ("builtin:llama3_json", '[{"name": "Alice", "age": 30}]', None, ('[{"name": "Alice", "age": 30}]', [])),
    (
        "builtin:llama3_json",
        'Here is the record: {"name": "Alice", "age": 30}',
        ["get_weather"],
        ('Here is the record: {"name": "Alice", "age": 30}', []),
    ),
    ("builtin:json", '{"name": "Widget", "price": 9.5}', None, ('{"name": "Widget", "price": 9.5}', [])),
    (
        "builtin:hermes",
        OVER_ESCAPED,
        None,
        (
            'A <tool_call>{\\"name\\": \\"f\\"}</tool_call> B, "q"\n',
            [("get_time", {"timezone": "UTC"}, None)],
        ),
    ),
    (
        "builtin:hermes",
        OVER_ESCAPED.replace('{\\"name\\": \\"f\\"}', '{"name": "f", "arguments": {\\"a\\": 1}}'),
        None,
        (
            'A <tool_call>{"name": "f", "arguments": {\\"a\\": 1}}</tool_call> B, "q"\n',
            [("get_time", {"timezone": "UTC"}, None)],
        ),
    ),
    (
        "builtin:qwen3_coder",
        QWEN_NULLS,
        ["set_reminder"],
        (None, [("set_reminder", {"text": "Call Anna", "note": None, "minutes": None}, None)]),
    ),
    (
        "builtin:glm47",
        GLM_NULL,
        ["set_reminder"],
        (None, [("set_reminder", {"text": "Stretch", "note": None}, None)]),
    ),
    # Arguments written as a JSON string holding the object (both servers return the call with {}).
    (
        "builtin:hermes",
        f'Sure.\n<tool_call>\n{{"name": "get_time", "arguments": {STRING_ARGS}}}\n</tool_call>',
        None,
        ("Sure.\n", [("get_time", {"timezone": "UTC"}, None)]),
    ),
    (
        "builtin:llama3_json",
        f'{{"name": "get_time", "parameters": {STRING_ARGS}}}',
        None,
        (None, [("get_time", {"timezone": "UTC"}, None)]),
    ),
    (
        "builtin:mistral",
        f'[TOOL_CALLS][{{"name": "get_time", "arguments": {STRING_ARGS}}}]',
        None,
        (None, [("get_time", {"timezone": "UTC"}, None)]),
    ),
    (
        "builtin:minicpm5",
        MINICPM_LITERALS,
        ["book_room"],
        (None, [("book_room", {"title": "Standup", "room": None, "projector": False}, None)]),
    ),
    (
        "builtin:qwen3_coder",
        _ticket("qwen3_coder"),
        ["create_ticket"],
        (None, [("create_ticket", TICKET, None)]),
    ),
    ("builtin:minicpm5", _ticket("minicpm5"), ["create_ticket"], (None, [("create_ticket", TICKET, None)])),
    ("builtin:step3", _ticket("step3"), ["create_ticket"], (None, [("create_ticket", TICKET, None)])),
    # MiniCPM 5's CDATA section is a value's raw text up to its ``]]>``, tags included.
    (
        "builtin:minicpm5",
        _minicpm_file("<![CDATA[Close each value with </param>.\nThen </function>.]]>"),
        ["write_file"],
        (
            None,
            [
                (
                    "write_file",
                    {"path": "m.md", "content": "Close each value with </param>.\nThen </function>."},
                    None,
                )
            ],
        ),
    ),
    (
        "builtin:minicpm5",
        _minicpm_file("Use <![CDATA[<param name=]]> per key."),
        ["write_file"],
        (None, [("write_file", {"path": "m.md", "content": "Use <param name= per key."}, None)]),
    ),
    # A value's own open tag in its text, no example after it: its close ends it (as before).
    (
        "builtin:glm45",
        GLM_OPEN_IN_VALUE,
        ["write_file"],
        (None, [("write_file", {"content": "Values follow <arg_value> tags.", "path": "g.md"}, None)]),
    ),
    # Both servers read a GLM value up to its ``</arg_value>``: a key tag inside it is its text.
    (
        "builtin:glm45",
        _glm_file(GLM_KEY_IN_VALUE),
        ["write_file"],
        (None, [("write_file", {"path": "g.md", "content": GLM_KEY_IN_VALUE}, None)]),
    ),
    (
        "builtin:glm45",
        _glm_file(GLM_KEY_IN_VALUE, sep=""),
        ["write_file"],
        (None, [("write_file", {"path": "g.md", "content": GLM_KEY_IN_VALUE}, None)]),
    ),
]


@pytest.mark.parametrize(("name", "doc"), DSML_DOCS)
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_dsml_tags_inside_a_string_value_are_its_text(name: str, doc: str, conventions: str) -> None:
    """vLLM ends such a value at the tag (and reads the rest as calls, parameters or content), SGLang
    reads no call at all: no reading both servers share, so both conventions read the value whole."""
    render = deepseek_v32.dsml_renderer(DSML_TAGS[name])
    text = "Saving it.\n\n" + render([("write_file", {"path": "dsml.md", "content": doc})])
    assert _read(f"builtin:{name}", conventions, text, ["write_file"]) == (
        "Saving it.\n\n",
        [("write_file", {"path": "dsml.md", "content": doc}, None)],
    )


@pytest.mark.parametrize("name", sorted(DSML_TAGS))
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_a_dsml_call_written_inside_a_value_is_its_text(name: str, conventions: str) -> None:
    """A whole DSML invoke written in a string value as an example (a model writing a parser's
    test): its parameter's close tag is the value's text too, since the value's own close follows
    (before, the value ended there and the rest was content)."""
    render = deepseek_v32.dsml_renderer(DSML_TAGS[name])
    example = render([("get_weather", {"location": "Paris", "days": "3"})])
    example = example[
        example.index(DSML_TAGS[name].invoke_open) : example.rindex(DSML_TAGS[name].invoke_close)
    ]
    doc = f"Example:\n{example}{DSML_TAGS[name].invoke_close}\nEnd."
    text = render([("write_file", {"path": "t.md", "content": doc}), ("get_time", {"timezone": "UTC"})])
    assert _read(f"builtin:{name}", conventions, text, ["write_file", "get_weather", "get_time"]) == (
        None,
        [("write_file", {"path": "t.md", "content": doc}, None), ("get_time", {"timezone": "UTC"}, None)],
    )


@pytest.mark.parametrize(("spec", "text", "tools", "reading"), SAME_UNDER_BOTH)
@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_shapes_read_whole_under_both_conventions(
    spec: str, text: str, tools: list[str] | None, reading: Reading, conventions: str
) -> None:
    assert _read(spec, conventions, text, tools) == reading


def test_an_over_escaped_block_is_released_at_its_end() -> None:
    """A backslash outside a JSON string is no JSON: the block ends at its end marker, and the
    stream shows it there, not at the end of the output (held to the end, a long answer after
    such a block would be held whole)."""
    text = OVER_ESCAPED + " The time follows." * 200
    stream = pb.get_tool_parser("builtin:hermes").stream()
    block_end = text.index("</tool_call>") + len("</tool_call>")
    shown = "".join(stream.feed(ch).content or "" for ch in text[: block_end + 4])
    assert shown.startswith(text[:block_end])


def test_a_nullable_string_keeps_other_text_and_streams_it() -> None:
    """Only the text ``null`` is null: "None" and "nullable" stay the strings they are."""
    text = QWEN_NULLS.replace("\nnull\n", "\nnullable\n").replace("\nNull\n", "\n5\n")
    assert _read("builtin:qwen3_coder", "servers", text, ["set_reminder"]) == (
        None,
        [("set_reminder", {"text": "Call Anna", "note": "nullable", "minutes": 5}, None)],
    )


def test_mistral_calls_carry_the_models_id_or_one_mistral_accepts() -> None:
    text = (
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"location": "Lyon"}'
        '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}'
    )
    parser = pb.get_tool_parser("builtin:mistral")
    assert_streams_like_oneshot(parser, text, _token_chunkings(text))
    for result in (parser.parse(text), run_stream(parser, list(text))[0]):
        first, second = result.tool_calls
        assert first.id == "a1B2c3D4e"
        assert len(second.id) == 9 and second.id.isalnum() and second.id.isascii()


@pytest.mark.parametrize(("spec", "text", "tools", "servers", "lossless"), CASES)
def test_each_convention_reads_the_output(
    spec: str, text: str, tools: list[str] | None, servers: Reading | None, lossless: Reading
) -> None:
    assert _read(spec, "lossless", text, tools) == lossless
    if servers is not None:
        assert _read(spec, "servers", text, tools) == servers


@pytest.mark.parametrize(("spec", "text"), [("builtin:qwen3_coder", QWEN_DOC), ("builtin:glm45", GLM_DOC)])
def test_servers_end_a_value_where_both_servers_do(spec: str, text: str) -> None:
    """Both servers' patterns stop a value at the first tag that may end it: "servers" too (the
    rest of the block is left out, on `dropped`), and its stream agrees with its one-shot parse."""
    got = pb.get_tool_parser(spec, tools=catalogue_tools("write_file")).parse(text)
    assert "</tool_call>" not in got.tool_calls[0].arguments["content"]
    assert got.dropped
    _read(spec, "servers", text, ["write_file"])


def test_gemma4_servers_end_the_block_inside_a_string() -> None:
    """Both servers end the block at its end marker inside the string (and return the call with the
    arguments read so far); under "servers" builtin ends it there too, and a call whose arguments
    never closed is no call (`whole_calls`): the block is text."""
    got = pb.get_tool_parser("builtin:gemma4").parse(GEMMA_DOC)
    assert (got.content, got.tool_calls, got.dropped) == (GEMMA_DOC, [], None)
    _read("builtin:gemma4", "servers", GEMMA_DOC)


def test_a_builtin_tool_message_is_left_out() -> None:
    header = "<|channel|>analysis to=python code<|message|>"  # (it names the tool: left out with the body)
    text = header + "print(2 ** 10)<|call|>"
    for conventions in ("servers", "lossless"):
        read = pb.get_tool_parser("builtin:gpt_oss", conventions=conventions).parse(text)
        assert (read.content, read.tool_calls, read.dropped) == (None, [], header + "print(2 ** 10)")


@pytest.mark.parametrize("conventions", ["servers", "lossless"])
def test_magistral_plain_think(conventions: str) -> None:
    """Magistral's first releases think in plain-text ``<think>``: "lossless" reads it; both servers
    (and so "servers") read only ``[THINK]``."""
    text = "<think>The user wants a haiku.</think>Autumn wind rises"
    parser = pb.get_reasoning_parser("builtin:mistral", conventions=conventions)
    one = parser.parse(text)
    stream = parser.stream()
    shown = [stream.feed(piece) for piece in approximate_tokens(text)]
    done = stream.finish()
    assert (done.reasoning, done.content) == (one.reasoning, one.content)
    assert "".join(d.content for d in shown) == (one.content or "")[: len("".join(d.content for d in shown))]
    if conventions == "lossless":
        assert (one.reasoning, one.content) == ("The user wants a haiku.", "Autumn wind rises")
    else:
        assert (one.reasoning, one.content) == (None, text)


def test_kimi_k2_reasoning_keeps_an_end_marker_inside_a_call() -> None:
    """After reasoning ended, a later ``</think>`` is dropped from the content, but not inside the
    tool section: there it is a call's text."""
    args = '{"path": "k.md", "content": "Close with </think>."}'
    text = (
        "<think>plan</think>Stray </think>end.<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
        f"<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
    )
    pipe = pb.get_pipeline("builtin:kimi_k2", "builtin:kimi_k2")
    got = pipe.parse(text)
    assert (got.reasoning, got.content) == ("plan", "Stray end.")
    assert got.tool_calls[0].arguments["content"] == "Close with </think>."
    stream = pb.get_reasoning_parser("builtin:kimi_k2").stream()
    for piece in approximate_tokens(text):
        stream.feed(piece)
    assert stream.finish().content == pb.get_reasoning_parser("builtin:kimi_k2").parse(text).content


#: Parameters typed by their values alone (no ``type``): an enum of strings, of integers, of booleans,
#: and an ``allOf`` holding the type.
ENUM_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "set_mode",
            "parameters": {
                "type": "object",
                "properties": {
                    "mode": {"enum": ["1", "2"]},
                    "level": {"enum": [1, 2]},
                    "on": {"enum": [True, False]},
                    "tag": {"allOf": [{"type": "string"}]},
                },
            },
        },
    }
]
ENUM_ARGS = {"mode": "1", "level": "2", "on": "True", "tag": "42"}
ENUM_READ = {"mode": "1", "level": 2, "on": True, "tag": "42"}


@pytest.mark.parametrize(
    ("family", "servers"),
    [
        ("qwen3_coder", ENUM_READ),  # (both servers type these values by the enum: "servers" too)
        ("glm45", ENUM_READ),
        ("minimax_m2", ENUM_READ),
        ("step3", ENUM_ARGS),  # (both servers keep a value without a `type` text)
    ],
)
def test_a_value_is_typed_by_its_enum_where_the_schema_has_no_type(
    family: str, servers: dict[str, Any]
) -> None:
    text = tool_format(family).render([("set_mode", ENUM_ARGS)])
    for conventions, want in (("lossless", ENUM_READ), ("servers", servers)):
        parser = pb.get_tool_parser(f"builtin:{family}", tools=ENUM_TOOLS, conventions=conventions)
        got = assert_streams_like_oneshot(parser, text, _token_chunkings(text))
        assert [(c.name, c.arguments) for c in got.tool_calls] == [("set_mode", want)], conventions

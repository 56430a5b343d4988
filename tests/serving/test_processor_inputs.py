"""What a server hands `OutputProcessor` by mistake: a chunk that is not text (None, bytes, a
number), in delta or cumulative mode, with parsers or without; outputs and finish reasons that
do not pair up. Each is refused, typed and naming the mistake, never passed on or dropped."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from _convention import check_convention

import parsebridge as pb
from parsebridge.serving import OutputProcessor

TOOLS = [{"name": "f", "parameters": {"type": "object"}}]
SPECS = [("builtin:qwen3", "builtin:hermes"), (None, "builtin:hermes"), (None, None)]


@pytest.mark.parametrize("cumulative", [False, True])
@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize("specs", SPECS)
@pytest.mark.parametrize("chunk", [None, b"", b"hi", 5])
def test_a_chunk_that_is_not_text_is_refused_and_the_stream_goes_on(
    chunk: object, specs: tuple[str | None, str | None], policy: str, cumulative: bool
) -> None:
    """Not the parser's failure (no BackendError blaming it), not content, not silently nothing."""
    proc = OutputProcessor(
        *specs, tools=TOOLS, on_error=policy, cumulative=cumulative, reasoning_started=False
    )
    stream = proc.stream()
    with pytest.raises(
        pb.InvalidInputError,
        match=f"takes each chunk of the model's output as str, not {type(chunk).__name__}",
    ):
        stream.feed(chunk)  # type: ignore[arg-type]
    chunks = stream.feed("ok") + stream.finish("stop")
    assert check_convention(chunks)["content"] == "ok"  # the role chunk first, as ever


def test_outputs_and_finish_reasons_that_do_not_pair_up_are_refused() -> None:
    proc = OutputProcessor(None, None)
    with pytest.raises(ValueError, match=r"2 outputs but 1 finish reasons: give one per output"):
        proc.response(["a", "b"], ["stop"])
    with pytest.raises(ValueError, match=r"no output: a chat completion has at least one choice"):
        proc.response([])
    assert [c["finish_reason"] for c in proc.response(["a", "b"], "length")["choices"]] == ["length"] * 2


@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize(
    ("kwargs", "refused"),
    [
        ({"enable_thinking": "no"}, "chat_template_kwargs\\['enable_thinking'\\]='no'"),
        ({"enable_thinking": "false"}, "chat_template_kwargs\\['enable_thinking'\\]='false'"),
        ({"thinking": "off", "x": 1}, "chat_template_kwargs\\['thinking'\\]='off'"),
        ({"enable_thinking": 0}, "chat_template_kwargs\\['enable_thinking'\\]=0"),
    ],
)
def test_a_request_thinking_switch_that_is_no_boolean_is_refused(
    kwargs: dict[str, object], refused: str, policy: str
) -> None:
    """``chat_template_kwargs={"enable_thinking": "no"}`` left thinking on: a non-empty string is
    truthy (as a chat template reads it), so the answer came back as reasoning. Refused as
    ``reasoning_started="false"`` is, naming the value; booleans and None still work."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", on_error=policy)
    with pytest.raises(pb.UnsupportedOptionError, match=refused + ": it is True, False or None"):
        proc.request(chat_template_kwargs=kwargs)
    with pytest.raises(pb.UnsupportedOptionError, match=refused):
        proc.parse("plain answer", chat_template_kwargs=kwargs)
    off = proc.parse("plain answer", chat_template_kwargs={"enable_thinking": False, "x": None})
    assert off.message["content"] == "plain answer"


@pytest.mark.parametrize("outputs", [5, 2.5, {"output": "a"}])
def test_outputs_that_are_neither_text_nor_a_list_of_it_are_invalid_input(outputs: Any) -> None:
    """A number was a bare TypeError ("'int' object is not iterable"), a dict its keys read as outputs."""
    with pytest.raises(pb.InvalidInputError, match=r"response\(\) takes the model's output as str, not"):
        OutputProcessor("builtin:qwen3", "builtin:hermes").response(outputs)


@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize(
    ("request_options", "refused"),
    [
        ({"prompt": b"<think>\n"}, "prompt=b'<think>\\\\n': the prompt is its text, a str"),
        ({"prompt": 5}, "prompt=5: the prompt is its text, a str"),
        ({"prompt_token_ids": "<think>"}, "prompt_token_ids='<think>': the prompt's token ids are a list"),
        ({"reasoning_started": "false"}, "reasoning_started='false': it is True, False or None"),
    ],
)
def test_a_request_start_option_of_the_wrong_type_is_refused_when_the_request_is_made(
    request_options: dict[str, object], refused: str, policy: str
) -> None:
    """`request(prompt=b"...")` went to the parser unchecked: `BackendError` blaming builtin:qwen3
    (AttributeError: 'bytes'... rfind), and under fallback the output as content, its reasoning
    lost; prompt_token_ids="<think>" was read as a list of characters. A parser's own parse
    refuses these with UnsupportedOptionError whatever on_error (docs/python-api.md)."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", on_error=policy)
    with pytest.raises(pb.UnsupportedOptionError, match=refused):
        proc.request(**request_options)  # type: ignore[arg-type]
    with pytest.raises(pb.UnsupportedOptionError, match=refused):
        proc.parse("why</think>answer", **request_options)
    assert proc.request(prompt="<think>\n").parse("why</think>answer").message["reasoning_content"] == "why"


@pytest.mark.parametrize("cumulative", [False, True])
@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize("ids", [5, "notids", ["a"], [None]])
def test_token_ids_that_are_not_ids_are_refused_and_the_stream_goes_on(
    ids: object, policy: str, cumulative: bool
) -> None:
    """`feed(text, token_ids="notids")` was taken silently (builtin parsers ignore ids; a vLLM parser
    blamed itself, and under fallback the rest of the output became content)."""
    proc = OutputProcessor(
        "builtin:qwen3", "builtin:hermes", tools=TOOLS, on_error=policy, cumulative=cumulative
    )
    stream = proc.stream()
    with pytest.raises(pb.InvalidInputError, match=r"takes token_ids as a list of ints or None, not "):
        stream.feed("</think>ok", ids)  # type: ignore[arg-type]
    chunks = stream.feed("</think>ok", [1, 2]) + stream.finish("stop")
    assert check_convention(chunks)["content"] == "ok"


@pytest.mark.parametrize("drive", ["sse", "asse"])
@pytest.mark.parametrize("output", [None, 5, ("text", None, "stop"), b"xy"])
def test_an_engine_output_sse_cannot_read_ends_the_stream_in_band(output: object, drive: str) -> None:
    """`sse([..., None])` raised a bare `TypeError: cannot unpack non-iterable NoneType object` out of
    the SSE generator (a server's response then ends with no error event and no [DONE])."""
    stream = OutputProcessor("builtin:qwen3", "builtin:hermes").stream()
    outputs = ["</think>ok", output]
    if drive == "sse":
        lines = list(stream.sse(outputs))  # type: ignore[arg-type]
    else:

        async def engine() -> Any:
            for item in outputs:
                yield item

        async def collect() -> list[str]:
            return [line async for line in stream.asse(engine())]

        lines = asyncio.run(collect())
    assert lines[-1] == "data: [DONE]\n\n"
    error = json.loads(lines[-2].removeprefix("data: "))["error"]
    assert error["message"].startswith("sse() takes each engine output as an EngineOutput, a str or a")
    assert error["type"] == "internal_error"  # the server's mistake, not a parser's


@pytest.mark.parametrize(
    ("setting", "refused"),
    [
        ({"cumulative": "no"}, "cumulative must be True or False, not 'no'"),
        ({"native": "no"}, "native must be True or False, not 'no'"),
        ({"named_finish_reason": "stp"}, "named_finish_reason must be one of None, 'tool_calls', 'stop'"),
        ({"reasoning_started": "false"}, "reasoning_started must be one of None, True, False, not 'false'"),
        ({"cache_size": -1}, "cache_size must be a whole number of parser sets to keep"),
        ({"cache_size": "64"}, "cache_size must be a whole number of parser sets to keep"),
        ({"model": None}, "model must be a non-empty str, not None"),
        ({"reasoning_key": ""}, "reasoning_key must be a non-empty str, not ''"),
        ({"on_error": "fallbak"}, "on_error must be one of 'raise', 'fallback', not 'fallbak'"),
    ],
)
def test_a_processor_setting_it_cannot_use_is_refused_when_it_is_built(
    setting: dict[str, object], refused: str
) -> None:
    """They were read loosely on every request: cumulative="no" (truthy) read each delta as the whole
    text, a named_finish_reason typo went to every client, cache_size=-1 failed each request with a
    bare KeyError, model=None answered "model": null. The typo'd on_error was a plain ValueError."""
    with pytest.raises(pb.InvalidSpecError, match=f"OutputProcessor: {re.escape(refused)}") as info:
        OutputProcessor("builtin:qwen3", "builtin:hermes", tools=TOOLS, **setting)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "built",
    [
        lambda: OutputProcessor(reasoning_parser="builtin:qwen3"),  # a typo of reasoning=
        lambda: OutputProcessor(tool_parser="hermes", tools=TOOLS),
        lambda: OutputProcessor(
            None, pb.get_tool_parser("builtin:hermes", tools=TOOLS), conventions="lossless"
        ),
    ],
)
def test_options_no_parser_spec_would_read_are_refused(built: Any) -> None:
    """Options go to the parsers a processor builds from specs. With none, a typo of a setting
    built a processor with no parser (every output plain content) without a word."""
    with pytest.raises(pb.UnknownOptionError, match=r"OutputProcessor \(no parser spec to pass them to\)"):
        built()
    # with a spec to take them they are read (and a parser's own options are still checked there)
    assert OutputProcessor("builtin:qwen3", conventions="lossless").reasoning_parser is not None


@pytest.mark.parametrize("policy", ["raise", "fallback"])
@pytest.mark.parametrize(
    ("sources", "role", "given"),
    [
        ((["builtin:qwen3"], "builtin:hermes"), "reasoning", "list"),
        (("builtin:qwen3", ["builtin:hermes"]), "tool", "list"),
        ((3, None), "reasoning", "int"),
        ((None, {"name": "hermes"}), "tool", "dict"),
    ],
)
def test_a_parser_source_that_is_no_spec_and_no_parser_is_refused_when_it_is_built(
    sources: tuple[object, object], role: str, given: str, policy: str
) -> None:
    """A list or a number was taken as a parser object: the processor was built, and each request
    failed as a parser's failure (BackendError blaming "python:list") or, under fallback, answered
    the whole output as content; a dict as the tool parser read no call, unsaid."""
    with pytest.raises(
        pb.InvalidSpecError, match=f"OutputProcessor: {role}= is a config string .* not {given}"
    ):
        OutputProcessor(*sources, tools=TOOLS, on_error=policy)  # type: ignore[arg-type]
    parser = pb.get_tool_parser("builtin:hermes", tools=TOOLS)  # a parser object is still taken
    assert OutputProcessor(None, parser.inner).specs == (None, "builtin:hermes")


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_a_tool_choice_of_no_openai_form_is_refused_with_or_without_tools(tools: object) -> None:
    """Without tools, tool_choice="requird" was read as "none"; with them it was a plain ValueError,
    which a server catching ParsebridgeError for a 400 missed."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes")
    with pytest.raises(
        pb.UnsupportedOptionError, match=r"tool_choice='requird': it is 'none', 'auto', 'required'"
    ):
        proc.request(tools=tools, tool_choice="requird")  # type: ignore[arg-type]
    with pytest.raises(pb.UnsupportedOptionError, match="needs the request's tools"):
        proc.request(tools=None, tool_choice="required")


def test_request_arguments_of_the_wrong_type_are_refused_typed() -> None:
    """Each was a bare TypeError from deep inside (`'int' object is not iterable`, `'<' not supported
    between instances of 'str' and 'int'`, `cannot convert dictionary update sequence`), which a
    server catching ParsebridgeError to answer 400 did not catch; n=True was read as n=1."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", tools=TOOLS)
    refused = pb.UnsupportedOptionError
    with pytest.raises(refused, match=r"finish_reason=5: the engine's finish reason is a str or None"):
        proc.response("</think>ok", 5)  # type: ignore[arg-type]
    with pytest.raises(refused, match=r"finish_reason=5"):
        proc.response(["a", "b"], ["stop", 5])  # type: ignore[list-item]
    with pytest.raises(refused, match=r"chat_template_kwargs=\[1\]: a dict"):
        proc.request(chat_template_kwargs=[1])  # type: ignore[arg-type]
    for n in ("2", True, 0):
        with pytest.raises(refused, match=r"n must be at least 1, a whole number of choices"):
            proc.stream(n=n)  # type: ignore[arg-type]
    stream = proc.stream(n=2)
    with pytest.raises(refused, match=r"index='0': a choice index is an int below n=2"):
        stream.feed("ok", index="0")  # type: ignore[arg-type]
    with pytest.raises(refused, match=r"finish_reason=5"):
        stream.finish(5)  # type: ignore[arg-type]
    chunks = stream.feed("</think>ok", index=0) + stream.finish("stop", index=0)
    assert check_convention(chunks)["content"] == "ok"


TWO_CALLS = (
    '</think>Sure.<tool_call>{"name": "f", "arguments": {"city": "Paris"}}</tool_call>'
    '<tool_call>{"name": "f", "arguments": {"city": "Rome"}}</tool_call>'
)


@pytest.mark.parametrize("per", [1, 3, 1000])
@pytest.mark.parametrize(
    ("tool_choice", "output"),
    [
        ("auto", TWO_CALLS),
        ("required", '</think>[{"name": "f", "parameters": {"a": 1}}, {"name": "f", "parameters": {}}]'),
    ],
)
def test_parallel_tool_calls_false_sends_the_first_call_only(per: int, tool_choice: str, output: str) -> None:
    """`request(parallel_tool_calls=False)`, what an OpenAI request body carries, was a TypeError
    (unexpected keyword); vLLM's server then keeps the first call, one-shot and streamed."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", tools=TOOLS)
    request = {"tool_choice": tool_choice, "parallel_tool_calls": False}
    message, finish = proc.message(output, **request)
    stream = proc.stream(**request)
    chunks = [c for i in range(0, len(output), per) for c in stream.feed(output[i : i + per])]
    streamed = check_convention(chunks + stream.finish("stop"))
    assert finish == "tool_calls" and len(message["tool_calls"]) == 1
    assert [(c["name"], c["arguments"]) for c in streamed["tool_calls"]] == [
        ("f", json.loads(message["tool_calls"][0]["function"]["arguments"]))
    ]
    assert len(proc.message(output, tool_choice=tool_choice, parallel_tool_calls=True)[0]["tool_calls"]) == 2
    with pytest.raises(pb.UnsupportedOptionError, match="parallel_tool_calls='no'"):
        proc.request(parallel_tool_calls="no")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "typo", "nearest"),
    [
        (lambda proc, kw: proc.parse("x", **kw), "tool_choise", "tool_choice"),
        (lambda proc, kw: proc.message("x", **kw), "reasoning_startd", "reasoning_started"),
        (lambda proc, kw: proc.response("x", **kw), "modle", "model"),
        (lambda proc, kw: proc.stream(**kw), "tool", "tools"),
    ],
)
def test_a_misspelt_request_keyword_names_the_call_and_the_nearest(
    call: Any, typo: str, nearest: str
) -> None:
    """It was Python's TypeError naming ``OutputProcessor.request()``, which the caller never called,
    with no hint; now `UnknownOptionError` (a TypeError still) names the call and the nearest."""
    proc = OutputProcessor("builtin:qwen3", "builtin:hermes", tools=TOOLS)
    with pytest.raises(
        pb.UnknownOptionError,
        match=rf"OutputProcessor\.\w+\(\) takes no option '{typo}'. Did you mean '{nearest}'\?",
    ):
        call(proc, {typo: None})

"""Spec resolution, errors that teach, the python backend and the failure policy."""

import logging

import pytest

import parsebridge as pb
from parsebridge.adapters import registry


@pytest.fixture
def fake_backends(monkeypatch):
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "fakefw", "_userparsers:FakeFrameworkBackend")
    monkeypatch.setitem(registry.KNOWN_BACKENDS, "missingfw", "_userparsers:MissingFrameworkBackend")
    registry._reset_caches()
    yield
    registry._reset_caches()


def test_names_match_after_normalising_case_and_dashes(fake_backends):
    assert pb.get_tool_parser("fakefw:KIMI_K2").name == "kimi-k2"
    assert pb.get_reasoning_parser("fakefw:deepseek_r1").name == "deepseek-r1"


def test_family_names_and_aliases_resolve_to_each_backends_own_name(fake_backends, monkeypatch):
    table = pb.load_table(
        '[tool.hermes]\naliases=["qwen"]\nfakefw="qwen25"\n[tool.llama3_json]\nfakefw="llama3"\n'
        '[reasoning.r1]\nfakefw="deepseek-r1"\n'
    )
    monkeypatch.setattr(registry, "family_table", lambda: table)
    assert pb.get_tool_parser("fakefw:hermes").name == "qwen25"
    assert pb.get_tool_parser("fakefw:qwen").name == "qwen25"
    assert pb.get_tool_parser("fakefw:llama3-json").name == "llama3"
    assert pb.get_reasoning_parser("fakefw:r1").name == "deepseek-r1"


def test_unknown_parser_lists_what_exists_and_suggests(fake_backends):
    with pytest.raises(pb.UnknownParserError) as info:
        pb.get_tool_parser("fakefw:qwen2")
    err = info.value
    assert err.backend == "fakefw" and "qwen25" in err.available
    assert "qwen25" in err.suggestions
    assert "Did you mean" in str(err) and "llama3" in str(err)


def test_unknown_parser_offers_no_family_the_release_cannot_build(fake_backends, monkeypatch):
    """A family mapped to a parser this release lacks (vLLM 0.11: minimax_m2) is not suggested."""
    table = pb.load_table('[tool.minimax_m2]\nfakefw="minimax-m2"\n[tool.hermes]\nfakefw="qwen25"\n')
    monkeypatch.setattr(registry, "family_table", lambda: table)
    with pytest.raises(pb.UnknownParserError) as info:
        pb.get_tool_parser("fakefw:minimax_m2")
    assert "minimax_m2" not in info.value.available and "hermes" in info.value.available


@pytest.mark.parametrize(
    ("kind", "spec", "other"),
    [("tool", "builtin:qwen3", "reasoning"), ("reasoning", "builtin:hermes", "tool")],
)
def test_a_parser_of_the_other_kind_is_named_as_such(kind, spec, other):
    """`--tool-parser builtin:qwen3` (a reasoning parser) was answered with near tool names only
    ("Did you mean 'qwen3_xml'?"), which sends the user to the wrong parser."""
    get = pb.get_tool_parser if kind == "tool" else pb.get_reasoning_parser
    with pytest.raises(pb.UnknownParserError) as info:
        get(spec)
    name = spec.split(":")[1]
    assert info.value.other_kind == other
    assert f"{name!r} is a {other} parser: give it as one (--{other}-parser" in str(info.value)
    with pytest.raises(pb.UnknownParserError) as typo:
        get("builtin:hermse" if kind == "tool" else "builtin:qwen4")
    assert typo.value.other_kind is None and "is a" not in str(typo.value)


def test_unknown_backend_suggests(fake_backends):
    with pytest.raises(pb.UnknownBackendError) as info:
        pb.get_tool_parser("vlm:hermes")
    assert "vllm" in info.value.suggestions
    assert "builtin" in str(info.value)


@pytest.mark.parametrize("name", [None, ["vllm"], 3])
def test_get_backend_of_no_string_is_a_typed_error(name):
    """It was a bare AttributeError ('NoneType' object has no attribute 'lower')."""
    with pytest.raises(
        pb.InvalidSpecError, match=f"a backend name is a string such as 'vllm' .*not {type(name).__name__}"
    ):
        pb.get_backend(name)


def test_get_backend_of_a_spec_says_what_takes_a_spec():
    with pytest.raises(
        pb.UnknownBackendError, match="'builtin:hermes' is a parser spec: get_backend takes the part before"
    ):
        pb.get_backend("builtin:hermes")


def test_missing_framework_names_package_and_install_command(fake_backends):
    with pytest.raises(pb.BackendNotInstalledError) as info:
        pb.get_tool_parser("missingfw:qwen25")
    assert info.value.package == "surely-not-installed"
    assert "pip install surely-not-installed" in str(info.value)
    listed = {i.name: i for i in pb.list_backends()}
    assert not listed["missingfw"].available and listed["fakefw"].available
    assert listed["fakefw"].tool_parsers == ["kimi-k2", "llama3", "qwen25"]


def test_errors_share_one_base_class():
    for cls in (
        pb.UnknownBackendError,
        pb.UnknownParserError,
        pb.BackendNotInstalledError,
        pb.BackendError,
        pb.InvalidSpecError,
        pb.ParserProtocolError,
    ):
        assert issubclass(cls, pb.ParsebridgeError)


# ---------------------------------------------------------------- python backend


def test_python_backend_loads_a_base_subclass():
    tp = pb.get_tool_parser("python:_userparsers:CallLine")
    res = tp.parse('hello\nCALL f {"a": 1}\nbye\n')
    assert res.content == "hello\nbye\n"
    assert [(c.name, c.arguments) for c in res.tool_calls] == [("f", {"a": 1})]
    assert tp.has_tool_calls("CALL x") and not tp.has_tool_calls("nothing")
    assert isinstance(tp, pb.DynamoToolCallParser)
    assert tp.format_tool_result("call_1", {"ok": True}) == '{"ok": true}'


def test_python_backend_adapts_a_plain_class_with_parse():
    tp = pb.get_tool_parser("python:_userparsers:OnlyParse")
    assert tp.parse("abc").content == "ABC"
    stream = tp.stream()
    stream.feed("ab")
    stream.feed("c")
    assert stream.finish().content == "ABC"


def test_python_backend_reports_missing_methods():
    with pytest.raises(pb.ParserProtocolError) as info:
        pb.get_tool_parser("python:_userparsers:NoParse")
    assert info.value.missing == ["parse"]
    assert "missing parse" in str(info.value) and "parse_tool_calls" in str(info.value)


def test_python_backend_accepts_exactly_the_seed_tool_protocol():
    """A class with only parse_tool_calls/has_tool_calls/format_tool_result gets parse and stream derived."""
    tp = pb.get_tool_parser("python:_userparsers:SeedToolParser")
    text = 'hello\nCALL f {"a": 1}\nbye\n'
    res = tp.parse(text)
    assert res.content == "hello\nbye\n"
    assert [(c.name, c.arguments) for c in res.tool_calls] == [("f", {"a": 1})]
    assert [c.name for c in tp.parse_tool_calls(text)] == ["f"]
    assert tp.has_tool_calls("CALL x") and not tp.has_tool_calls("nothing")
    assert tp.format_tool_result("call_1", 5) == "RESULT call_1: 5"
    stream = tp.stream()
    for piece in (text[:7], text[7:15], text[15:]):
        stream.feed(piece)
    final = stream.finish()
    assert final.content == "hello\nbye\n" and [c.arguments for c in final.tool_calls] == [{"a": 1}]


def test_seed_tool_protocol_without_raw_text_keeps_calls_and_no_guessed_content():
    res = pb.get_tool_parser("python:_userparsers:SeedDictToolParser").parse("x CALL y")
    assert res.content is None and [(c.name, c.arguments) for c in res.tool_calls] == [("f", {"a": 1})]
    assert pb.get_tool_parser("python:_userparsers:SeedDictToolParser").parse("plain").content == "plain"


def test_python_backend_accepts_exactly_the_seed_reasoning_protocol():
    rp = pb.get_reasoning_parser("python:_userparsers:SeedReasoningParser")
    r = rp.parse("<r>think</r>answer")
    assert (r.reasoning, r.content) == ("think", "answer")
    assert r.block is not None and (r.block.start_index, r.block.end_index) == (0, 12)
    assert rp.parse("no reasoning").content == "no reasoning" and rp.parse("no reasoning").reasoning is None
    assert rp.has_reasoning("<r>") and rp.parse_reasoning("<r>a</r>").content == "a"
    stream = rp.stream()
    for piece in ("<r>th", "ink</", "r>ans", "wer"):
        stream.feed(piece)
    assert stream.finish().content == "answer"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("python:_userparsers:Nope", "has no class 'Nope'"),
        ("python:no_such_module_abc:X", "cannot import module"),
    ],
)
def test_python_backend_load_errors_say_what_failed(spec, needle):
    with pytest.raises(pb.InvalidSpecError, match=needle):
        pb.get_tool_parser(spec)


def test_buffered_default_stream_equals_one_shot():
    tp = pb.get_tool_parser("python:_userparsers:CallLine")
    text = 'a\nCALL f {"x": [1, 2]}\nb\nCALL g\n'
    stream = tp.stream()
    for ch in text:
        stream.feed(ch)
    streamed = stream.finish()
    oneshot = tp.parse(text)
    assert streamed.content == oneshot.content
    assert [(c.name, c.arguments) for c in streamed.tool_calls] == [
        (c.name, c.arguments) for c in oneshot.tool_calls
    ]


def test_stream_refuses_feed_after_finish():
    stream = pb.get_tool_parser("python:_userparsers:CallLine").stream()
    stream.finish()
    with pytest.raises(pb.StreamStateError):
        stream.feed("x")


def test_two_streams_never_share_state():
    tp = pb.get_tool_parser("python:_userparsers:CallLine")
    a, b = tp.stream(), tp.stream()
    a.feed("CALL f\n")
    b.feed("just text")
    assert a.finish().tool_calls[0].name == "f"
    assert b.finish().content == "just text"


# ---------------------------------------------------------------- failure policy


def test_raise_policy_wraps_with_backend_parser_and_cause():
    tp = pb.get_tool_parser("python:_userparsers:Explodes")
    with pytest.raises(pb.BackendError) as info:
        tp.parse("x", transcript="t-1")
    err = info.value
    assert (err.backend, err.parser, err.call, err.transcript) == ("python", "explodes", "parse", "t-1")
    assert isinstance(err.__cause__, ZeroDivisionError)


def test_fallback_policy_keeps_text_as_content_and_logs(caplog):
    tp = pb.get_tool_parser("python:_userparsers:Explodes", on_error="fallback")
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        res = tp.parse("<tool_call>{}</tool_call>", transcript="req-7")
    assert res.content == "<tool_call>{}</tool_call>" and res.tool_calls == []
    assert "python:explodes" in caplog.text and "req-7" in caplog.text


def test_mid_stream_failure_leaves_stream_usable_and_loses_nothing():
    tp = pb.get_tool_parser("python:_userparsers:ExplodesMidStream", on_error="fallback")
    stream = tp.stream(transcript="req-9")
    shown = [stream.feed(c).content for c in ["abc", "de", "f!g", "hi"]]
    shown.append(stream.flush().content)
    assert stream.broken
    assert "".join(shown) == "abcdef!ghi"
    assert stream.finish().content == "abcdef!ghi"


def test_mid_stream_failure_raises_typed_error_by_default():
    stream = pb.get_tool_parser("python:_userparsers:ExplodesMidStream").stream()
    stream.feed("ab")
    with pytest.raises(pb.BackendError) as info:
        stream.feed("!")
    assert info.value.call == "stream.feed" and isinstance(info.value.__cause__, KeyError)


def test_failure_at_finish_falls_back_or_raises_typed():
    """`finish()` on a healthy stream is the inner stream's own; a failure in it is a failing flush."""
    ok = pb.get_tool_parser("python:_userparsers:ExplodesAtEnd").stream()
    ok.feed("abc")
    assert ok.finish().content == "abc" and not ok.broken
    soft = pb.get_tool_parser("python:_userparsers:ExplodesAtEnd", on_error="fallback").stream()
    assert soft.feed("ab?").content == "ab"
    result = soft.finish()
    assert soft.broken and result.content == "ab?"  # the held text is released, nothing lost
    assert soft.finish().content == "ab?" and soft.flush().content == ""
    hard = pb.get_tool_parser("python:_userparsers:ExplodesAtEnd").stream()
    hard.feed("ab?")
    with pytest.raises(pb.BackendError) as info:
        hard.finish()
    assert info.value.call == "stream.flush" and isinstance(info.value.__cause__, ValueError)


def test_bad_policy_name_is_rejected():
    with pytest.raises(ValueError, match="on_error"):
        pb.get_tool_parser("python:_userparsers:CallLine", on_error="ignore")  # type: ignore[arg-type]


# ---------------------------------------------------------------- pipeline


def test_pipeline_chains_reasoning_then_tools_one_shot_and_streamed():
    pipe = pb.get_pipeline("python:_userparsers:Colon", "python:_userparsers:CallLine")
    text = 'thinking hard::Sure.\nCALL f {"a": 1}\n'
    one = pipe.parse(text)
    assert one.reasoning == "thinking hard" and one.content == "Sure.\n"
    assert one.tool_calls[0].arguments == {"a": 1}
    stream = pipe.stream()
    for i in range(0, len(text), 3):
        stream.feed(text[i : i + 3])
    streamed = stream.finish()
    assert (streamed.reasoning, streamed.content) == (one.reasoning, one.content)
    assert [c.arguments for c in streamed.tool_calls] == [{"a": 1}]
    assert pipe.specs == ("python:colon", "python:call_line")


def test_pipeline_needs_at_least_one_parser():
    with pytest.raises(pb.InvalidSpecError):
        pb.get_pipeline()
    # the specs given under other names (the CLI's spellings) went to the options unnamed
    with pytest.raises(
        pb.InvalidSpecError, match=r"\(reasoning=\.\.\., tool=\.\.\.\); tool_parser= is no spec"
    ):
        pb.get_pipeline(tool_parser="builtin:hermes")


@pytest.mark.parametrize("kind", ["tools", "Tool", "", None])
def test_parser_names_refuses_a_kind_it_does_not_know(kind):
    """``parser_names("builtin", "tools")`` listed the reasoning parsers: any kind but "tool" read as one."""
    with pytest.raises(pb.InvalidSpecError, match="expected 'tool' or 'reasoning'"):
        pb.parser_names("builtin", kind)
    assert "hermes" in pb.parser_names("builtin", "tool") and "qwen3" in pb.parser_names(
        "builtin", "reasoning"
    )


def test_a_python_subclass_that_names_itself_nothing_has_its_config_string_as_spec():
    """A subclass without a `name` of its own was ``python:ReturnsDict``: no config string loads
    that, errors named it, and two classes of one name in two modules shared it."""
    tp = pb.get_tool_parser("python:_userparsers:ReturnsDict")
    assert tp.spec == "python:_userparsers:ReturnsDict"
    assert pb.get_tool_parser(tp.spec).spec == tp.spec  # the spec loads again
    rp = pb.get_reasoning_parser("python:_userparsers:ReturnsNothing")
    assert rp.spec == "python:_userparsers:ReturnsNothing"
    with pytest.raises(pb.BackendError, match=r"^python:_userparsers:ReturnsNothing raised in parse"):
        rp.parse("x")
    assert pb.get_tool_parser("python:_userparsers:CallLine").spec == "python:call_line"  # its own name

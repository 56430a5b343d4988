"""`python:module:Class` with faults in the user's code: a module that raises on import, a class
that cannot be built, a `parse` that returns something other than a result. Each is a typed
error that names the spec and what failed (a usage error: the CLI's exit 2), or for a wrong
result the failure policy (raise: `BackendError`; fallback: the text as content)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.cli.commands import main


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on the Python path for the module a test writes (forgotten by import after)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("faulty_parsers", None)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ('raise RuntimeError("no licence key")\n', "RuntimeError: no licence key (line 1 of "),
        ("def broken(:\n", "SyntaxError: invalid syntax"),
        (
            "import json\n\nSETTINGS = json.loads('{')\n",
            "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1) (line 3 of ",
        ),
    ],
)
def test_a_module_that_fails_on_import_is_a_spec_error_naming_it(
    user_folder: Path, source: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (user_folder / "faulty_parsers.py").write_text(source)
    with pytest.raises(pb.InvalidSpecError) as caught:
        pb.get_tool_parser("python:faulty_parsers:Mine")
    message = str(caught.value)
    assert message.startswith("python:faulty_parsers:Mine: importing module 'faulty_parsers' raised ")
    assert said in message and caught.value.__cause__ is not None
    sys.modules.pop("faulty_parsers", None)
    (user_folder / "out.txt").write_text("hello")
    assert main(["parse", "--tool-parser", "python:faulty_parsers:Mine", str(user_folder / "out.txt")]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import sys\n\nsys.exit(3)\n", "importing module 'faulty_parsers' called sys.exit(3) (line 3 of "),
        (
            "import sys\n\nclass Mine:\n    def __init__(self):\n        sys.exit()\n"
            "    def parse(self, text):\n        return None\n",
            "Mine() called sys.exit()",
        ),
        (
            "class Mine:\n    def __init__(self, tools=None):\n        raise SystemExit('no key')\n"
            "    def parse(self, text):\n        return None\n",
            "Mine(tools=...) called sys.exit('no key')",
        ),
    ],
)
def test_a_module_or_constructor_that_exits_is_a_spec_error_naming_it(
    user_folder: Path, source: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sys.exit(n)` in the user's module or constructor ended the CLI with status n and no word
    (and the caller's program, through the API): now it is reported as a raising one is."""
    (user_folder / "faulty_parsers.py").write_text(source)
    with pytest.raises(pb.InvalidSpecError) as caught:
        pb.get_tool_parser("python:faulty_parsers:Mine")
    assert str(caught.value).startswith(f"python:faulty_parsers:Mine: {said}")
    assert isinstance(caught.value.__cause__, SystemExit)
    sys.modules.pop("faulty_parsers", None)
    (user_folder / "out.txt").write_text("hello")
    assert main(["parse", "--tool-parser", "python:faulty_parsers:Mine", str(user_folder / "out.txt")]) == 2
    assert f"error: python:faulty_parsers:Mine: {said}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (
            "python:_userparsers:NeedsSetting",
            "python:_userparsers:NeedsSetting: NeedsSetting(tools=...) raised TypeError: ",
        ),
        (
            "python:_userparsers:FailsToBuild",
            "python:_userparsers:FailsToBuild: FailsToBuild() raised OSError: cannot open its grammar file",
        ),
    ],
)
def test_a_class_that_cannot_be_built_is_a_spec_error_naming_it(spec: str, said: str) -> None:
    with pytest.raises(pb.InvalidSpecError) as caught:
        pb.get_tool_parser(spec)
    assert str(caught.value).startswith(said), caught.value
    assert pb.get_tool_parser("python:_userparsers:NeedsSetting", setting="x").inner.setting == "x"


def test_a_parse_that_returns_no_result_fails_under_the_policy(caplog: pytest.LogCaptureFixture) -> None:
    said = "TypeError: ReturnsDict.parse returned a dict, not a ToolParseResult"
    strict = pb.get_tool_parser("python:_userparsers:ReturnsDict")
    with pytest.raises(pb.BackendError, match=said):
        strict.parse("hi")
    stream = strict.stream()
    stream.feed("hi")
    with pytest.raises(pb.BackendError, match=said):
        stream.finish()
    with pytest.raises(pb.BackendError, match=said):  # was: AttributeError ('dict' … 'tool_calls')
        strict.has_tool_calls("hi")
    soft = pb.get_tool_parser("python:_userparsers:ReturnsDict", on_error="fallback")
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        result = soft.parse("hi")
    assert isinstance(result, pb.ToolParseResult) and result.content == "hi"
    assert said in caplog.text


def test_a_reasoning_parse_that_returns_none_fails_under_the_policy() -> None:
    said = "TypeError: ReturnsNothing.parse returned None, not a ReasoningParseResult"
    with pytest.raises(pb.BackendError, match=said):
        pb.get_reasoning_parser("python:_userparsers:ReturnsNothing").parse("hi")
    result = pb.get_reasoning_parser("python:_userparsers:ReturnsNothing", on_error="fallback").parse("hi")
    assert isinstance(result, pb.ReasoningParseResult) and result.content == "hi"


@pytest.mark.parametrize(
    "make",
    [
        lambda: pb.get_tool_parser("python:_userparsers:ReturnsDict", on_error="fallback").stream(),
        lambda: pb.get_reasoning_parser("python:_userparsers:ReturnsNothing", on_error="fallback").stream(),
        lambda: pb.get_pipeline(None, "python:_userparsers:ReturnsDict", on_error="fallback").stream(),
    ],
)
def test_a_buffered_stream_whose_parse_fails_at_the_end_falls_back_to_all_it_was_fed(make) -> None:
    """A parser with only `parse` streams buffered: its one parse runs at the end. When that parse
    failed under fallback the stream gave back nothing: the whole output was lost."""
    stream = make()
    fed = [stream.feed(chunk) for chunk in ("Hello ", "there", ".")]
    assert not any(d.content for d in fed)  # nothing shown before the end, as buffered streams do
    assert stream.flush().content == "Hello there."
    assert stream.finish().content == "Hello there."


def test_a_buffered_stream_holds_what_it_was_fed_against_max_held() -> None:
    """`max_held` bounds what a stream holds back; a buffered stream holds all of it, and was never
    measured (it said nothing of what it held)."""
    stream = pb.get_tool_parser("python:_userparsers:ReturnsDict", max_held=8).stream()
    stream.feed("12345")
    with pytest.raises(pb.BufferLimitError, match="holds back 10 > 8"):
        stream.feed("67890")
    soft = pb.get_tool_parser("python:_userparsers:ReturnsDict", max_held=8, on_error="fallback").stream()
    shown = "".join(soft.feed(chunk).content for chunk in ("12345", "67890", "abc"))
    assert shown + soft.flush().content == "1234567890abc"


def test_parse_says_when_it_fell_back(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`parse --on-error fallback` showed a failed parser's text as content and said nothing: the
    library logs the fallback, and the CLI left the log unread."""
    out = tmp_path / "out.txt"
    out.write_text("Hello", encoding="utf-8")
    for stream in ([], ["--stream"]):
        spec = ["--tool-parser", "python:_userparsers:ReturnsDict", "--on-error", "fallback"]
        assert main(["parse", *spec, *stream, "--json", str(out)]) == 0
        printed, err = capsys.readouterr()
        assert '"content": "Hello"' in printed
        assert err.startswith("warning: parser error, falling back to plain content: ")
        assert "ReturnsDict.parse returned a dict" in err


def test_a_reasoning_block_placed_outside_the_text_fails_under_the_policy() -> None:
    """`parse` derived from `parse_reasoning` cut the content at the block's indices; indices that
    are no place in the text gave no content at all, and the text was lost without a word."""
    spec = "python:_userparsers:SeedMisplacedBlock"
    with pytest.raises(pb.BackendError, match=r"a block at \[15, 2\), outside the text's 5 characters"):
        pb.get_reasoning_parser(spec).parse("hello")
    assert pb.get_reasoning_parser(spec, on_error="fallback").parse("hello").content == "hello"


@pytest.mark.parametrize("on_error", ["raise", "fallback"])
def test_a_stream_method_that_returns_no_stream_is_a_typed_error(on_error: str) -> None:
    """An AttributeError ('NoneType' has no attribute 'feed') escaped untyped, under either policy."""
    parser = pb.get_tool_parser("python:_userparsers:StreamIsNone", on_error=on_error)
    with pytest.raises(
        pb.BackendError, match=r"stream\(\) returned None, not a stream \(it has no feed or flush\)"
    ):
        parser.stream()


def test_a_stream_whose_feed_returns_no_delta_fails_under_the_policy() -> None:
    """The guard recorded the str as a delta outside its policy: an untyped AttributeError."""
    with pytest.raises(pb.BackendError, match=r"raised in stream\.feed"):
        pb.get_tool_parser("python:_userparsers:FeedsText").stream().feed("Hello")
    soft = pb.get_tool_parser("python:_userparsers:FeedsText", on_error="fallback").stream()
    assert soft.feed("Hello").content == "Hello" and soft.feed(" there").content == " there"
    assert soft.finish().content == "Hello there"


def test_a_parser_that_calls_sys_exit_fails_under_the_policy(caplog: pytest.LogCaptureFixture) -> None:
    """A `SystemExit` from a parser's call ended the process (a whole server, not one request):
    the guard caught only `Exception`. Now it is the parser's failure, as any exception is."""
    said = r"python:_userparsers:CallsExit raised in {}: SystemExit: 3"
    strict = pb.get_tool_parser("python:_userparsers:CallsExit")
    with pytest.raises(pb.BackendError, match=said.format("parse")):
        strict.parse("hi")
    with pytest.raises(pb.BackendError, match=said.format("has_tool_calls")):
        strict.has_tool_calls("hi")
    stream = strict.stream()
    assert stream.feed("ab").content == "a"
    with pytest.raises(pb.BackendError, match=said.format(r"stream\.feed")):
        stream.feed("c!")
    soft = pb.get_tool_parser("python:_userparsers:CallsExit", on_error="fallback")
    with caplog.at_level(logging.WARNING, logger="parsebridge"):
        assert soft.parse("hi").content == "hi"
        soft_stream = soft.stream()
        deltas = [soft_stream.feed("ab"), soft_stream.feed("c!"), soft_stream.feed("d")]
        result = soft_stream.finish()
    assert "".join(d.content or "" for d in deltas) == "abc!d"
    assert result.content == "abc!d"  # nothing lost: what it held and what came after, as content
    assert "SystemExit: 3" in caplog.text

"""Issue 40, item 1: a keyword option the parser does not take fails the same way on every backend.

One typed error (`UnknownOptionError`, a `TypeError` and an `InvalidSpecError`) that names the
option, the options the parser takes and the nearest one, raised before anything is built.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge import UnknownOptionError


def _error(call) -> UnknownOptionError:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownOptionError) as info:
        call()
    err = info.value
    assert isinstance(err, TypeError) and isinstance(err, pb.InvalidSpecError)
    return err


def test_builtin_tool_parser_refuses_a_misspelt_tools() -> None:
    err = _error(lambda: pb.get_tool_parser("builtin:hermes", tool=[]))
    assert err.unknown == ["tool"] and "tools" in err.accepted
    assert "takes no option 'tool'. Did you mean 'tools'?" in str(err)
    assert "Options it takes: chat_template_kwargs, conventions, max_held, on_error" in str(err)


def test_builtin_refuses_any_unknown_option_and_names_them_all() -> None:
    err = _error(lambda: pb.get_tool_parser("builtin:hermes", bogus_option=1))
    assert "builtin:hermes takes no option 'bogus_option'." in str(err) and "Did you mean" not in str(err)
    err = _error(lambda: pb.get_reasoning_parser("builtin:think", strat="<r>", ned="</r>"))
    assert "options 'strat', 'ned'" in str(err) and "'start' for 'strat'" in str(err)


def test_builtin_options_it_reads_still_work() -> None:
    rp = pb.get_reasoning_parser(
        "builtin:think", start="<r>", end="</r>", started=False, conventions="servers"
    )
    assert rp.parse("<r>why</r>so").reasoning == "why"
    tp = pb.get_tool_parser("builtin:hermes", tools=[], tool_choice="auto", chat_template_kwargs={})
    assert tp.parse("hi").content == "hi"


def test_a_timeout_parser_is_checked_before_its_worker_starts() -> None:
    _error(lambda: pb.get_tool_parser("builtin:hermes", timeout=5, tool=[]))


def test_a_pipeline_splits_options_and_refuses_what_neither_parser_takes() -> None:
    pipe = pb.get_pipeline("builtin:qwen3", "builtin:hermes", started=False)  # reasoning's option only
    assert pipe.parse("hi").content == "hi"
    err = _error(lambda: pb.get_pipeline("builtin:qwen3", "builtin:hermes", promt="x"))
    assert "the pipeline builtin:qwen3 + builtin:hermes takes no option 'promt'" in str(err)
    assert "Did you mean 'prompt'?" in str(err)


def test_python_backend_refuses_what_the_class_constructor_does_not_take(tmp_path: Path) -> None:
    (tmp_path / "opt_parsers.py").write_text(
        textwrap.dedent(
            """
            class Fixed:
                def __init__(self, tools=None, level=1):
                    self.level = level
                def parse(self, text):
                    return {"content": text * self.level, "tool_calls": []}
            """
        ),
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        assert pb.get_tool_parser("python:opt_parsers:Fixed", level=2).parse("a").content == "aa"
        # what parsebridge's server layer passes with a request is dropped for a class without it
        assert pb.get_tool_parser("python:opt_parsers:Fixed", tool_choice="auto").parse("a").content == "a"
        err = _error(lambda: pb.get_tool_parser("python:opt_parsers:Fixed", levle=2))
        assert "python:opt_parsers:Fixed takes no option 'levle'. Did you mean 'level'?" in str(err)
        # a class that takes **kwargs takes anything
        assert pb.get_tool_parser("python:_userparsers:CallLine", anything=1).parse("x").content == "x"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("opt_parsers", None)


@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_framework_backends_raise_the_same_typed_error(framework: str) -> None:
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed (parsebridge install-framework {framework}-latest)")
    from parsebridge.adapters.registry import resolve

    own = resolve("tool", f"{framework}:hermes")[1]  # the release's name (SGLang 0.4 has only qwen25)
    err = _error(lambda: pb.get_tool_parser(f"{framework}:hermes", tool=[]))
    assert f"{framework}:{own} takes no option 'tool'. Did you mean 'tools'?" in str(err)
    err = _error(lambda: pb.get_reasoning_parser(f"{framework}:qwen3", bogus_option=1))
    assert "takes no option 'bogus_option'" in str(err) and "tokenizer" in err.accepted


@pytest.mark.parametrize(
    ("module", "engine"),
    [
        ("parsebridge.adapters.vllm._engine", "VllmEngine"),
        ("parsebridge.adapters.sglang._engine", "SglangEngine"),
    ],
)
def test_framework_option_lists_are_their_engines_keywords(module: str, engine: str) -> None:
    framework = module.split(".")[2]
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} is not installed (parsebridge install-framework {framework}-latest)")
    cls = getattr(importlib.import_module(module), engine)
    keywords = {n for n, p in inspect.signature(cls).parameters.items() if p.kind is p.KEYWORD_ONLY} - {
        "tools"
    }
    backend = pb.get_backend(framework)
    assert set(backend.tool_options) == keywords
    assert set(backend.reasoning_options) - {"prompt", "prompt_token_ids"} == keywords


def test_started_on_a_parser_that_does_not_take_it_points_at_reasoning_started() -> None:
    """``started=`` is builtin's build-time default; given to a parser without it (another
    backend's, a tool parser) the error listed options and said nothing of reasoning_started=."""
    with pytest.raises(
        pb.UnknownOptionError,
        match=r"'started' is an option of builtin reasoning parsers.*reasoning_started=",
    ):
        pb.get_tool_parser("builtin:hermes", started=True)

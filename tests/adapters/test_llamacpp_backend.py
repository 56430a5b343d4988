"""The `llamacpp:` backend through the built harness: readings, streams, templates, crashes.

Needs a harness (``parsebridge install-framework llamacpp-latest``); the tox envs
``llamacpp-*`` build one.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

import parsebridge as pb
from _forking import said_in_fork
from parsebridge.adapters.registry import get_backend
from parsebridge.protocol import BackendError, UnsupportedOptionError

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]

if not get_backend("llamacpp").is_available():
    pytest.skip(
        f"no llama.cpp harness: {get_backend('llamacpp').unavailable_reason()}", allow_module_level=True
    )

from parsebridge.adapters.llamacpp import _harness, _templates  # noqa: E402  (after the skip)

#: llama.cpp builds its parsers from the tools' schemas: a parameter must be declared to be read.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = 'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _reading(r: Any) -> tuple[Any, ...]:
    return r.content, [(c.name, c.arguments) for c in r.tool_calls]


def _snapshot() -> _templates.Snapshot:
    snap = _templates.snapshot()
    assert snap is not None
    return snap


def test_names_are_the_shipped_templates() -> None:
    names = get_backend("llamacpp").tool_parser_names()
    assert "NousResearch-Hermes-3-Llama-3.1-8B-tool_use" in names
    assert names == _snapshot().template_names()


def test_compare_by_family_names_the_column_by_the_family() -> None:
    """``compare --family hermes`` shows a ``llamacpp:hermes`` column; the template is in details."""
    text = CALL.replace("Paris", "Oslo")
    result = pb.compare(text, family="hermes", backends=["builtin", "llamacpp"], chunkings=["oneshot"])
    assert result.comparisons[0].specs == ["builtin:hermes", "llamacpp:hermes"]
    reading = result.comparisons[0].results["llamacpp:hermes"]["oneshot"]
    assert reading.status == "ok"
    template = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use"
    assert template in result.summary.details["llamacpp:hermes"]
    assert "builtin:hermes" not in result.summary.details


def test_hermes_one_shot_and_streamed() -> None:
    parser = pb.get_tool_parser("llamacpp:hermes", TOOLS)
    assert parser.name == "NousResearch-Hermes-3-Llama-3.1-8B-tool_use"
    result = parser.parse(CALL)
    assert result.content == "Let me check."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    stream = parser.stream()
    for ch in CALL:  # one token per step, as llama-server steps
        stream.feed(ch)
    final = stream.finish()
    assert final.content == "Let me check."
    assert [(c.name, c.arguments) for c in final.tool_calls] == [("get_weather", {"city": "Paris"})]


def _streamed(texts: list[str], many: bool) -> tuple[list[Any], str | None]:
    """Every delta (as plain tuples) a hermes stream gives for `texts`, and the error that ended it."""
    stream = pb.get_tool_parser("llamacpp:hermes", TOOLS).stream()
    seen: list[Any] = []
    try:
        deltas = stream.feed_many(texts) if many else [stream.feed(t) for t in texts]
        deltas.append(stream.flush())
    except BackendError as exc:
        return seen, str(exc)
    for d in deltas:
        seen.append((d.content, d.reasoning, [(c.index, c.name, c.arguments) for c in d.tool_calls]))
    return seen, None


@pytest.mark.parametrize(
    "text",
    [CALL, CALL + CALL.replace("Paris", "Oslo"), "Sure.<tool_call>\nget_weather(city='Paris')\n</tool_call>"],
)
def test_a_stream_fed_all_at_once_gives_the_same_deltas_and_errors(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_harness, "WINDOW_BYTES", 300)  # many windows, each sent before its answers are read
    chars = list(text)
    assert _streamed(chars, many=True) == _streamed(chars, many=False)


def test_a_step_that_fails_in_a_batch_fails_it_as_feed_would() -> None:
    stream = pb.get_tool_parser("llamacpp:hermes", TOOLS).stream()
    stepper = stream._stepper  # type: ignore[attr-defined]
    stepper._harness.call({"op": "close", "stream": stepper._stream}, "test")  # the harness ends it
    with pytest.raises(BackendError, match="unknown stream"):
        stream.feed_many(["a", "b"])


def test_a_call_streams_its_name_first_then_argument_fragments() -> None:
    stream = pb.get_tool_parser("llamacpp:hermes", TOOLS).stream()
    calls = [d for ch in CALL for d in (stream.feed(ch).tool_calls or [])]
    calls += stream.flush().tool_calls or []
    assert calls[0].name == "get_weather" and calls[0].id
    assert all(c.name is None for c in calls[1:])
    assert json.loads("".join(c.arguments for c in calls)) == {"city": "Paris"}


def test_reasoning_follows_enable_thinking() -> None:
    parser = pb.get_reasoning_parser("llamacpp:qwen3")
    text = "2+2 is 4</think>The answer is 4."
    on = parser.parse("<think>" + text, reasoning_started=True)
    assert (on.reasoning, on.content) == ("2+2 is 4", "The answer is 4.")
    off = parser.parse("<think>2+2 is 4</think>The answer is 4.", reasoning_started=False)
    assert off.content is not None


@pytest.mark.parametrize("kwargs", ["enable_thinking", ["enable_thinking"], {"enable_thinking": "true"}])
def test_chat_template_kwargs_the_server_refuses_are_refused_typed(kwargs: Any) -> None:
    """Not a dict (was a bare ValueError from dict()), or a string enable_thinking (llama-server:
    'invalid type for "enable_thinking"'; was rendered with the string, read as thinking on)."""
    for build in (
        lambda: pb.get_tool_parser("llamacpp:qwen3_coder", TOOLS, chat_template_kwargs=kwargs),
        lambda: pb.get_reasoning_parser("llamacpp:qwen3", chat_template_kwargs=kwargs),
    ):
        with pytest.raises(UnsupportedOptionError, match="chat_template_kwargs"):
            build()


def test_pipeline_reads_reasoning_and_calls_in_one_pass() -> None:
    pipe = pb.get_pipeline("llamacpp:qwen3_coder", "llamacpp:qwen3_coder", tools=TOOLS)
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    result = pipe.parse(text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_a_template_file_and_a_tokenizer_folder(tmp_path: Path) -> None:
    source = (_snapshot().templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja").read_text()
    (tmp_path / "t.jinja").write_text(source)
    by_file = pb.get_tool_parser(f"llamacpp:{tmp_path / 't.jinja'}", TOOLS).parse(CALL)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": source, "bos_token": "<|begin_of_text|>"})
    )
    by_folder = pb.get_tool_parser(f"llamacpp:{folder}", TOOLS).parse(CALL)
    by_name = pb.get_tool_parser("llamacpp:hermes", TOOLS).parse(CALL)
    assert (
        _reading(by_file)
        == _reading(by_folder)
        == _reading(by_name)
        == ("Let me check.", [("get_weather", {"city": "Paris"})])
    )


def test_a_tokenizer_folder_with_a_tool_use_template_reads_calls_with_it(tmp_path: Path) -> None:
    """Hermes 3's tokenizer_config.json names a plain ChatML ``default`` and a ``tool_use``
    template: a request with tools is rendered (and its parser built) from ``tool_use``."""
    tool_use = (_snapshot().templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja").read_text()
    chatml = (
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    )
    named = [{"name": "default", "template": chatml}, {"name": "tool_use", "template": tool_use}]
    config = {"chat_template": named, "bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    name = f"llamacpp:{tmp_path}"
    assert _reading(pb.get_tool_parser(name, TOOLS).parse(CALL)) == _reading(
        pb.get_tool_parser("llamacpp:hermes", TOOLS).parse(CALL)
    )
    assert pb.get_reasoning_parser(name).parse("Hi.").content == "Hi."  # no tools: the default


def test_a_parser_built_after_its_template_file_changed_uses_the_new_template(tmp_path: Path) -> None:
    path = tmp_path / "mine.jinja"
    path.write_text((_snapshot().templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja").read_text())
    assert _reading(pb.get_tool_parser(f"llamacpp:{path}", TOOLS).parse(CALL))[1] == [
        ("get_weather", {"city": "Paris"})
    ]
    path.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")  # no tool calls any more
    assert _reading(pb.get_tool_parser(f"llamacpp:{path}", TOOLS).parse(CALL)) == (CALL, [])


def test_a_template_that_does_not_render_is_a_backend_error(tmp_path: Path) -> None:
    (tmp_path / "bad.jinja").write_text("{% for %}")
    with pytest.raises(BackendError):
        pb.get_tool_parser(f"llamacpp:{tmp_path / 'bad.jinja'}", TOOLS).parse("hello")


def test_a_crashed_harness_is_an_error_then_a_new_harness() -> None:
    parser = pb.get_tool_parser("llamacpp:hermes", TOOLS)
    parser.parse(CALL)
    h = _harness.harness(_snapshot())
    watcher = h.server.launcher.pid  # the harness runs under parsebridge's parent-death watcher
    assert watcher is not None
    children = Path(f"/proc/{watcher}/task/{watcher}/children").read_text().split()
    pid = int(children[0])
    os.kill(pid, signal.SIGSEGV)  # as a crash in C++ ends it
    time.sleep(0.5)
    result = parser.parse(CALL)  # found dead before the request: restarted, sessions rendered again
    assert result.tool_calls[0].name == "get_weather"
    assert h.server.restarts >= 1 and h.server.launcher.pid != watcher


def test_first_use_after_the_harness_stopped_starts_it_again() -> None:
    """A parse after the harness was stopped starts a new one (how long that takes is a
    benchmark's business, not a timed unit test's)."""
    h = _harness.harness(_snapshot())
    h.server.stop()
    h._drop()
    res = pb.get_tool_parser("llamacpp:hermes", TOOLS).parse(CALL)
    assert [c.name for c in res.tool_calls] == ["get_weather"]


def test_a_stream_opened_before_a_restart_is_refused_not_fed_into_anothers() -> None:
    """The harness numbers its streams from the start again: a stream of the crashed harness
    stepped on the new one would feed the new stream with the same number (another thread's)."""
    parser = pb.get_tool_parser("llamacpp:hermes", TOOLS)
    old = parser.stream()
    old.feed("Let me")
    h = _harness.harness(_snapshot())
    watcher = h.server.launcher.pid
    assert watcher is not None
    children = Path(f"/proc/{watcher}/task/{watcher}/children").read_text().split()
    crashed = int(children[0])
    os.kill(crashed, signal.SIGSEGV)  # as a crash in C++ ends it
    deadline = time.monotonic() + 30  # gone (or a zombie) before the next stream opens
    while time.monotonic() < deadline and _running(crashed):
        time.sleep(0.05)
    assert not _running(crashed)
    rome = CALL.replace("Paris", "Rome")
    new = parser.stream()  # on the new harness: possibly the old stream's number
    new.feed(rome[:20])
    with pytest.raises(_harness.HarnessCrash, match="start a new stream"):
        old.feed(" check.")
    new.feed(rome[20:])
    assert _reading(new.finish()) == _reading(parser.parse(rome))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_stream_opened_before_a_fork_is_refused_in_the_child_saying_so() -> None:
    """The forked copy's step started a harness of its own and was then refused as if the
    harness had crashed ("the harness ended and was started again"): it is refused at once,
    saying the stream is the parent's, as Dynamo's and smg's streams are; the parent's goes on."""
    parser = pb.get_tool_parser("llamacpp:hermes", TOOLS)
    stream = parser.stream()
    stream.feed(CALL[:20])

    def step_in_the_copy() -> str:
        try:
            stream.feed(CALL[20:40])
        except pb.ServerUnavailableError as exc:
            return "refused" if "fork" in str(exc) else f"wrong message: {exc}"
        return "stepped"

    said = said_in_fork(step_in_the_copy)
    assert said == "refused"
    stream.feed(CALL[20:])
    assert _reading(stream.finish()) == _reading(parser.parse(CALL))


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (not gone, not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"

